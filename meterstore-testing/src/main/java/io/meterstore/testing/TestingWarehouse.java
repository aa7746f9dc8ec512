package io.meterstore.testing;

import io.meterstore.core.IcebergCatalogs;
import io.meterstore.core.IcebergCatalogs.JdbcCatalogSpec;
import org.apache.iceberg.catalog.Catalog;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

import static java.util.Objects.requireNonNull;

/** A local-directory Iceberg warehouse whose JDBC catalogue lives in a {@link TestingDatabase}. */
public record TestingWarehouse(TestingDatabase database, Path directory, String catalogName)
{
    public static final String CATALOG_NAME = "meterstore";

    public TestingWarehouse
    {
        requireNonNull(database, "database is null");
        requireNonNull(directory, "directory is null");
        requireNonNull(catalogName, "catalogName is null");
    }

    public static TestingWarehouse create(TestingDatabase database)
    {
        try {
            return new TestingWarehouse(database, Files.createTempDirectory("meterstore-warehouse-"), CATALOG_NAME);
        }
        catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public String location()
    {
        return directory.toAbsolutePath().toUri().toString();
    }

    public JdbcCatalogSpec catalogSpec()
    {
        return new JdbcCatalogSpec(catalogName, database.jdbcUrl(), database.user(), Optional.empty(), location());
    }

    public Catalog catalog()
    {
        return IcebergCatalogs.jdbc(catalogSpec());
    }
}
