package io.meterstore.storage;

import io.trino.filesystem.TrinoInputFile;
import org.apache.iceberg.exceptions.NotFoundException;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.SeekableInputStream;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.UncheckedIOException;

import static java.util.Objects.requireNonNull;

/** An Iceberg {@link InputFile} over a {@link TrinoInputFile}; a missing file is Iceberg's {@link NotFoundException}. */
public class ForwardingInputFile
        implements InputFile
{
    private final TrinoInputFile inputFile;

    public ForwardingInputFile(TrinoInputFile inputFile)
    {
        this.inputFile = requireNonNull(inputFile, "inputFile is null");
    }

    @Override
    public long getLength()
    {
        try {
            return inputFile.length();
        }
        catch (FileNotFoundException e) {
            throw new NotFoundException(e, "File does not exist: %s", location());
        }
        catch (IOException e) {
            throw new UncheckedIOException("Failed to get length of file: " + location(), e);
        }
    }

    @Override
    public SeekableInputStream newStream()
    {
        try {
            return new ForwardingSeekableInputStream(inputFile.newStream());
        }
        catch (FileNotFoundException e) {
            throw new NotFoundException(e, "Failed to open input stream for file: %s", location());
        }
        catch (IOException e) {
            throw new UncheckedIOException("Failed to open input stream for file: " + location(), e);
        }
    }

    @Override
    public String location()
    {
        return inputFile.location().toString();
    }

    @Override
    public boolean exists()
    {
        try {
            return inputFile.exists();
        }
        catch (IOException e) {
            throw new UncheckedIOException("Failed to check existence of file: " + location(), e);
        }
    }

    @Override
    public String toString()
    {
        return inputFile.toString();
    }
}
