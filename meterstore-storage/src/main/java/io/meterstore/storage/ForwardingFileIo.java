package io.meterstore.storage;

import com.google.common.collect.ImmutableMap;
import io.trino.filesystem.Location;
import io.trino.filesystem.TrinoFileSystem;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;

import static java.util.Objects.requireNonNull;

/**
 * Iceberg's {@link FileIO} over Trino's file system, so table metadata and manifests are read with the same
 * storage configuration, credentials and caches as the Parquet data. Translates exceptions and nothing else.
 */
public class ForwardingFileIo
        implements FileIO
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
