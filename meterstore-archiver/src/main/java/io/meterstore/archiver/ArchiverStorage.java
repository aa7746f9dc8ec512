package io.meterstore.archiver;

import io.meterstore.core.LocalFileIo;
import org.apache.iceberg.io.FileIO;

import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Where the archiver can write the cold tier: local directories, named by absolute {@code file:} URIs, through
 * {@link LocalFileIo}. Any other warehouse is refused here, before a command or the service touches it: LocalFileIo
 * would take {@code s3://bucket/warehouse} for a relative local path and archive where no reader looks. Writing to
 * object storage replaces {@link #fileIo()} and lifts the refusal in {@link #unwritable}, the one place that has it.
 */
public final class ArchiverStorage
{
    public static final String WAREHOUSE_PROPERTY = "meterstore.iceberg.warehouse";

    private ArchiverStorage() {}

    /** The FileIO the archiver writes data and metadata files with. */
    public static FileIO fileIo()
    {
        return new LocalFileIo();
    }

    /** Why the archiver cannot write {@code warehouse}; empty when it can. */
    public static Optional<String> unwritable(String warehouse)
    {
        URI uri;
        try {
            uri = new URI(warehouse.replace(" ", "%20"));
        }
        catch (URISyntaxException e) {
            return Optional.of("'%s' = '%s' is not a URI: name a local directory as file:///path/to/warehouse".formatted(WAREHOUSE_PROPERTY, warehouse));
        }
        if (uri.getScheme() == null) {
            String suggestion = Path.of(warehouse).isAbsolute() ? Path.of(warehouse).toUri().toString() : "file:///path/to/warehouse";
            // the catalogue stores locations as given, and Trino resolves a location only by its scheme
            return Optional.of("'%s' = '%s' is a path, not a URI: write it as '%s', which the archiver and Trino both resolve".formatted(WAREHOUSE_PROPERTY, warehouse, suggestion));
        }
        if (!uri.getScheme().equals("file")) {
            return Optional.of("'%s' = '%s' is on '%s' storage, which the archiver cannot write yet: it writes local directories only; use a file:/// directory that Trino reads at the same path"
                    .formatted(WAREHOUSE_PROPERTY, warehouse, uri.getScheme()));
        }
        if (uri.getAuthority() != null || uri.getPath() == null || !uri.getPath().startsWith("/")) {
            return Optional.of("'%s' = '%s' does not name an absolute local directory: write it as file:///path/to/warehouse".formatted(WAREHOUSE_PROPERTY, warehouse));
        }
        return Optional.empty();
    }
}
