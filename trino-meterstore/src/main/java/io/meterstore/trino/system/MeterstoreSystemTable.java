package io.meterstore.trino.system;

import io.trino.spi.connector.ColumnMetadata;
import io.trino.spi.connector.ConnectorSession;
import io.trino.spi.connector.ConnectorTableMetadata;
import io.trino.spi.connector.ConnectorTransactionHandle;
import io.trino.spi.connector.InMemoryRecordSet;
import io.trino.spi.connector.RecordCursor;
import io.trino.spi.connector.SchemaTableName;
import io.trino.spi.connector.SystemTable;
import io.trino.spi.predicate.TupleDomain;
import io.trino.spi.type.TimeZoneKey;
import io.trino.spi.type.Type;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

import static io.trino.spi.type.DateTimeEncoding.packDateTimeWithZone;
import static io.trino.spi.type.TimestampWithTimeZoneType.TIMESTAMP_TZ_MILLIS;
import static java.util.Objects.requireNonNull;

/**
 * A metadata table of one readings table, {@code "<table>$<name>"}, as Trino's Iceberg connector serves
 * {@code "<table>$snapshots"}: computed on the coordinator from the catalogue, the snapshot summaries and PostgreSQL's
 * catalogue, never from a data file.
 */
abstract class MeterstoreSystemTable
        implements SystemTable
{
    private final ConnectorTableMetadata metadata;

    MeterstoreSystemTable(SchemaTableName name, List<ColumnMetadata> columns)
    {
        this.metadata = new ConnectorTableMetadata(requireNonNull(name, "name is null"), columns);
    }

    @Override
    public final Distribution getDistribution()
    {
        return Distribution.SINGLE_COORDINATOR;
    }

    @Override
    public final ConnectorTableMetadata getTableMetadata()
    {
        return metadata;
    }

    @Override
    public final RecordCursor cursor(ConnectorTransactionHandle transactionHandle, ConnectorSession session, TupleDomain<Integer> constraint)
    {
        InMemoryRecordSet.Builder rows = InMemoryRecordSet.builder(metadata);
        addRows(rows, session, constraint);
        return rows.build().cursor();
    }

    /** Adds the table's rows; {@code constraint} (by column index) may be used to skip work the query filters out. */
    abstract void addRows(InMemoryRecordSet.Builder rows, ConnectorSession session, TupleDomain<Integer> constraint);

    static ColumnMetadata column(String name, Type type)
    {
        return new ColumnMetadata(name, type);
    }

    /** A timestamp(3) with time zone value in UTC, or NULL. */
    static Long timestamp(Optional<Instant> instant)
    {
        return instant.map(value -> packDateTimeWithZone(value.toEpochMilli(), TimeZoneKey.UTC_KEY)).orElse(null);
    }

    static Long timestamp(Instant instant)
    {
        return timestamp(Optional.of(instant));
    }

    static long seconds(Duration duration)
    {
        return duration.toSeconds();
    }

    static final Type TIMESTAMP = TIMESTAMP_TZ_MILLIS;
}
