package io.meterstore.trino.cold;

import io.airlift.slice.Slice;
import io.meterstore.parquet.PositionDeleteRows;
import io.trino.filesystem.Location;
import io.trino.filesystem.TrinoFileSystem;
import io.trino.parquet.ParquetDataSource;
import io.trino.parquet.ParquetReaderOptions;
import io.trino.spi.TrinoException;
import org.apache.iceberg.deletes.Deletes;
import org.apache.iceberg.deletes.PositionDeleteIndex;
import org.apache.iceberg.io.CloseableIterable;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static io.airlift.slice.Slices.utf8Slice;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_COLD_READ_FAILED;

/**
 * The rows of one data file that Iceberg position delete files remove: read by {@link PositionDeleteRows}, the one
 * reader of delete files compaction uses too, through Trino's file system, and collected into Iceberg's own
 * {@link PositionDeleteIndex}.
 */
final class PositionDeletes
{
    private PositionDeletes() {}

    static PositionDeleteIndex load(TrinoFileSystem fileSystem, ParquetReaderOptions options, String dataFile, List<ColdDeleteFile> deleteFiles)
    {
        List<Long> positions = new ArrayList<>();
        Optional<Slice> target = Optional.of(utf8Slice(dataFile));
        for (ColdDeleteFile deleteFile : deleteFiles) {
            try (ParquetDataSource dataSource = new ColdParquetDataSource(fileSystem.newInputFile(Location.of(deleteFile.path()), deleteFile.fileSize()), deleteFile.fileSize(), options)) {
                PositionDeleteRows.read(dataSource, options, target, (_, position) -> positions.add(position));
            }
            catch (FileNotFoundException e) {
                throw new TrinoException(METERSTORE_COLD_READ_FAILED,
                        "Position delete file '%s' of the pinned snapshot does not exist: it was removed after the query planned (snapshot expiry or orphan-file cleanup); run the query again".formatted(deleteFile.path()), e);
            }
            catch (IOException | RuntimeException e) {
                if (e instanceof TrinoException trinoException) {
                    throw trinoException;
                }
                throw new TrinoException(METERSTORE_COLD_READ_FAILED, "Failed to read position delete file '%s' of data file '%s': %s".formatted(deleteFile.path(), dataFile, e.getMessage()), e);
            }
        }
        return Deletes.toPositionIndex(CloseableIterable.withNoopClose(positions));
    }
}
