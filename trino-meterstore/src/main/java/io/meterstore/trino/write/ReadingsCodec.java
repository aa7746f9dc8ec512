package io.meterstore.trino.write;

import io.airlift.slice.Slice;
import io.airlift.slice.Slices;
import io.meterstore.core.Quality;
import io.meterstore.core.Reading;
import io.meterstore.core.Sparte;
import io.meterstore.core.Sparte.MeasurementUnit;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static java.nio.charset.StandardCharsets.UTF_8;

/**
 * The validated rows of one page sink as a fragment: page sinks only validate, and the coordinator's finishInsert
 * writes every row of the statement once, whatever the number of writers.
 */
final class ReadingsCodec
{
    private ReadingsCodec() {}

    static Slice encode(List<Reading> readings)
    {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream output = new DataOutputStream(bytes)) {
            output.writeInt(readings.size());
            for (Reading reading : readings) {
                output.writeUTF(reading.maloId());
                writeOptional(output, reading.meloId());
                output.writeUTF(reading.obisCode());
                output.writeUTF(reading.sparte().name());
                writeInstant(output, reading.from());
                writeInstant(output, reading.to());
                output.writeUTF(reading.value().toPlainString());
                output.writeUTF(reading.unit().name());
                output.writeUTF(reading.quality().name());
                output.writeUTF(reading.resolution());
                output.writeUTF(reading.sourceKind());
                writeString(output, reading.sourceDetail());
                writeString(output, reading.provenance());
                output.writeUTF(reading.version().toString());
                output.writeUTF(reading.versionScope());
                writeInstant(output, reading.recordedAt());
                output.writeLong(reading.balancingDay().toEpochDay());
            }
        }
        catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return Slices.wrappedBuffer(bytes.toByteArray());
    }

    static List<Reading> decode(Slice fragment)
    {
        try (DataInputStream input = new DataInputStream(fragment.getInput())) {
            int count = input.readInt();
            List<Reading> readings = new ArrayList<>(count);
            for (int index = 0; index < count; index++) {
                readings.add(new Reading(
                        input.readUTF(),
                        readOptional(input),
                        input.readUTF(),
                        Sparte.valueOf(input.readUTF()),
                        readInstant(input),
                        readInstant(input),
                        new BigDecimal(input.readUTF()),
                        MeasurementUnit.valueOf(input.readUTF()),
                        Quality.valueOf(input.readUTF()),
                        input.readUTF(),
                        input.readUTF(),
                        readString(input),
                        readString(input),
                        new BigInteger(input.readUTF()),
                        input.readUTF(),
                        readInstant(input),
                        LocalDate.ofEpochDay(input.readLong())));
            }
            return readings;
        }
        catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void writeOptional(DataOutputStream output, Optional<String> value)
            throws IOException
    {
        output.writeBoolean(value.isPresent());
        if (value.isPresent()) {
            output.writeUTF(value.get());
        }
    }

    // JSON documents may exceed writeUTF's 64 KiB limit
    private static void writeString(DataOutputStream output, Optional<String> value)
            throws IOException
    {
        output.writeBoolean(value.isPresent());
        if (value.isPresent()) {
            byte[] bytes = value.get().getBytes(UTF_8);
            output.writeInt(bytes.length);
            output.write(bytes);
        }
    }

    private static Optional<String> readOptional(DataInputStream input)
            throws IOException
    {
        return input.readBoolean() ? Optional.of(input.readUTF()) : Optional.empty();
    }

    private static Optional<String> readString(DataInputStream input)
            throws IOException
    {
        if (!input.readBoolean()) {
            return Optional.empty();
        }
        byte[] bytes = new byte[input.readInt()];
        input.readFully(bytes);
        return Optional.of(new String(bytes, UTF_8));
    }

    private static void writeInstant(DataOutputStream output, Instant instant)
            throws IOException
    {
        output.writeLong(instant.getEpochSecond());
        output.writeInt(instant.getNano());
    }

    private static Instant readInstant(DataInputStream input)
            throws IOException
    {
        return Instant.ofEpochSecond(input.readLong(), input.readInt());
    }
}
