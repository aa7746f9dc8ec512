package io.meterstore.storage;

import io.trino.filesystem.TrinoInputStream;
import org.apache.iceberg.io.SeekableInputStream;

import java.io.IOException;

import static java.util.Objects.requireNonNull;

/** An Iceberg {@link SeekableInputStream} over a {@link TrinoInputStream}. */
final class ForwardingSeekableInputStream
        extends SeekableInputStream
{
    private final TrinoInputStream stream;

    ForwardingSeekableInputStream(TrinoInputStream stream)
    {
        this.stream = requireNonNull(stream, "stream is null");
    }

    @Override
    public long getPos()
            throws IOException
    {
        return stream.getPosition();
    }

    @Override
    public void seek(long position)
            throws IOException
    {
        stream.seek(position);
    }

    @Override
    public int read()
            throws IOException
    {
        return stream.read();
    }

    @Override
    public int read(byte[] buffer, int offset, int length)
            throws IOException
    {
        return stream.read(buffer, offset, length);
    }

    @Override
    public byte[] readNBytes(int length)
            throws IOException
    {
        return stream.readNBytes(length);
    }

    @Override
    public int readNBytes(byte[] buffer, int offset, int length)
            throws IOException
    {
        return stream.readNBytes(buffer, offset, length);
    }

    @Override
    public long skip(long length)
            throws IOException
    {
        return stream.skip(length);
    }

    @Override
    public int available()
            throws IOException
    {
        return stream.available();
    }

    @Override
    public void close()
            throws IOException
    {
        stream.close();
    }
}
