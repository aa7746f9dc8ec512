package io.meterstore.storage;

import io.trino.filesystem.local.LocalFileSystem;
import org.apache.iceberg.exceptions.NotFoundException;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.PositionOutputStream;
import org.apache.iceberg.io.SeekableInputStream;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

final class TestForwardingFileIo
{
    @Test
    void testRoundTripThroughAbsoluteFileUris()
            throws IOException
    {
        Path directory = Files.createTempDirectory("meterstore-fileio-");
        // Iceberg hands out locations as file:///abs/path (and Hadoop-style file:/abs/path); both reach the same file
        String location = directory.toUri() + "metadata/v1.metadata.json";
        FileIO fileIo = new ForwardingFileIo(new LocalFileSystem(Path.of("/")));

        OutputFile outputFile = fileIo.newOutputFile(location);
        try (PositionOutputStream stream = outputFile.create()) {
            stream.write("meterstore".getBytes(UTF_8));
            assertThat(stream.getPos()).isEqualTo(10);
        }
        assertThat(Files.readString(directory.resolve("metadata/v1.metadata.json"))).isEqualTo("meterstore");
        assertThat(outputFile.location()).isEqualTo(location);

        InputFile inputFile = fileIo.newInputFile("file:" + directory.resolve("metadata/v1.metadata.json"));
        assertThat(inputFile.exists()).isTrue();
        assertThat(inputFile.getLength()).isEqualTo(10);
        try (SeekableInputStream stream = inputFile.newStream()) {
            stream.seek(5);
            assertThat(stream.getPos()).isEqualTo(5);
            assertThat(new String(stream.readAllBytes(), UTF_8)).isEqualTo("store");
        }
        assertThat(fileIo.newInputFile(location, 10).getLength()).isEqualTo(10);

        fileIo.deleteFile(location);
        assertThat(fileIo.newInputFile(location).exists()).isFalse();
        assertThatThrownBy(() -> fileIo.newInputFile(location).newStream())
                .isInstanceOf(NotFoundException.class)
                .hasMessageContaining(location);
        assertThatThrownBy(() -> fileIo.newInputFile(location).getLength())
                .isInstanceOf(NotFoundException.class)
                .hasMessageContaining(location);
    }
}
