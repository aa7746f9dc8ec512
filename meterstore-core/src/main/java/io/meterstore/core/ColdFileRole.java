package io.meterstore.core;

import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileScanTask;

import java.util.Optional;

import static java.util.Objects.requireNonNull;

/**
 * What a file of the resolved cold layout holds, marked in its name so that planning knows it from the manifest alone,
 * and in its Parquet footer ({@link #FOOTER_KEY}) for readers that know no Iceberg.
 * <p>
 * A month of the cold tier is resolved when every live file of it carries a role: then every (malo_id, obis_code,
 * "from", version_scope) has exactly one live row across the month's {@link #WINNERS} files (Iceberg position deletes
 * applied), and every other version lives in a {@link #SUPERSEDED} file. A file without a role (written before this
 * layout, or by another tool) makes its month unresolved, whatever its content: unknown is never taken for resolved.
 */
public enum ColdFileRole
{
    /** The winning version of every key the file holds, and no key twice across the month's winners files. */
    WINNERS("winners"),
    /** Versions that lost to a winner, kept for readings_versions and FOR TIMESTAMP AS OF. */
    SUPERSEDED("superseded"),
    /** Iceberg position deletes, each against a winner a later correction superseded; its copy lives in a superseded file. */
    POSITION_DELETES("deletes");

    /** The Parquet footer key-value entry that names the role. */
    public static final String FOOTER_KEY = "meterstore.file-role";
    private static final String EXTENSION = ".parquet";

    private final String label;

    ColdFileRole(String label)
    {
        this.label = requireNonNull(label, "label is null");
    }

    public String label()
    {
        return label;
    }

    /** The name of the {@code sequence}-th file of this role that a writer starts with {@code prefix}. */
    public String fileName(String prefix, int sequence)
    {
        requireNonNull(prefix, "prefix is null");
        return "%s-%05d.%s%s".formatted(prefix, sequence, label, EXTENSION);
    }

    /** The role a file's location names; empty for every other file, which the reader treats as unresolved. */
    public static Optional<ColdFileRole> of(String location)
    {
        requireNonNull(location, "location is null");
        String name = location.substring(location.lastIndexOf('/') + 1);
        for (ColdFileRole role : values()) {
            if (name.endsWith("." + role.label + EXTENSION)) {
                return Optional.of(role);
            }
        }
        return Optional.empty();
    }

    /**
     * Whether a month is resolved: every live file of it ({@code month}, the month's scan tasks) is one MeterStore wrote
     * in the resolved layout, winners and superseded data files, and its own position deletes (each against a
     * superseded winner whose copy it wrote). Any other file, or a delete another tool wrote, leaves the month to be
     * resolved as it is read. The reader and a correction of a resolved month decide it alike.
     */
    public static boolean resolved(Iterable<FileScanTask> month)
    {
        for (FileScanTask task : month) {
            if (of(task.file().location()).filter(role -> role != POSITION_DELETES).isEmpty()) {
                return false;
            }
            for (DeleteFile delete : task.deletes()) {
                if (!of(delete.location()).equals(Optional.of(POSITION_DELETES))) {
                    return false;
                }
            }
        }
        return true;
    }
}
