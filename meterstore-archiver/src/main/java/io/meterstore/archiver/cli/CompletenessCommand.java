package io.meterstore.archiver.cli;

import com.google.common.base.Throwables;
import com.google.common.collect.ImmutableList;
import io.airlift.units.Duration;
import io.meterstore.archiver.tables.Failures;
import io.meterstore.core.CompletenessPeriod;
import io.meterstore.core.InvalidReadingException;
import io.meterstore.core.MaloId;
import io.meterstore.core.ObisCode;

import java.io.PrintStream;
import java.net.ConnectException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.LocalDate;
import java.time.YearMonth;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Properties;
import java.util.stream.Collectors;

import static io.meterstore.core.MeteringCalendar.startOfLocalDay;
import static java.util.Objects.requireNonNull;

/**
 * {@code completeness}: the {@code meter_completeness} report of every configured table (or one), printed as a table
 * with a summary line. The report is the connector's, asked of a Trino coordinator through its JDBC driver, so the
 * command line and SQL never disagree. Exits 0 whatever the report finds; 1 when it cannot be had.
 */
final class CompletenessCommand
{
    static final String DEFAULT_TRINO_URL = "jdbc:trino://localhost:8080/meterstore";
    static final String USAGE = """
            Usage: archiver completeness --config <file.properties> (--month YYYY-MM | --from T --to T) [options]
              --month YYYY-MM       the settlement month: each commodity's balancing days (gas 06:00 to 06:00)
              --from T --to T       the period [from, to): an instant (2026-03-01T00:00:00Z) or a Berlin day (2026-03-01)
              --seen-since D|T      also list readings delivered in the roster window before the period and silent in it:
                                    a duration before the period's start (30d) or an instant or Berlin day
              --table NAME          one of meterstore.tables (default: each)
              --malo ID,...         only these MaLo-IDs
              --obis CODE,...       only these OBIS codes
              --gaps-only           only readings that are not complete
              --trino URL           the Trino catalog with the MeterStore connector (default %s)
              --trino-user NAME     the Trino user (default meterstore-archiver)""".formatted(DEFAULT_TRINO_URL);
    private static final DateTimeFormatter TIMESTAMP = DateTimeFormatter.ofPattern("uuuu-MM-dd HH:mm:ss.SSSSSS 'UTC'").withZone(ZoneOffset.UTC);
    private static final String HEADER = "%-12s %-12s %-14s %-7s %-6s %9s %9s %8s %8s %-11s %s";

    record Options(
            CompletenessPeriod period,
            Optional<Instant> seenSince,
            Optional<String> table,
            List<String> maloIds,
            List<String> obisCodes,
            boolean gapsOnly,
            String trinoUrl,
            String trinoUser)
    {
        Options
        {
            requireNonNull(period, "period is null");
            requireNonNull(seenSince, "seenSince is null");
            requireNonNull(table, "table is null");
            maloIds = ImmutableList.copyOf(maloIds);
            obisCodes = ImmutableList.copyOf(obisCodes);
            requireNonNull(trinoUrl, "trinoUrl is null");
            requireNonNull(trinoUser, "trinoUser is null");
        }
    }

    private final List<String> tables;
    private final PrintStream out;
    private final PrintStream err;

    CompletenessCommand(List<String> tables, PrintStream out, PrintStream err)
    {
        this.tables = ImmutableList.copyOf(requireNonNull(tables, "tables is null"));
        this.out = requireNonNull(out, "out is null");
        this.err = requireNonNull(err, "err is null");
    }

    /** Reads the options after {@code --config <file>}; a usage error is an {@link IllegalArgumentException} saying what to write. */
    static Options parse(List<String> arguments)
    {
        Optional<String> month = Optional.empty();
        Optional<String> from = Optional.empty();
        Optional<String> to = Optional.empty();
        Optional<String> seenSince = Optional.empty();
        Optional<String> table = Optional.empty();
        List<String> maloIds = List.of();
        List<String> obisCodes = List.of();
        boolean gapsOnly = false;
        String trinoUrl = DEFAULT_TRINO_URL;
        String trinoUser = "meterstore-archiver";
        for (int index = 0; index < arguments.size(); index++) {
            String option = arguments.get(index);
            if (option.equals("--gaps-only")) {
                gapsOnly = true;
                continue;
            }
            if (index + 1 == arguments.size()) {
                throw new IllegalArgumentException("Option '%s' needs a value".formatted(option));
            }
            String value = arguments.get(++index);
            switch (option) {
                case "--month" -> month = Optional.of(value);
                case "--from" -> from = Optional.of(value);
                case "--to" -> to = Optional.of(value);
                case "--seen-since" -> seenSince = Optional.of(value);
                case "--table" -> table = Optional.of(value);
                case "--malo" -> maloIds = list(value);
                case "--obis" -> obisCodes = list(value);
                case "--trino" -> trinoUrl = value;
                case "--trino-user" -> trinoUser = value;
                default -> throw new IllegalArgumentException("Unknown option '%s'".formatted(option));
            }
        }
        CompletenessPeriod period;
        Optional<Instant> roster;
        try {
            if (month.isPresent() == (from.isPresent() || to.isPresent())) {
                throw new IllegalArgumentException("Give the period: --month YYYY-MM, or --from and --to");
            }
            if (month.isPresent()) {
                period = CompletenessPeriod.settlementMonth(YearMonth.parse(month.get()));
            }
            else {
                period = CompletenessPeriod.range(
                        instant(from.orElseThrow(() -> new IllegalArgumentException("--to needs --from"))),
                        instant(to.orElseThrow(() -> new IllegalArgumentException("--from needs --to"))));
            }
            CompletenessPeriod judged = period;
            roster = seenSince.map(value -> value.matches("\\d+(\\.\\d+)?[a-z]+")
                    ? judged.scanStart().minusMillis(Duration.valueOf(value).toMillis())
                    : instant(value));
            // checked here, so a bad identifier is a usage error and only canonical ones reach the statement
            maloIds = maloIds.stream().map(id -> MaloId.parse(id).value()).toList();
            obisCodes = obisCodes.stream().map(ObisCode::canonicalize).toList();
        }
        catch (DateTimeParseException e) {
            throw new IllegalArgumentException("'%s' is not a month, instant or day: --month is 'YYYY-MM', --from, --to and --seen-since an instant (2026-03-01T00:00:00Z) or a Berlin day (2026-03-01)".formatted(e.getParsedString()));
        }
        catch (InvalidReadingException e) {
            throw new IllegalArgumentException(e.getMessage());
        }
        return new Options(period, roster, table, maloIds, obisCodes, gapsOnly, trinoUrl, trinoUser);
    }

    /** Prints the report of each table; returns whether every report could be had. */
    boolean run(Options options)
    {
        List<String> reported = options.table().map(List::of).orElse(tables);
        Properties properties = new Properties();
        properties.setProperty("user", options.trinoUser());
        try (Connection connection = DriverManager.getConnection(options.trinoUrl(), properties)) {
            boolean reportedAll = true;
            for (String table : reported) {
                reportedAll &= report(connection, table, options);
            }
            return reportedAll;
        }
        catch (SQLException e) {
            cannotConnect(options, e);
            return false;
        }
    }

    private void cannotConnect(Options options, SQLException e)
    {
        err.println("trino: cannot connect to '%s': %s; start Trino with the MeterStore catalog, or pass --trino".formatted(options.trinoUrl(), Failures.describe(e)));
    }

    private boolean report(Connection connection, String table, Options options)
    {
        int rows = 0;
        int incomplete = 0;
        int silent = 0;
        long missing = 0;
        try (Statement statement = connection.createStatement()) {
            List<String> keyColumns = keyColumns(statement, table, options);
            String sql = sql(table, keyColumns, options);
            out.println(HEADER.formatted("TABLE", withKeys("MALO", keyColumns.stream().map(column -> column.toUpperCase(Locale.ROOT)).toList()), "OBIS", "SPARTE", "RES", "EXPECTED", "ACTUAL", "MISSING", "SURPLUS", "FIRST GAP", "NOTE"));
            try (ResultSet result = statement.executeQuery(sql)) {
                while (result.next()) {
                    long actual = result.getLong("actual");
                    boolean measurable = result.getBoolean("measurable");
                    String note = actual == 0 ? "delivered nothing in the period" : measurable ? "" : "not measurable: no fixed number of intervals a day";
                    List<String> keyValues = new ArrayList<>();
                    for (String column : keyColumns) {
                        keyValues.add(result.getString(column));
                    }
                    out.println(HEADER.formatted(
                            table,
                            withKeys(result.getString("malo_id"), keyValues),
                            result.getString("obis_code"),
                            result.getString("sparte"),
                            result.getString("resolution"),
                            result.getLong("expected"),
                            actual,
                            result.getLong("missing"),
                            result.getLong("surplus"),
                            Optional.ofNullable(result.getString("first_gap")).orElse("-"),
                            note).stripTrailing());
                    rows++;
                    incomplete += result.getBoolean("complete") ? 0 : 1;
                    silent += actual == 0 ? 1 : 0;
                    missing += result.getLong("missing");
                }
            }
        }
        catch (SQLException e) {
            if (Throwables.getCausalChain(e).stream().anyMatch(ConnectException.class::isInstance)) {
                // the driver connects with the first statement, not when the connection is opened
                cannotConnect(options, e);
            }
            else {
                err.println("%s: cannot compute the report: %s".formatted(table, e.getMessage()));
            }
            return false;
        }
        out.println("%s: %s reading(s) and grid(s) over %s: %s incomplete, %s silent, %s interval(s) missing".formatted(table, rows, options.period(), incomplete, silent, missing));
        return true;
    }

    /**
     * The columns of the table's merge key besides malo_id, obis_code and "from" (melo_id, identity columns such as a
     * tenant): the report has a row per their values and shows them between malo_id and obis_code. Its columns are
     * asked of the report itself with LIMIT 0, which Trino answers from the plan without counting a reading.
     */
    private static List<String> keyColumns(Statement statement, String table, Options options)
            throws SQLException
    {
        try (ResultSet result = statement.executeQuery("SELECT * FROM TABLE(system.meter_completeness(%s)) LIMIT 0".formatted(arguments(table, options)))) {
            ResultSetMetaData columns = result.getMetaData();
            List<String> keyColumns = new ArrayList<>();
            // column 1 is malo_id; the key's columns follow it up to obis_code
            for (int column = 2; column <= columns.getColumnCount() && !columns.getColumnName(column).equals("obis_code"); column++) {
                keyColumns.add(columns.getColumnName(column));
            }
            return keyColumns;
        }
    }

    // the MaLo-ID and the key's values after it (a MeLo-ID is 33 characters), each in a column of its own; the MaLo-ID alone for the default key
    private static String withKeys(String maloId, List<String> keyValues)
    {
        if (keyValues.isEmpty()) {
            return maloId;
        }
        return "%-12s".formatted(maloId) + keyValues.stream().map(value -> " %-33s".formatted(value)).collect(Collectors.joining());
    }

    static String sql(String table, List<String> keyColumns, Options options)
    {
        String keys = keyColumns.stream().map(column -> "\"%s\", ".formatted(column.replace("\"", "\"\""))).collect(Collectors.joining());
        return ("SELECT malo_id, %sobis_code, sparte, resolution, expected, actual, missing, surplus, CAST(first_gap AS varchar) AS first_gap, complete, measurable "
                + "FROM TABLE(system.meter_completeness(%s))%s ORDER BY malo_id, %sobis_code, sparte, resolution")
                .formatted(keys, arguments(table, options), options.gapsOnly() ? " WHERE NOT complete" : "", keys);
    }

    private static String arguments(String table, Options options)
    {
        List<String> arguments = new ArrayList<>();
        arguments.add("table_name => '%s'".formatted(table.replace("'", "''")));
        CompletenessPeriod period = options.period();
        period.month().ifPresent(month -> arguments.add("settlement_month => '%s'".formatted(month)));
        period.rangeStart().ifPresent(start -> arguments.add("range_start => TIMESTAMP '%s'".formatted(TIMESTAMP.format(start))));
        period.rangeEnd().ifPresent(end -> arguments.add("range_end => TIMESTAMP '%s'".formatted(TIMESTAMP.format(end))));
        options.seenSince().ifPresent(since -> arguments.add("seen_since => TIMESTAMP '%s'".formatted(TIMESTAMP.format(since))));
        // parse checked them: digits and OBIS separators only, nothing to escape
        if (!options.maloIds().isEmpty()) {
            arguments.add("malo_ids => ARRAY[%s]".formatted(options.maloIds().stream().map(id -> "'" + id + "'").collect(Collectors.joining(", "))));
        }
        if (!options.obisCodes().isEmpty()) {
            arguments.add("obis_codes => ARRAY[%s]".formatted(options.obisCodes().stream().map(code -> "'" + code + "'").collect(Collectors.joining(", "))));
        }
        return String.join(", ", arguments);
    }

    private static List<String> list(String value)
    {
        return Arrays.stream(value.split(",")).map(String::trim).filter(item -> !item.isEmpty()).toList();
    }

    private static Instant instant(String value)
    {
        if (value.length() == 10) {
            return startOfLocalDay(LocalDate.parse(value));
        }
        return Instant.parse(value);
    }
}
