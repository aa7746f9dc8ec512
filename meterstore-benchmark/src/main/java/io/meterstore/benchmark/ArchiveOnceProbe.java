package io.meterstore.benchmark;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;
import io.meterstore.archiver.cycle.ArchivalCycle;
import io.meterstore.archiver.cycle.ArchivalSettings;
import io.meterstore.archiver.cycle.ArchiveOutcome;
import io.meterstore.core.HotTier;
import io.meterstore.core.IcebergCatalogs;
import io.meterstore.core.IcebergCatalogs.JdbcCatalogSpec;
import io.meterstore.core.PartitionNaming;
import io.meterstore.storage.ColdStorage;
import io.meterstore.testing.TestingWarehouse;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;

import java.io.Closeable;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.DriverManager;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

import static com.google.common.base.Preconditions.checkArgument;
import static com.google.common.base.Preconditions.checkState;

/**
 * Archival cycles in a JVM of their own, so the heap is the archiver's alone: the first as
 * {@code meterstore-archiver archive-once} runs it, in a fresh JVM, then a second one in the same JVM, warm, as the
 * service's scheduler runs every cycle after its first. Prints each cycle's time (without JVM start-up and catalogue
 * loading) and the heap's peak.
 * <p>
 * Arguments: PostgreSQL JDBC URL, user, Iceberg catalogue name, warehouse location, schema, table, then the storage
 * properties as {@code key=value} ({@code fs.s3.enabled=true}, {@code s3.endpoint=...}), none for a local warehouse.
 */
public final class ArchiveOnceProbe
{
    static final String RESULT_PREFIX = "archive-once-probe:";
    static final String WARM_RESULT_PREFIX = "archive-once-probe-warm:";
    // how main prints each cycle's figures, and how the launcher reads them back
    static final String FIGURES = "%s kind=%s rows=%d nanos=%d peak_heap_bytes=%d max_heap_bytes=%d%n";
    private static final Pattern FIGURES_LINE = Pattern.compile("^archive-once-probe(?:-warm)?: kind=(\\w+) rows=(\\d+) nanos=(\\d+) peak_heap_bytes=(\\d+) max_heap_bytes=(\\d+)$", Pattern.MULTILINE);
    // 1: the fresh JVM's cycle alone
    private static final String CYCLES_PROPERTY = "archive-once-probe.cycles";

    /** One cycle in the child JVM: its outcome's kind and rows, its time without the JVM's start, the heap's peak and cap. */
    record Cycle(String kind, long rows, long nanos, long peakHeapBytes, long maxHeapBytes)
    {
        boolean archived()
        {
            return kind.equals(ArchiveOutcome.Kind.ARCHIVED.name());
        }
    }

    /** The child JVM's output, and its cycles in order: the fresh JVM's first, then the warm one's. */
    record Run(String output, List<Cycle> cycles) {}

    private ArchiveOnceProbe() {}

    /**
     * Runs the probe on {@code warehouse}'s table {@code schema.table} in a JVM of its own, of {@code heap}, for
     * {@code cycles} cycles (1 or 2), its command line after {@code launcher} ({@code nice -n 19}, or nothing); once it
     * exited 0 and printed each cycle's figures.
     */
    static Run runInChildJvm(List<String> launcher, String heap, int cycles, TestingWarehouse warehouse, String schema, String table, Path directory)
            throws IOException, InterruptedException
    {
        checkArgument(cycles == 1 || cycles == 2, "cycles must be 1 or 2: %s", cycles);
        Path output = Files.createTempFile(directory, "archive-once-", ".log");
        try {
            Process process = new ProcessBuilder(ImmutableList.<String>builder()
                    .addAll(launcher)
                    .add(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                            "-Xmx" + heap,
                            "-XX:+ExitOnOutOfMemoryError",
                            "--add-modules=jdk.incubator.vector",
                            "--enable-native-access=ALL-UNNAMED",
                            "--sun-misc-unsafe-memory-access=allow",
                            "-Duser.timezone=UTC",
                            "-D%s=%s".formatted(CYCLES_PROPERTY, cycles),
                            "-cp",
                            System.getProperty("java.class.path"),
                            ArchiveOnceProbe.class.getName(),
                            warehouse.database().jdbcUrl(),
                            warehouse.database().user(),
                            warehouse.catalogName(),
                            warehouse.location(),
                            schema,
                            table)
                    // the storage properties last, as key=value: on S3 the archiver writes through the S3 server
                    .addAll(warehouse.storageProperties().entrySet().stream().map(entry -> entry.getKey() + "=" + entry.getValue()).iterator())
                    .build())
                    .redirectErrorStream(true)
                    .redirectOutput(output.toFile())
                    .start();
            if (!process.waitFor(30, TimeUnit.MINUTES)) {
                process.destroyForcibly().waitFor();
                throw new IllegalStateException("The archiver did not finish in 30 minutes; its output is in " + output);
            }
            String text = Files.readString(output);
            if (process.exitValue() != 0) {
                throw new IllegalStateException("The archiver failed (exit %s):%n%s".formatted(process.exitValue(), text));
            }
            List<Cycle> figures = cycles(text);
            checkState(figures.size() == cycles, "The archiver printed the figures of %s cycles, not %s:%n%s", figures.size(), cycles, text);
            return new Run(text, figures);
        }
        finally {
            Files.deleteIfExists(output);
        }
    }

    /** The cycles' figures in the child's output, in the order it printed them; its log lines and the outcomes around them skipped. */
    static List<Cycle> cycles(String output)
    {
        return FIGURES_LINE.matcher(output).results()
                .map(line -> new Cycle(line.group(1), Long.parseLong(line.group(2)), Long.parseLong(line.group(3)), Long.parseLong(line.group(4)), Long.parseLong(line.group(5))))
                .toList();
    }

    public static void main(String[] args)
            throws Exception
    {
        if (args.length < 6) {
            System.err.println("Usage: ArchiveOnceProbe <jdbc-url> <user> <catalog-name> <warehouse> <schema> <table> [<storage property>=<value> ...]");
            System.exit(2);
        }
        String url = args[0];
        String user = args[1];
        Map<String, String> storageProperties = Arrays.stream(args, 6, args.length)
                .map(argument -> argument.split("=", 2))
                .collect(ImmutableMap.toImmutableMap(pair -> pair[0], pair -> pair[1]));
        // a local warehouse keeps the catalogue's own FileIO, as before the storage properties existed
        Optional<ColdStorage> storage = storageProperties.isEmpty() ? Optional.empty() : Optional.of(ColdStorage.create(storageProperties));
        JdbcCatalogSpec spec = new JdbcCatalogSpec(args[2], url, user, Optional.empty(), args[3]);
        Catalog catalog = storage
                .map(value -> IcebergCatalogs.jdbc(spec, properties -> value.fileIo("meterstore-archiver")))
                .orElseGet(() -> IcebergCatalogs.jdbc(spec));
        try {
            HotTier hotTier = new HotTier(args[4], new PartitionNaming(args[5], PartitionNaming.DEFAULT_STEP), Duration.ofSeconds(5));
            ArchivalCycle cycle = new ArchivalCycle(
                    catalog,
                    TableIdentifier.of(args[4], args[5]),
                    hotTier,
                    () -> DriverManager.getConnection(url, user, null),
                    ArchivalSettings.DEFAULTS,
                    InstantSource.fixed(BenchmarkDataset.LATER));
            List<MemoryPoolMXBean> heap = ManagementFactory.getMemoryPoolMXBeans().stream().filter(pool -> pool.getType() == MemoryType.HEAP).toList();
            for (String prefix : List.of(RESULT_PREFIX, WARM_RESULT_PREFIX).subList(0, Integer.getInteger(CYCLES_PROPERTY, 2))) {
                System.gc();
                heap.forEach(MemoryPoolMXBean::resetPeakUsage);
                long start = System.nanoTime();
                ArchiveOutcome outcome = cycle.archiveOnce();
                long nanos = System.nanoTime() - start;
                // each pool's own peak, added: an upper bound of the heap in use at any one moment
                long peak = heap.stream().mapToLong(pool -> pool.getPeakUsage().getUsed()).sum();
                System.out.println(outcome.describe());
                System.out.printf(FIGURES,
                        prefix, outcome.kind(), outcome.rows(), nanos, peak, Runtime.getRuntime().maxMemory());
            }
        }
        finally {
            if (catalog instanceof Closeable closeable) {
                closeable.close();
            }
            storage.ifPresent(ColdStorage::close);
        }
    }
}
