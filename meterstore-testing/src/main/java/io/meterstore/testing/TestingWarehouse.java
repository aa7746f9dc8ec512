package io.meterstore.testing;

import com.google.common.collect.ImmutableMap;
import com.google.common.io.MoreFiles;
import com.google.common.io.RecursiveDeleteOption;
import io.meterstore.core.IcebergCatalogs;
import io.meterstore.core.IcebergCatalogs.JdbcCatalogSpec;
import io.meterstore.core.IcebergCatalogs.RestCatalogSpec;
import io.meterstore.core.LocalFileIo;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.io.FileIO;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;

import static java.util.Objects.requireNonNull;

/**
 * An Iceberg warehouse whose JDBC catalogue lives in a {@link TestingDatabase}: a local directory, or a bucket of a
 * {@link TestingS3Server} ({@link #onS3}); or whose catalogue is a REST catalogue ({@link TestingRestCatalog}) over
 * that database and bucket.
 */
public record TestingWarehouse(TestingDatabase database, Path directory, String catalogName, Optional<TestingBucket> bucket, Optional<String> restCatalogUri)
{
    public static final String CATALOG_NAME = "meterstore";

    /** A bucket of an S3 server holding the warehouse under {@code warehouse/}. */
    public record TestingBucket(TestingS3Server server, String name)
    {
        public TestingBucket
        {
            requireNonNull(server, "server is null");
            requireNonNull(name, "name is null");
        }

        public String location()
        {
            return "s3://%s/warehouse".formatted(name);
        }
    }

    public TestingWarehouse
    {
        requireNonNull(database, "database is null");
        requireNonNull(directory, "directory is null");
        requireNonNull(catalogName, "catalogName is null");
        requireNonNull(bucket, "bucket is null");
        requireNonNull(restCatalogUri, "restCatalogUri is null");
    }

    public TestingWarehouse(TestingDatabase database, Path directory, String catalogName)
    {
        this(database, directory, catalogName, Optional.empty(), Optional.empty());
    }

    /** This warehouse with its tables in the REST catalogue at {@code uri}. */
    public TestingWarehouse withRestCatalog(String uri)
    {
        return new TestingWarehouse(database, directory, catalogName, bucket, Optional.of(uri));
    }

    public static TestingWarehouse create(TestingDatabase database)
    {
        return new TestingWarehouse(database, temporaryDirectory(), CATALOG_NAME);
    }

    /** A warehouse in a fresh bucket of {@code server}. */
    public static TestingWarehouse onS3(TestingDatabase database, TestingS3Server server)
    {
        return new TestingWarehouse(database, temporaryDirectory(), CATALOG_NAME, Optional.of(new TestingBucket(server, server.createBucket(database.name()))), Optional.empty());
    }

    public String location()
    {
        return bucket.map(TestingBucket::location).orElseGet(() -> directory.toAbsolutePath().toUri().toString());
    }

    /** The {@code fs.*} and {@code s3.*} properties a connector or archiver needs to reach this warehouse. */
    public Map<String, String> storageProperties()
    {
        return bucket.map(value -> value.server().properties()).orElse(ImmutableMap.of());
    }

    /** The catalogue keys beyond the JDBC defaults: the REST catalogue's type and URI, if the tables are there. */
    public Map<String, String> catalogProperties()
    {
        return restCatalogUri
                .map(uri -> ImmutableMap.of("meterstore.iceberg.catalog-type", "REST", "meterstore.iceberg.rest-catalog.uri", uri))
                .orElse(ImmutableMap.of());
    }

    public JdbcCatalogSpec catalogSpec()
    {
        return new JdbcCatalogSpec(catalogName, database.jdbcUrl(), database.user(), Optional.empty(), location());
    }

    /** The FileIO that reads and writes this warehouse. */
    public FileIO fileIo()
    {
        return bucket.map(value -> value.server().fileIo()).orElseGet(LocalFileIo::new);
    }

    public Catalog catalog()
    {
        return restCatalogUri
                .map(uri -> IcebergCatalogs.rest(new RestCatalogSpec(catalogName, uri, Optional.empty(), Optional.empty(), Optional.empty()), properties -> fileIo()))
                .orElseGet(() -> IcebergCatalogs.jdbc(catalogSpec(), properties -> fileIo()));
    }

    /**
     * A fresh directory, deleted when the JVM exits, as its test database is dropped: kept too with
     * {@code -Dmeterstore.keep-databases=true}, since the kept catalogue names its files.
     */
    private static Path temporaryDirectory()
    {
        Path directory;
        try {
            directory = Files.createTempDirectory("meterstore-warehouse-");
        }
        catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        if (!Boolean.getBoolean("meterstore.keep-databases")) {
            Runtime.getRuntime().addShutdownHook(new Thread(() -> deleteQuietly(directory)));
        }
        return directory;
    }

    private static void deleteQuietly(Path directory)
    {
        try {
            MoreFiles.deleteRecursively(directory, RecursiveDeleteOption.ALLOW_INSECURE);
        }
        catch (IOException | RuntimeException ignored) {
            // a temporary directory left behind
        }
    }
}
