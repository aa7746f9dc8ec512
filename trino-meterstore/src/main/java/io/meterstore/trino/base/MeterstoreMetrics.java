package io.meterstore.trino.base;

import com.google.common.collect.ImmutableMap;
import io.trino.plugin.base.metrics.LongCount;
import io.trino.plugin.base.metrics.TDigestHistogram;
import io.trino.spi.metrics.Metric;
import io.trino.spi.metrics.Metrics;

import java.util.Map;

/**
 * The connector metrics MeterStore reports, so that pruning is visible in a query's statistics (EXPLAIN ANALYZE,
 * the query's operator summaries): planning reports them through the split source, reading through each page
 * source. Every metric but the PostgreSQL connections' is a count that Trino sums over the splits of a table scan;
 * those are distributions over the splits (count, percentiles, max). An INSERT reports what it wrote through the
 * metadata, as the catalog's metadata metrics of the query.
 */
public final class MeterstoreMetrics
{
    /**
     * How long the engine was asked to hold the scan's splits back for a join's dynamic filter, at most: the session's
     * dynamic_filtering_wait_timeout, or 0 when no filter could prune splits beyond the query's own predicate.
     */
    public static final String DYNAMIC_FILTER_WAIT_TIMEOUT_MILLIS = "dynamic_filter_wait_timeout_millis";
    /** Hot partitions of the table at planning, attached and detached. */
    public static final String HOT_PARTITIONS = "hot_partitions";
    /** Hot partitions left out because their range misses the query's hot "from" range. */
    public static final String HOT_PARTITIONS_SKIPPED = "hot_partitions_skipped";
    public static final String HOT_SPLITS = "hot_splits";
    /** Of the hot splits, those left out because their partition's range misses a join's dynamic filter on "from". */
    public static final String HOT_PARTITIONS_DYNAMIC_FILTER_SKIPPED = "hot_partitions_dynamic_filter_skipped";
    /** Hot partitions a page source read, one per hot split. */
    public static final String HOT_PARTITIONS_READ = "hot_partitions_read";
    /** Of those, the partitions read in primary-key order to resolve versions: partitions not yet marked ({@code readings} only). */
    public static final String HOT_PARTITIONS_RESOLVED = "hot_partitions_resolved";
    /** Rows the hot statements returned, after the pushed predicates. */
    public static final String HOT_ROWS_READ = "hot_rows_read";
    /** Rows a pushed-down aggregation returned: groups, not readings. */
    public static final String HOT_AGGREGATED_ROWS = "hot_aggregated_rows";

    public static final String COLD_SPLITS = "cold_splits";
    /** Cold splits that resolve versions: groups of files (cut by "from" and malo_id ranges) holding every version of their keys. */
    public static final String COLD_RESOLUTION_SPLITS = "cold_resolution_splits";
    /** Months of "from" read from their winners files alone: every live file of the month is of the resolved layout. */
    public static final String COLD_MONTHS_RESOLVED = "cold_months_resolved";
    /** Months of "from" read with resolution: a file of the month is not of the resolved layout, or the read is AS OF. */
    public static final String COLD_MONTHS_RESOLVING = "cold_months_resolving";
    /** Position delete files the planned splits apply. */
    public static final String COLD_DELETE_FILES = "cold_delete_files";
    /** Data files of the pinned snapshot that survived manifest and file pruning. */
    public static final String COLD_DATA_FILES = "cold_data_files";
    public static final String COLD_DATA_FILES_SKIPPED = "cold_data_files_skipped";
    /** Data files left out, after manifest and file pruning, because their "from" and malo_id bounds miss a join's dynamic filter. */
    public static final String COLD_DATA_FILES_DYNAMIC_FILTER_SKIPPED = "cold_data_files_dynamic_filter_skipped";
    public static final String COLD_DATA_MANIFESTS = "cold_data_manifests";
    public static final String COLD_DATA_MANIFESTS_SKIPPED = "cold_data_manifests_skipped";
    /** Row groups that start inside the cold splits' ranges. */
    public static final String COLD_ROW_GROUPS = "cold_row_groups";
    /** Of those, the row groups statistics, dictionaries and bloom filters could not exclude. */
    public static final String COLD_ROW_GROUPS_READ = "cold_row_groups_read";
    /** Of those, the row groups read to resolve versions. */
    public static final String COLD_ROW_GROUPS_RESOLVED = "cold_row_groups_resolved";
    /** Rows the Parquet reader returned. */
    public static final String COLD_ROWS_READ = "cold_rows_read";
    /** Of those, the rows position delete files removed (winners a later correction superseded). */
    public static final String COLD_ROWS_DELETED = "cold_rows_deleted";

    // an INSERT's, as the catalog's metadata metrics of its query: Trino's update count is every row the statement carried
    /** Rows the INSERT wrote to PostgreSQL. */
    public static final String HOT_ROWS_WRITTEN = "hot_rows_written";
    /** Rows the INSERT appended to Iceberg. */
    public static final String COLD_ROWS_WRITTEN = "cold_rows_written";
    /** Rows the INSERT did not write: versions already stored with the same values (redeliveries), or carried twice. */
    public static final String REDELIVERED_ROWS_SKIPPED = "redelivered_rows_skipped";
    /** Rows a DELETE erased from PostgreSQL (at or above W). */
    public static final String HOT_ROWS_ERASED = "hot_rows_erased";
    /** Rows a DELETE erased from Iceberg. */
    public static final String COLD_ROWS_ERASED = "cold_rows_erased";

    /** Splits of the winners' read a completeness report counted: hot partitions and cold file groups. */
    public static final String COMPLETENESS_SPLITS_READ = "completeness_splits_read";
    /** Winning versions a completeness report counted in the period and the roster window, from both tiers. */
    public static final String COMPLETENESS_ROWS_COUNTED = "completeness_rows_counted";
    /** Counts per reading, grid and day that PostgreSQL returned for a completeness report instead of its hot winners. */
    public static final String COMPLETENESS_HOT_COUNTS_READ = "completeness_hot_counts_read";

    // distributions over the hot splits (and a completeness report's hot partitions): Trino merges them, it does not sum them
    /** The size of the node's PostgreSQL pool a split took its connection from ({@code meterstore.postgresql.max-connections}). */
    public static final String POSTGRESQL_CONNECTIONS = "postgresql_connections";
    /** Milliseconds a split waited for a PostgreSQL connection: its query's turn, while other splits held the pool's. */
    public static final String POSTGRESQL_CONNECTION_WAIT_MILLIS = "postgresql_connection_wait_millis";

    private MeterstoreMetrics() {}

    /** A split's wait for a PostgreSQL connection, with the size of the pool it waited on. */
    public static Metrics connectionWait(int poolConnections, long waitNanos)
    {
        return new Metrics(ImmutableMap.of(
                POSTGRESQL_CONNECTIONS, TDigestHistogram.fromValue(poolConnections),
                POSTGRESQL_CONNECTION_WAIT_MILLIS, TDigestHistogram.fromValue(waitNanos / 1_000_000.0)));
    }

    public static Metrics counts(Map<String, Long> counts)
    {
        ImmutableMap.Builder<String, Metric<?>> metrics = ImmutableMap.builder();
        counts.forEach((name, count) -> metrics.put(name, new LongCount(count)));
        return new Metrics(metrics.buildOrThrow());
    }
}
