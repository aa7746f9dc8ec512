package io.meterstore.core;

import com.google.common.collect.ImmutableList;
import org.apache.iceberg.Files;
import org.apache.iceberg.io.FileInfo;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.PositionOutputStream;
import org.apache.iceberg.io.SeekableInputStream;
import org.apache.iceberg.io.SupportsPrefixOperations;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.FileVisitResult;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

import static java.util.Objects.requireNonNull;

/**
 * An Iceberg FileIO over local directories ({@code file:///...} or plain absolute paths), without Hadoop.
 * Iceberg ships local files only through its Hadoop FileIO. Every file keeps the location it was asked for: the
 * catalogue stores what {@code location()} returns, and other engines (Trino) need the {@code file:} scheme. Listing a
 * prefix, which orphan-file removal needs, returns {@code file:} URIs for a {@code file:} prefix and paths otherwise.
 */
public class LocalFileIo
        implements SupportsPrefixOperations
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

    /** Every file under the directory {@code prefix} names, with its size and last modification as its creation time. */
    @Override
    public Iterable<FileInfo> listPrefix(String prefix)
    {
        Path directory = path(prefix);
        boolean uri = prefix.startsWith("file:");
        ImmutableList.Builder<FileInfo> files = ImmutableList.builder();
        try {
            java.nio.file.Files.walkFileTree(directory, new SimpleFileVisitor<>()
            {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attributes)
                {
                    if (attributes.isRegularFile()) {
                        String location = uri ? file.toUri().toString() : file.toString();
                        files.add(new FileInfo(location, attributes.size(), attributes.lastModifiedTime().toMillis()));
                    }
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFileFailed(Path file, IOException e)
                        throws IOException
                {
                    // deleted while the walk ran: it is not there to list
                    if (e instanceof NoSuchFileException) {
                        return FileVisitResult.CONTINUE;
                    }
                    throw e;
                }
            });
        }
        catch (NoSuchFileException e) {
            return List.of();
        }
        catch (IOException e) {
            throw new UncheckedIOException("Cannot list '%s'".formatted(prefix), e);
        }
        return files.build();
    }

    @Override
    public void deletePrefix(String prefix)
    {
        Path directory = path(prefix);
        if (!java.nio.file.Files.exists(directory)) {
            return;
        }
        try (Stream<Path> paths = java.nio.file.Files.walk(directory)) {
            for (Path each : paths.sorted(Comparator.reverseOrder()).toList()) {
                java.nio.file.Files.deleteIfExists(each);
            }
        }
        catch (IOException e) {
            throw new UncheckedIOException("Cannot delete '%s'".formatted(prefix), e);
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
