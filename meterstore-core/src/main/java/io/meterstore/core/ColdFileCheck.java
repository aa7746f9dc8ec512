package io.meterstore.core;

import com.google.common.collect.ImmutableList;
import org.apache.iceberg.ContentFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Table;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.InputFile;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Whether every file the current snapshot references is there, as long as the snapshot records it. A data file deleted
 * or cut short by hand fails every query that reads it (never a short answer), and only a backup brings its rows back,
 * so the archiver's status names each one. One existence and length check per file, no data read.
 */
public final class ColdFileCheck
{
    private ColdFileCheck() {}

    /** One line per missing or damaged file, naming it and what is wrong; empty when all are intact. */
    public static List<String> damagedFiles(Table table)
    {
        if (table.currentSnapshot() == null) {
            return List.of();
        }
        ImmutableList.Builder<String> damaged = ImmutableList.builder();
        Set<String> checked = new HashSet<>();
        try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
            for (FileScanTask task : tasks) {
                Stream.concat(Stream.of(task.file()), task.deletes().stream())
                        .filter(file -> checked.add(file.location()))
                        .forEach(file -> damage(table, file).ifPresent(damaged::add));
            }
        }
        catch (IOException e) {
            throw new UncheckedIOException("Cannot list the files of Iceberg table '%s'".formatted(table.name()), e);
        }
        return damaged.build();
    }

    private static Optional<String> damage(Table table, ContentFile<?> file)
    {
        InputFile input = table.io().newInputFile(file.location());
        if (!input.exists()) {
            return Optional.of("'%s' does not exist".formatted(file.location()));
        }
        long length = input.getLength();
        if (length != file.fileSizeInBytes()) {
            return Optional.of("'%s' is %s bytes long, the snapshot records %s bytes: truncated or overwritten".formatted(file.location(), length, file.fileSizeInBytes()));
        }
        return Optional.empty();
    }
}
