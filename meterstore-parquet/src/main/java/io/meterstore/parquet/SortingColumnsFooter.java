package io.meterstore.parquet;

import io.meterstore.core.ReadingsColumn;
import org.apache.parquet.format.FileMetaData;
import org.apache.parquet.format.KeyValue;
import org.apache.parquet.format.RowGroup;
import org.apache.parquet.format.SortingColumn;
import org.apache.parquet.format.Util;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import static com.google.common.base.Preconditions.checkState;
import static java.util.Objects.requireNonNull;

/**
 * Declares the sort order of a Parquet file in its footer: every row group's {@code sorting_columns} names
 * (malo_id, obis_code, "from", the key's other columns, version), ascending. Trino's ParquetWriter has no option for it and writes the footer
 * inside {@code close()}, so this stream sits between the writer and the file: from {@link #holdTail()} on (just
 * before the writer closes) it keeps what the writer writes, and on close it passes the data through, rewrites the
 * footer with the sorting columns, and ends the file with the new footer's length and the magic bytes. Only the last
 * row group and the footer are ever held. The sorting columns are left out when {@code sorted} says the rows did not
 * arrive in the sort order: never a false claim. The footer's key-value metadata gets {@code keyValueMetadata} too
 * (the file's role in the resolved layout, for readers that know no Iceberg).
 */
final class SortingColumnsFooter
        extends FilterOutputStream
{
    private static final byte[] MAGIC = {'P', 'A', 'R', '1'};
    private final List<SortingColumn> sortingColumns;
    private final BooleanSupplier sorted;
    private final Map<String, String> keyValueMetadata;
    private ByteArrayOutputStream tail;
    private boolean closed;

    /**
     * @param keyChannels the columns of the key after malo_id, obis_code and "from" (melo_id in a table keyed by it, the
     * identity columns), which sort before version: none for the default key
     */
    SortingColumnsFooter(OutputStream out, int[] keyChannels, BooleanSupplier sorted, Map<String, String> keyValueMetadata)
    {
        super(requireNonNull(out, "out is null"));
        this.sortingColumns = IntStream.concat(
                        IntStream.concat(Stream.of(ReadingsColumn.MALO_ID, ReadingsColumn.OBIS_CODE, ReadingsColumn.FROM).mapToInt(ReadingsParquetSchema.COLUMNS::indexOf), Arrays.stream(keyChannels)),
                        IntStream.of(ReadingsParquetSchema.COLUMNS.indexOf(ReadingsColumn.VERSION)))
                .mapToObj(channel -> new SortingColumn(channel, false, true))
                .toList();
        this.sorted = requireNonNull(sorted, "sorted is null");
        this.keyValueMetadata = Map.copyOf(requireNonNull(keyValueMetadata, "keyValueMetadata is null"));
    }

    /** From now on the writer writes its last row group and its footer: keep them until close. */
    void holdTail()
    {
        checkState(tail == null, "already holding the tail");
        tail = new ByteArrayOutputStream();
    }

    @Override
    public void write(int value)
            throws IOException
    {
        if (tail != null) {
            tail.write(value);
        }
        else {
            out.write(value);
        }
    }

    @Override
    public void write(byte[] bytes, int offset, int length)
            throws IOException
    {
        if (tail != null) {
            tail.write(bytes, offset, length);
        }
        else {
            out.write(bytes, offset, length);
        }
    }

    @Override
    public void close()
            throws IOException
    {
        if (closed) {
            return;
        }
        closed = true;
        try (OutputStream file = out) {
            if (tail == null) {
                return;
            }
            byte[] bytes = tail.toByteArray();
            int end = bytes.length - MAGIC.length;
            checkState(end >= Integer.BYTES && Arrays.equals(bytes, end, bytes.length, MAGIC, 0, MAGIC.length), "the Parquet writer did not end the file with its magic bytes");
            int footerLength = ByteBuffer.wrap(bytes, end - Integer.BYTES, Integer.BYTES).order(ByteOrder.LITTLE_ENDIAN).getInt();
            int footerStart = end - Integer.BYTES - footerLength;
            checkState(footerStart >= 0, "the Parquet footer is longer than what the writer wrote while closing");
            // the row groups' bytes and offsets are untouched: only the footer after them changes
            file.write(bytes, 0, footerStart);
            byte[] footer = Arrays.copyOfRange(bytes, footerStart, end - Integer.BYTES);
            boolean declareSorted = sorted.getAsBoolean();
            if (declareSorted || !keyValueMetadata.isEmpty()) {
                footer = declare(footer, declareSorted);
            }
            file.write(footer);
            file.write(ByteBuffer.allocate(Integer.BYTES).order(ByteOrder.LITTLE_ENDIAN).putInt(footer.length).array());
            file.write(MAGIC);
        }
    }

    private byte[] declare(byte[] footer, boolean declareSorted)
            throws IOException
    {
        FileMetaData metadata = Util.readFileMetaData(new ByteArrayInputStream(footer));
        if (declareSorted) {
            for (RowGroup rowGroup : metadata.getRow_groups()) {
                rowGroup.setSorting_columns(sortingColumns);
            }
        }
        if (!keyValueMetadata.isEmpty()) {
            List<KeyValue> entries = new ArrayList<>(metadata.isSetKey_value_metadata() ? metadata.getKey_value_metadata() : List.of());
            keyValueMetadata.forEach((key, value) -> {
                KeyValue entry = new KeyValue(key);
                entry.setValue(value);
                entries.add(entry);
            });
            metadata.setKey_value_metadata(entries);
        }
        ByteArrayOutputStream rewritten = new ByteArrayOutputStream(footer.length + 64);
        Util.writeFileMetaData(metadata, rewritten);
        return rewritten.toByteArray();
    }
}
