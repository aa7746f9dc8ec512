package io.meterstore.archiver;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

final class TestArchiverStorage
{
    @Test
    void testLocalDirectoriesAreWritable()
    {
        assertThat(ArchiverStorage.unwritable("file:///var/lib/meterstore/warehouse")).isEmpty();
        assertThat(ArchiverStorage.unwritable("file:/var/lib/meterstore/warehouse")).isEmpty();
        assertThat(ArchiverStorage.unwritable("file:///var/lib/meter store/warehouse")).isEmpty();
    }

    @Test
    void testEverythingElseIsRefused()
    {
        // LocalFileIo would take these for relative local paths and archive where no reader looks
        assertThat(ArchiverStorage.unwritable("s3://meterstore/warehouse")).hasValue(
                "'meterstore.iceberg.warehouse' = 's3://meterstore/warehouse' is on 's3' storage, which the archiver cannot write yet: it writes local directories only; use a file:/// directory that Trino reads at the same path");
        assertThat(ArchiverStorage.unwritable("local:///warehouse")).get().asString().contains("is on 'local' storage");
        assertThat(ArchiverStorage.unwritable("/var/lib/meterstore/warehouse")).hasValue(
                "'meterstore.iceberg.warehouse' = '/var/lib/meterstore/warehouse' is a path, not a URI: write it as 'file:///var/lib/meterstore/warehouse', which the archiver and Trino both resolve");
        assertThat(ArchiverStorage.unwritable("warehouse")).get().asString().contains("write it as 'file:///path/to/warehouse'");
        assertThat(ArchiverStorage.unwritable("file:warehouse")).get().asString().contains("does not name an absolute local directory");
        assertThat(ArchiverStorage.unwritable("file://host/warehouse")).get().asString().contains("does not name an absolute local directory");
    }
}
