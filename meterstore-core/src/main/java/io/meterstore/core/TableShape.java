package io.meterstore.core;

import com.google.common.base.CharMatcher;
import com.google.common.base.Splitter;
import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

import static com.google.common.base.Preconditions.checkArgument;
import static io.meterstore.core.MeterstoreException.Reason.SHAPE_MISMATCH;
import static java.util.Objects.requireNonNull;

/**
 * What a readings table is, declared once when it is created (CREATE TABLE ... WITH (...) or the archiver's
 * {@code create} from a {@code meterstore.tables} entry) and stored with the table: as Iceberg table properties
 * ({@link #properties()}) and as the comment of the hot tier's parent table ({@link #comment()}). The time model, the
 * identifier that keys a reading, the identity columns that join the merge key, the attribute columns carried beside it,
 * and the columns checked as identifiers. A table stored before shapes were declared reads as {@link #DEFAULT}.
 * Settings are named as in SQL ({@code time_model}); the Iceberg keys are {@code meterstore.time-model} and so on.
 */
public record TableShape(
        TimeModel timeModel,
        ReadingIdentifier readingId,
        List<String> identityColumns,
        List<String> attributeColumns,
        Map<String, ValueCheck> checkedColumns)
{
    public static final String TIME_MODEL = "time_model";
    public static final String READING_ID = "reading_id";
    public static final String IDENTITY_COLUMNS = "identity_columns";
    public static final String ATTRIBUTE_COLUMNS = "attribute_columns";
    public static final String CHECKED_COLUMNS = "checked_columns";
    /** The settings in the order they are shown and compared. */
    public static final List<String> SETTINGS = List.of(TIME_MODEL, READING_ID, IDENTITY_COLUMNS, ATTRIBUTE_COLUMNS, CHECKED_COLUMNS);

    // the readings columns of free text a check may name; malo_id and melo_id are checked as what they hold, the others hold codes with rules of their own
    private static final Set<ReadingsColumn> CHECKABLE_READINGS_COLUMNS = Set.of(ReadingsColumn.SOURCE_KIND, ReadingsColumn.SOURCE_DETAIL, ReadingsColumn.PROVENANCE);

    /** The shape every table had before shapes were declared: quarter-hour intervals keyed by MaLo-ID. */
    public static final TableShape DEFAULT = new TableShape(TimeModel.INTERVAL, ReadingIdentifier.MALO_ID, List.of(), List.of(),
            ImmutableMap.of(ReadingsColumn.MALO_ID.columnName(), ValueCheck.of(CheckedKind.MALO), ReadingsColumn.MELO_ID.columnName(), ValueCheck.of(CheckedKind.MELO)));

    // the first line of the hot tier's comment, which says what the lines after it are
    private static final String COMMENT_HEADER = "MeterStore readings table; shape declared at creation:";
    private static final String PROPERTY_PREFIX = "meterstore.";
    // commas in SQL and in the Iceberg properties; spaces in a meterstore.tables entry, which the configuration splits at commas
    private static final Splitter LIST_SPLITTER = Splitter.on(CharMatcher.anyOf(", ")).trimResults().omitEmptyStrings();

    public TableShape
    {
        requireNonNull(timeModel, "timeModel is null");
        requireNonNull(readingId, "readingId is null");
        identityColumns = ImmutableList.copyOf(requireNonNull(identityColumns, "identityColumns is null"));
        attributeColumns = ImmutableList.copyOf(requireNonNull(attributeColumns, "attributeColumns is null"));
        checkedColumns = ImmutableMap.copyOf(requireNonNull(checkedColumns, "checkedColumns is null"));
        Set<String> declared = new HashSet<>();
        for (String column : ImmutableList.<String>builder().addAll(identityColumns).addAll(attributeColumns).build()) {
            checkArgument(PartitionNaming.isValidTableName(column), "Column '%s' of identity_columns or attribute_columns must be named in lowercase letters, digits and underscores", column);
            checkArgument(Arrays.stream(ReadingsColumn.values()).noneMatch(readings -> readings.columnName().equals(column)),
                    "Column '%s' is a readings column already: identity_columns and attribute_columns name columns of their own", column);
            checkArgument(declared.add(column), "Column '%s' is declared twice in identity_columns and attribute_columns: declare it once", column);
            checkArgument(!TableColumns.isReserved(column), "Column '%s' of identity_columns or attribute_columns is a name PostgreSQL or MeterStore's hot tier keeps for itself: name it otherwise", column);
        }
        for (Map.Entry<String, ValueCheck> check : checkedColumns.entrySet()) {
            String column = check.getKey();
            Optional<ReadingsColumn> readingsColumn = Arrays.stream(ReadingsColumn.values()).filter(readings -> readings.columnName().equals(column)).findFirst();
            checkArgument(declared.contains(column) || readingsColumn.isPresent(),
                    "Checked column '%s' is neither a readings column nor one of identity_columns and attribute_columns: declare it there first", column);
            readingsColumn.ifPresent(readings -> requireCheckable(readings, check.getValue()));
        }
        checkArgument(checkedColumns.containsKey(ReadingsColumn.MALO_ID.columnName()) && checkedColumns.containsKey(ReadingsColumn.MELO_ID.columnName()),
                "checkedColumns must check malo_id and melo_id");
    }

    // malo_id and melo_id hold the identifiers they are named for, which the write path always checks
    private static void requireCheckable(ReadingsColumn column, ValueCheck check)
    {
        if (column == ReadingsColumn.MALO_ID || column == ReadingsColumn.MELO_ID) {
            CheckedKind own = column == ReadingsColumn.MALO_ID ? CheckedKind.MALO : CheckedKind.MELO;
            checkArgument(check.equals(ValueCheck.of(own)), "Column '%s' is checked as %s, the identifier it holds: write %s:%s, or leave it out of checked_columns",
                    column.columnName(), own, column.columnName(), own);
            return;
        }
        checkArgument(CHECKABLE_READINGS_COLUMNS.contains(column), "Column '%s' holds values the write path checks by rules of its own: a check names %s, or a column of identity_columns or attribute_columns",
                column.columnName(), "malo_id, melo_id, source_kind, source_detail, provenance");
    }

    public enum TimeModel
    {
        /** Lastgang: a value per interval ["from", "to"). */
        INTERVAL,
        /** Zählerstandsgang: the cumulative register at "from", "to" NULL. */
        POINT;

        public String sqlName()
        {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    public enum ReadingIdentifier
    {
        MALO_ID(ReadingsColumn.MALO_ID),
        MELO_ID(ReadingsColumn.MELO_ID);

        private final ReadingsColumn column;

        ReadingIdentifier(ReadingsColumn column)
        {
            this.column = column;
        }

        public ReadingsColumn column()
        {
            return column;
        }

        public String sqlName()
        {
            return column.columnName();
        }
    }

    /** How a checked column is parsed and stored canonical. */
    public enum CheckedKind
    {
        /** Energy Identification Code, 16 characters with its check character. */
        EIC,
        /** Market location id, 11 digits with its check digit. */
        MALO,
        /** Metering location id, 33 characters. */
        MELO,
        /** A 13-digit BDEW (or DVGW) market partner code. */
        BDEW,
    }

    /** A setting that two declarations of one table give different values. */
    public record Difference(String setting, String stored, String declared)
    {
        /** "setting 'value'" of each difference, as the table stores it. */
        public static String storedValues(List<Difference> differences)
        {
            return differences.stream().map(difference -> "%s '%s'".formatted(difference.setting(), difference.stored())).collect(Collectors.joining(", "));
        }

        /** "setting 'value'" of each difference, as the other declaration gives it. */
        public static String declaredValues(List<Difference> differences)
        {
            return differences.stream().map(difference -> "%s '%s'".formatted(difference.setting(), difference.declared())).collect(Collectors.joining(", "));
        }
    }

    /**
     * Parses the settings of a declaration, named as in SQL; a setting not given takes the default shape's value.
     * Throws {@link IllegalArgumentException} naming the setting and what it takes.
     */
    public static TableShape declared(Map<String, String> settings)
    {
        for (String setting : settings.keySet()) {
            checkArgument(SETTINGS.contains(setting), "Unknown table setting '%s': a table declares %s", setting, String.join(", ", SETTINGS));
        }
        TimeModel timeModel = Optional.ofNullable(settings.get(TIME_MODEL))
                .map(value -> parse(TimeModel.class, TIME_MODEL, value, TimeModel::sqlName))
                .orElse(DEFAULT.timeModel());
        // a point table is keyed by MeLo-ID unless it says otherwise, as in the Rust MeterStore (identify_by_melo follows time_model)
        ReadingIdentifier readingId = Optional.ofNullable(settings.get(READING_ID))
                .map(value -> parse(ReadingIdentifier.class, READING_ID, value, ReadingIdentifier::sqlName))
                .orElse(timeModel == TimeModel.POINT ? ReadingIdentifier.MELO_ID : DEFAULT.readingId());
        List<String> identityColumns = Optional.ofNullable(settings.get(IDENTITY_COLUMNS)).map(TableShape::columns).orElse(DEFAULT.identityColumns());
        List<String> attributeColumns = Optional.ofNullable(settings.get(ATTRIBUTE_COLUMNS)).map(TableShape::columns).orElse(DEFAULT.attributeColumns());
        Map<String, ValueCheck> checkedColumns = Optional.ofNullable(settings.get(CHECKED_COLUMNS)).map(TableShape::checked).orElse(DEFAULT.checkedColumns());
        return new TableShape(timeModel, readingId, identityColumns, attributeColumns, checkedColumns);
    }

    /** The settings as SQL names them, each value as it is written in a declaration and shown in {@code "T$config"}. */
    public Map<String, String> settings()
    {
        Map<String, String> settings = new LinkedHashMap<>();
        settings.put(TIME_MODEL, timeModel.sqlName());
        settings.put(READING_ID, readingId.sqlName());
        settings.put(IDENTITY_COLUMNS, String.join(",", identityColumns));
        settings.put(ATTRIBUTE_COLUMNS, String.join(",", attributeColumns));
        // by column, so that two declarations listing the same checks in another order agree
        settings.put(CHECKED_COLUMNS, checkedColumns.entrySet().stream().sorted(Map.Entry.comparingByKey()).map(entry -> entry.getKey() + ":" + entry.getValue()).collect(Collectors.joining(",")));
        return ImmutableMap.copyOf(settings);
    }

    /**
     * The merge key this shape declares, as the Rust MeterStore's: malo_id, melo_id when the table is keyed by it, the
     * identity columns in declaration order, the OBIS code and "from". malo_id stays in the key of a MeLo-keyed table.
     */
    public List<String> mergeKey()
    {
        return ImmutableList.<String>builder()
                .add(ReadingsColumn.MALO_ID.columnName())
                .addAll(keyColumns())
                .add(ReadingsColumn.OBIS_CODE.columnName(), ReadingsColumn.FROM.columnName())
                .build();
    }

    /**
     * The columns of the merge key besides malo_id, obis_code and "from": melo_id when the table is keyed by it, then
     * the identity columns. Empty for the default shape. Both tiers sort a key's versions by (malo_id, obis_code, "from",
     * these, version), so the default shape's order, and every file written in it, stays as it was.
     */
    public List<String> keyColumns()
    {
        return ImmutableList.<String>builder()
                .addAll(readingId == ReadingIdentifier.MELO_ID ? List.of(ReadingsColumn.MELO_ID.columnName()) : List.of())
                .addAll(identityColumns)
                .build();
    }

    /** The Iceberg table properties that store the shape: {@code meterstore.time-model} and so on. */
    public Map<String, String> properties()
    {
        return settings().entrySet().stream().collect(ImmutableMap.toImmutableMap(entry -> propertyName(entry.getKey()), Map.Entry::getValue));
    }

    /** The Iceberg table property of {@code setting}: {@code time_model} is stored as {@code meterstore.time-model}. */
    public static String propertyName(String setting)
    {
        return PROPERTY_PREFIX + setting.replace('_', '-');
    }

    /**
     * Whether an Iceberg table's properties store a shape: what makes a table in MeterStore's namespace a readings table
     * that was created by CREATE TABLE or the archiver's {@code create}, listed in {@code meterstore.tables} or not.
     */
    public static boolean isStoredIn(Map<String, String> properties)
    {
        return SETTINGS.stream().anyMatch(setting -> properties.containsKey(propertyName(setting)));
    }

    /** The shape an Iceberg table stores in its properties; empty for a table created before shapes were declared. */
    public static Optional<TableShape> ofProperties(Map<String, String> properties)
    {
        Map<String, String> settings = new LinkedHashMap<>();
        for (String setting : SETTINGS) {
            String value = properties.get(propertyName(setting));
            if (value != null) {
                settings.put(setting, value);
            }
        }
        if (settings.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(stored(settings, "Iceberg table properties"));
    }

    /**
     * The comment of the hot tier's parent table: a header line, then one {@code setting=value} line per setting. The
     * comment lives and dies with the table (DROP TABLE removes it, pg_dump carries it) and needs no table of its own.
     */
    public String comment()
    {
        return COMMENT_HEADER + "\n" + settings().entrySet().stream().map(entry -> entry.getKey() + "=" + entry.getValue()).collect(Collectors.joining("\n"));
    }

    /** The shape a hot tier's parent comment stores; empty for no comment, or one not written by MeterStore. */
    public static Optional<TableShape> ofComment(Optional<String> comment)
    {
        if (comment.isEmpty() || !comment.get().startsWith(COMMENT_HEADER)) {
            return Optional.empty();
        }
        Map<String, String> settings = new LinkedHashMap<>();
        for (String line : comment.get().substring(COMMENT_HEADER.length()).split("\n")) {
            if (line.isBlank()) {
                continue;
            }
            int equals = line.indexOf('=');
            if (equals < 0) {
                throw new MeterstoreException(MeterstoreException.Reason.SUMMARY_MALFORMED,
                        "The hot tier's table comment has a line '%s' that is not setting=value: it was edited outside MeterStore; run the archiver's 'create' to write it again".formatted(line));
            }
            settings.put(line.substring(0, equals).trim(), line.substring(equals + 1).trim());
        }
        return Optional.of(stored(settings, "the hot tier's table comment"));
    }

    private static TableShape stored(Map<String, String> settings, String where)
    {
        try {
            return declared(settings);
        }
        catch (IllegalArgumentException e) {
            throw new MeterstoreException(MeterstoreException.Reason.SUMMARY_MALFORMED,
                    "The shape stored in %s does not parse: %s; it was written by a later release or edited outside MeterStore".formatted(where, e.getMessage()), e);
        }
    }

    /** Each setting on which {@code declared} differs from this shape, which a table stores. */
    public List<Difference> differences(TableShape declared)
    {
        List<Difference> differences = new ArrayList<>();
        Map<String, String> stored = settings();
        declared.settings().forEach((setting, value) -> {
            if (!value.equals(stored.get(setting))) {
                differences.add(new Difference(setting, stored.get(setting), value));
            }
        });
        return List.copyOf(differences);
    }

    /**
     * Refuses a declaration that differs from what the table stores: {@code where} names the declaration
     * ({@code "meterstore.tables"}, {@code "CREATE TABLE"}), the message every setting that differs and what to do.
     */
    public void requireAgrees(String table, TableShape declared, String where)
    {
        List<Difference> differences = differences(declared);
        if (differences.isEmpty()) {
            return;
        }
        throw new MeterstoreException(SHAPE_MISMATCH, "Table '%s' stores %s, but %s declares %s: a table's shape is declared once, at its creation; declare what the table stores, or drop the declaration from %s"
                .formatted(table, Difference.storedValues(differences), where, Difference.declaredValues(differences), where));
    }

    /**
     * This shape, which {@code table} stores, once the connector and the archiver may serve it: refused when
     * {@code declared} ({@code where} names the declaration) differs from it.
     */
    public TableShape requireServed(String table, Optional<TableShape> declared, String where)
    {
        declared.ifPresent(shape -> requireAgrees(table, shape, where));
        return this;
    }

    private static <E extends Enum<E>> E parse(Class<E> type, String setting, String value, java.util.function.Function<E, String> name)
    {
        for (E candidate : type.getEnumConstants()) {
            if (name.apply(candidate).equals(value.trim().toLowerCase(Locale.ROOT))) {
                return candidate;
            }
        }
        throw new IllegalArgumentException("Unknown %s '%s': write one of %s".formatted(setting, value,
                Arrays.stream(type.getEnumConstants()).map(candidate -> "'" + name.apply(candidate) + "'").collect(Collectors.joining(", "))));
    }

    private static List<String> columns(String value)
    {
        return LIST_SPLITTER.splitToStream(value).map(column -> column.toLowerCase(Locale.ROOT)).toList();
    }

    // '<column>:<check>' each, the check as the Rust MeterStore writes it (EIC:X|Y: '|' separates no list item here)
    private static Map<String, ValueCheck> checked(String value)
    {
        Map<String, ValueCheck> checked = new LinkedHashMap<>();
        for (String entry : LIST_SPLITTER.split(value)) {
            int colon = entry.indexOf(':');
            checkArgument(colon > 0, "Checked column '%s' is written <column>:<check>, the check one of EIC, EIC:<object types>, MALO, MELO, BDEW", entry);
            String column = entry.substring(0, colon).trim().toLowerCase(Locale.ROOT);
            ValueCheck parsed = ValueCheck.parse(column, entry.substring(colon + 1));
            checkArgument(checked.put(column, parsed) == null, "Checked column '%s' is declared twice: declare it once", column);
        }
        // the identifiers of every reading are checked whether listed or not
        checked.putIfAbsent(ReadingsColumn.MALO_ID.columnName(), DEFAULT.checkedColumns().get(ReadingsColumn.MALO_ID.columnName()));
        checked.putIfAbsent(ReadingsColumn.MELO_ID.columnName(), DEFAULT.checkedColumns().get(ReadingsColumn.MELO_ID.columnName()));
        return checked;
    }
}
