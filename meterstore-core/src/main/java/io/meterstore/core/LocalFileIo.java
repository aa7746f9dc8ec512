package io.meterstore.core;

import org.apache.iceberg.Files;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Path;

/**
 * An Iceberg FileIO over local directories ({@code file:///...} or plain absolute paths), without Hadoop.
 * Iceberg ships local files only through its Hadoop FileIO.
 */
public class LocalFileIo
        implements FileIO
{
    @Override
    public InputFile newInputFile(String location)
    {
        return Files.localInput(path(location).toFile());
    }

    @Override
    public OutputFile newOutputFile(String location)
    {
        return Files.localOutput(path(location).toFile());
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
}
