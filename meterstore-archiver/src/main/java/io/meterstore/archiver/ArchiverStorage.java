package io.meterstore.archiver;

import com.google.common.collect.ImmutableSet;

import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.Optional;
import java.util.Set;

/**
 * Which warehouses the archiver can write: absolute local directories ({@code file:///...}) and, with the S3 file system
 * enabled ({@code fs.s3.enabled}), S3-compatible object storage ({@code s3://bucket/path}). Both are written through
 * meterstore-storage's file systems, configured by the same {@code fs.*} and {@code s3.*} keys as the connector. Any
 * other warehouse is refused here, before a command or the service touches it, naming the property to set.
 */
public final class ArchiverStorage
{
    public static final String WAREHOUSE_PROPERTY = "meterstore.iceberg.warehouse";

    // the schemes Trino's S3 file system serves; the catalogue stores the location as given and Trino reads it back by it
    private static final Set<String> S3_SCHEMES = ImmutableSet.of("s3", "s3a", "s3n");

    private ArchiverStorage() {}

    /** Why the archiver cannot write {@code warehouse} with S3 enabled or not; empty when it can. */
    public static Optional<String> unwritable(String warehouse, boolean s3Enabled)
    {
        URI uri;
        try {
            uri = new URI(warehouse.replace(" ", "%20"));
        }
        catch (URISyntaxException e) {
            return Optional.of("'%s' = '%s' is not a URI: name a local directory as file:///path/to/warehouse or a bucket as s3://bucket/warehouse".formatted(WAREHOUSE_PROPERTY, warehouse));
        }
        if (uri.getScheme() == null) {
            String suggestion = Path.of(warehouse).isAbsolute() ? Path.of(warehouse).toUri().toString() : "file:///path/to/warehouse";
            // the catalogue stores locations as given, and Trino resolves a location only by its scheme
            return Optional.of("'%s' = '%s' is a path, not a URI: write it as '%s', which the archiver and Trino both resolve".formatted(WAREHOUSE_PROPERTY, warehouse, suggestion));
        }
        if (S3_SCHEMES.contains(uri.getScheme())) {
            if (!s3Enabled) {
                return Optional.of("'%s' = '%s' is on S3 storage, which is not enabled: set fs.s3.enabled=true and the s3.* properties (s3.endpoint, s3.region, s3.aws-access-key, s3.aws-secret-key) as in Trino's catalog"
                        .formatted(WAREHOUSE_PROPERTY, warehouse));
            }
            if (uri.getAuthority() == null) {
                return Optional.of("'%s' = '%s' names no bucket: write it as s3://bucket/warehouse".formatted(WAREHOUSE_PROPERTY, warehouse));
            }
            return Optional.empty();
        }
        if (!uri.getScheme().equals("file")) {
            return Optional.of("'%s' = '%s' is on '%s' storage, which the archiver cannot write: use a file:/// directory that Trino reads at the same path, or s3://bucket/warehouse with fs.s3.enabled=true"
                    .formatted(WAREHOUSE_PROPERTY, warehouse, uri.getScheme()));
        }
        if (uri.getAuthority() != null || uri.getPath() == null || !uri.getPath().startsWith("/")) {
            return Optional.of("'%s' = '%s' does not name an absolute local directory: write it as file:///path/to/warehouse".formatted(WAREHOUSE_PROPERTY, warehouse));
        }
        return Optional.empty();
    }
}
