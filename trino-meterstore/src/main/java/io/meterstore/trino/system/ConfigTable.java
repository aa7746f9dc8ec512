package io.meterstore.trino.system;

import com.google.common.collect.ImmutableList;
import io.airlift.configuration.ConfigurationMetadata;
import io.airlift.configuration.ConfigurationMetadata.AttributeMetadata;
import io.meterstore.core.ArchivalHistory;
import io.meterstore.core.MeterstoreException;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.ResolutionRule;
import io.meterstore.core.TableShape;
import io.meterstore.trino.base.MeterstoreErrorCode;
import io.trino.spi.connector.ConnectorSession;
import io.trino.spi.connector.InMemoryRecordSet;
import io.trino.spi.connector.SchemaTableName;
import io.trino.spi.predicate.TupleDomain;

import java.lang.reflect.InvocationTargetException;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import static io.trino.spi.type.VarcharType.VARCHAR;
import static java.util.Objects.requireNonNull;

/**
 * {@code "<table>$config"}: the settings in force. Every property of the connector's configuration objects, read
 * through airlift's metadata of them (so a property added to them appears here), secrets never shown: a
 * {@code @ConfigSecuritySensitive} value is masked, and so is a password or token inside a URL. Then what the table
 * itself records: the archival step and its shape ({@link TableShape}: the time model, the merge key it declares...).
 */
final class ConfigTable
        extends MeterstoreSystemTable
{
    static final String MASK = "********";
    // user:password@ in a URL's authority, and password=, token=, secret=, key= in its parameters
    private static final Pattern URL_USER_INFO = Pattern.compile("(?<=//)[^/@?#]+@");
    private static final Pattern URL_SECRET_PARAMETER = Pattern.compile("(?i)((?:password|passwd|pwd|token|secret|key)[^=&;]*=)[^&;]*");

    private final TableInspector inspector;
    private final List<Object> configs;

    ConfigTable(SchemaTableName name, TableInspector inspector, List<Object> configs)
    {
        super(name, ImmutableList.of(
                column("table_name", VARCHAR),
                column("setting", VARCHAR),
                column("value", VARCHAR)));
        this.inspector = requireNonNull(inspector, "inspector is null");
        this.configs = ImmutableList.copyOf(requireNonNull(configs, "configs is null"));
    }

    @Override
    void addRows(InMemoryRecordSet.Builder rows, ConnectorSession session, TupleDomain<Integer> constraint)
    {
        Map<String, Optional<String>> settings = new TreeMap<>();
        for (Object config : configs) {
            settings.putAll(settings(config));
        }
        settings.forEach((setting, value) -> rows.addRow(inspector.table(), setting, value.orElse(null)));

        Optional<Duration> step;
        try {
            step = ArchivalHistory.recordedStep(inspector.icebergTable());
        }
        catch (MeterstoreException e) {
            throw MeterstoreErrorCode.toTrinoException(e);
        }
        rows.addRow(inspector.table(), "archival_step", step.map(value -> value.toSeconds() + "s").orElse("unset: recorded by the first archival (meterstore.archival-step of the archiver)"));
        // the shape the table stores, as CREATE TABLE or the archiver's create declared it
        Optional<TableShape> stored;
        try {
            stored = TableShape.ofProperties(inspector.icebergTable().properties());
        }
        catch (MeterstoreException e) {
            throw MeterstoreErrorCode.toTrinoException(e);
        }
        TableShape shape = stored.orElse(TableShape.DEFAULT);
        rows.addRow(inspector.table(), "merge_key", shape.mergeKey().stream().map(column -> column.equals(ReadingsColumn.FROM.columnName()) ? "\"from\"" : column).collect(Collectors.joining(", ")));
        rows.addRow(inspector.table(), "resolution_partition", String.join(", ", ResolutionRule.partition(shape.keyColumns())));
        shape.settings().forEach((setting, value) -> rows.addRow(inspector.table(), setting, value));
        rows.addRow(inspector.table(), "shape_stored", stored.isPresent() ? "yes" : "no: created before shapes were declared, read as the default shape; the archiver's create records it");
    }

    /** The properties of one configuration object as they are in force, by property name, secrets masked. */
    static Map<String, Optional<String>> settings(Object config)
    {
        Map<String, Optional<String>> settings = new TreeMap<>();
        for (AttributeMetadata attribute : ConfigurationMetadata.getConfigurationMetadata(config.getClass()).getAttributes().values()) {
            if (attribute.getInjectionPoint() == null || attribute.getGetter() == null || attribute.isHidden()) {
                continue;
            }
            Optional<String> value = render(get(attribute, config));
            if (attribute.isSecuritySensitive()) {
                value = value.map(_ -> MASK);
            }
            settings.put(attribute.getInjectionPoint().getProperty(), value.map(ConfigTable::redact));
        }
        return settings;
    }

    private static Object get(AttributeMetadata attribute, Object config)
    {
        try {
            return attribute.getGetter().invoke(config);
        }
        catch (IllegalAccessException | InvocationTargetException e) {
            throw new IllegalStateException("Cannot read configuration property '%s'".formatted(attribute.getInjectionPoint().getProperty()), e);
        }
    }

    private static Optional<String> render(Object value)
    {
        return switch (value) {
            case null -> Optional.empty();
            case Optional<?> optional -> optional.flatMap(ConfigTable::render);
            case Collection<?> collection -> Optional.of(collection.stream().map(String::valueOf).collect(Collectors.joining(",")));
            default -> Optional.of(value.toString());
        };
    }

    /** A value with the secrets a URL may carry masked. */
    static String redact(String value)
    {
        String withoutUser = URL_USER_INFO.matcher(value).replaceAll(MASK + "@");
        return URL_SECRET_PARAMETER.matcher(withoutUser).replaceAll("$1" + MASK);
    }
}
