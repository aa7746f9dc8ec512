package io.meterstore.storage;

import com.google.common.collect.AbstractIterator;
import com.google.common.collect.ImmutableMap;
import io.trino.filesystem.FileEntry;
import io.trino.filesystem.FileIterator;
import io.trino.filesystem.Location;
import io.trino.filesystem.TrinoFileSystem;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.FileInfo;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.SupportsPrefixOperations;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;

import static java.util.Objects.requireNonNull;

/**
 * Iceberg's {@link FileIO} over Trino's file system, so table metadata and manifests are read with the same
 * storage configuration, credentials and caches as the Parquet data. Translates exceptions and nothing else. Lists by
 * prefix (the archiver's orphan removal) through the file system's listing, which on S3 is ListObjectsV2.
 */
public class ForwardingFileIo
        implements FileIO, SupportsPrefixOperations
{
    private final TrinoFileSystem fileSystem;
    private final Map<String, String> properties;

    public ForwardingFileIo(TrinoFileSystem fileSystem)
    {
        this(fileSystem, ImmutableMap.of());
    }

    /**
     * @param properties the FileIO's properties, e.g. {@code io.manifest.cache-enabled}, which Iceberg reads from here
     */
    public ForwardingFileIo(TrinoFileSystem fileSystem, Map<String, String> properties)
    {
        this.fileSystem = requireNonNull(fileSystem, "fileSystem is null");
        this.properties = ImmutableMap.copyOf(requireNonNull(properties, "properties is null"));
    }

    @Override
    public Map<String, String> properties()
    {
        return properties;
    }

    @Override
    public InputFile newInputFile(String path)
    {
        return new ForwardingInputFile(fileSystem.newInputFile(Location.of(path)));
    }

    @Override
    public InputFile newInputFile(String path, long length)
    {
        return new ForwardingInputFile(fileSystem.newInputFile(Location.of(path), length));
    }

    @Override
    public OutputFile newOutputFile(String path)
    {
        return new ForwardingOutputFile(fileSystem, fileSystem.newOutputFile(Location.of(path)));
    }

    @Override
    public Iterable<FileInfo> listPrefix(String prefix)
    {
        return () -> {
            try {
                FileIterator files = fileSystem.listFiles(Location.of(prefix));
                return new AbstractIterator<>()
                {
                    @Override
                    protected FileInfo computeNext()
                    {
                        try {
                            if (!files.hasNext()) {
                                return endOfData();
                            }
                            FileEntry file = files.next();
                            // object stores keep no creation time: the last modification is when the object was written
                            return new FileInfo(file.location().toString(), file.length(), file.lastModified().toEpochMilli());
                        }
                        catch (IOException e) {
                            throw new UncheckedIOException("Failed to list files under: " + prefix, e);
                        }
                    }
                };
            }
            catch (IOException e) {
                throw new UncheckedIOException("Failed to list files under: " + prefix, e);
            }
        };
    }

    @Override
    public void deletePrefix(String prefix)
    {
        try {
            fileSystem.deleteDirectory(Location.of(prefix));
        }
        catch (IOException e) {
            throw new UncheckedIOException("Failed to delete files under: " + prefix, e);
        }
    }

    @Override
    public void deleteFile(String path)
    {
        try {
            fileSystem.deleteFile(Location.of(path));
        }
        catch (IOException e) {
            throw new UncheckedIOException("Failed to delete file: " + path, e);
        }
    }
}
