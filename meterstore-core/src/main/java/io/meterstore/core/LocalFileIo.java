package io.meterstore.core;

import org.apache.iceberg.Files;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.PositionOutputStream;
import org.apache.iceberg.io.SeekableInputStream;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Path;

import static java.util.Objects.requireNonNull;

/**
 * An Iceberg FileIO over local directories ({@code file:///...} or plain absolute paths), without Hadoop.
 * Iceberg ships local files only through its Hadoop FileIO. Every file keeps the location it was asked for: the
 * catalogue stores what {@code location()} returns, and other engines (Trino) need the {@code file:} scheme.
 */
public class LocalFileIo
        implements FileIO
{
    @Override
    public InputFile newInputFile(String location)
    {
        return new LocalInputFile(location, Files.localInput(path(location).toFile()));
    }

    @Override
    public OutputFile newOutputFile(String location)
    {
        return new LocalOutputFile(location, Files.localOutput(path(location).toFile()));
    }

    @Override
    public void deleteFile(String location)
    {
        try {
            java.nio.file.Files.deleteIfExists(path(location));
        }
        catch (IOException e) {
            throw new UncheckedIOException("Cannot delete '%s'".formatted(location), e);
        }
    }

    public static Path path(String location)
    {
        if (location.startsWith("file:")) {
            return Path.of(URI.create(location.replace(" ", "%20")));
        }
        return Path.of(location);
    }

    private record LocalInputFile(String location, InputFile delegate)
            implements InputFile
    {
        LocalInputFile
        {
            requireNonNull(location, "location is null");
            requireNonNull(delegate, "delegate is null");
        }

        @Override
        public long getLength()
        {
            return delegate.getLength();
        }

        @Override
        public SeekableInputStream newStream()
        {
            return delegate.newStream();
        }

        @Override
        public boolean exists()
        {
            return delegate.exists();
        }
    }

    private record LocalOutputFile(String location, OutputFile delegate)
            implements OutputFile
    {
        LocalOutputFile
        {
            requireNonNull(location, "location is null");
            requireNonNull(delegate, "delegate is null");
        }

        @Override
        public PositionOutputStream create()
        {
            return delegate.create();
        }

        @Override
        public PositionOutputStream createOrOverwrite()
        {
            return delegate.createOrOverwrite();
        }

        @Override
        public InputFile toInputFile()
        {
            return new LocalInputFile(location, delegate.toInputFile());
        }
    }
}
