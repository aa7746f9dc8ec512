package io.meterstore.archiver;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

final class TestArchiverStorage
{
    @Test
    void testAbsoluteFileUrisAreWritable()
    {
        assertThat(ArchiverStorage.unwritable("file:///var/lib/meterstore/warehouse", false)).isEmpty();
        assertThat(ArchiverStorage.unwritable("file:/var/lib/meterstore/warehouse", false)).isEmpty();
        assertThat(ArchiverStorage.unwritable("file:///var/lib/meter store/warehouse", false)).isEmpty();
        assertThat(ArchiverStorage.unwritable("file:///var/lib/meterstore/warehouse", true)).isEmpty();
    }

    @Test
    void testS3IsWritableOnceEnabled()
    {
        assertThat(ArchiverStorage.unwritable("s3://meterstore/warehouse", true)).isEmpty();
        assertThat(ArchiverStorage.unwritable("s3a://meterstore/warehouse", true)).isEmpty();
        assertThat(ArchiverStorage.unwritable("s3://meterstore/warehouse", false)).hasValue(
                "'meterstore.iceberg.warehouse' = 's3://meterstore/warehouse' is on S3 storage, which is not enabled: set fs.s3.enabled=true and the s3.* properties (s3.endpoint, s3.region, s3.aws-access-key, s3.aws-secret-key) as in Trino's catalog");
        assertThat(ArchiverStorage.unwritable("s3:///warehouse", true)).get().asString().contains("names no bucket");
    }

    @Test
    void testEverythingElseIsRefused()
    {
        assertThat(ArchiverStorage.unwritable("local:///warehouse", true)).get().asString().contains("is on 'local' storage");
        assertThat(ArchiverStorage.unwritable("gs://bucket/warehouse", true)).get().asString().contains("is on 'gs' storage");
        assertThat(ArchiverStorage.unwritable("/var/lib/meterstore/warehouse", false)).hasValue(
                "'meterstore.iceberg.warehouse' = '/var/lib/meterstore/warehouse' is a path, not a URI: write it as 'file:///var/lib/meterstore/warehouse', which the archiver and Trino both resolve");
        assertThat(ArchiverStorage.unwritable("warehouse", false)).get().asString().contains("write it as 'file:///path/to/warehouse'");
        assertThat(ArchiverStorage.unwritable("file:warehouse", false)).get().asString().contains("does not name an absolute local directory");
        assertThat(ArchiverStorage.unwritable("file://host/warehouse", false)).get().asString().contains("does not name an absolute local directory");
    }
}
