package io.meterstore.storage;

import com.google.common.io.CountingOutputStream;
import io.trino.filesystem.TrinoFileSystem;
import io.trino.filesystem.TrinoOutputFile;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.PositionOutputStream;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;

import static java.util.Objects.requireNonNull;

/** An Iceberg {@link OutputFile} over a {@link TrinoOutputFile}. */
public class ForwardingOutputFile
        implements OutputFile
{
    private final TrinoFileSystem fileSystem;
    private final TrinoOutputFile outputFile;

    public ForwardingOutputFile(TrinoFileSystem fileSystem, TrinoOutputFile outputFile)
    {
        this.fileSystem = requireNonNull(fileSystem, "fileSystem is null");
        this.outputFile = requireNonNull(outputFile, "outputFile is null");
    }

    @Override
    public PositionOutputStream create()
    {
        try {
            return new CountingPositionOutputStream(outputFile.create());
        }
        catch (IOException e) {
            throw new UncheckedIOException("Failed to create file: " + location(), e);
        }
    }

    @Override
    public PositionOutputStream createOrOverwrite()
    {
        // Iceberg names every metadata and data file uniquely, so nothing it writes overwrites an existing file
        return create();
    }

    @Override
    public String location()
    {
        return outputFile.location().toString();
    }

    @Override
    public InputFile toInputFile()
    {
        return new ForwardingInputFile(fileSystem.newInputFile(outputFile.location()));
    }

    private static final class CountingPositionOutputStream
            extends PositionOutputStream
    {
        private final CountingOutputStream stream;

        private CountingPositionOutputStream(OutputStream stream)
        {
            this.stream = new CountingOutputStream(stream);
        }

        @Override
        public long getPos()
        {
            return stream.getCount();
        }

        @Override
        public void write(int value)
                throws IOException
        {
            stream.write(value);
        }

        @Override
        public void write(byte[] buffer, int offset, int length)
                throws IOException
        {
            stream.write(buffer, offset, length);
        }

        @Override
        public void flush()
                throws IOException
        {
            stream.flush();
        }

        @Override
        public void close()
                throws IOException
        {
            stream.close();
        }
    }
}
