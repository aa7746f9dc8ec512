package io.meterstore.trino;

import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;

/**
 * The reader-grace test with the cold tier in an S3 bucket. It drives the connector's SPI directly, to order planning,
 * archival and execution exactly; what a cluster adds, splits made on one node and read on another, the oracle test on
 * the cluster shows.
 */
final class TestMeterstoreClusterReaderGrace
        extends TestMeterstoreReaderGrace
{
    @Override
    protected TestingDeployment deployment()
    {
        return TestingDeployment.CLUSTER;
    }

    @Test
    @Disabled("reads the warehouse's files by local path; not yet written for an S3 warehouse")
    @Override
    void testExpiryAndOrphanRemovalDuringAQueryPlannedBeforeThem()
    {
    }
}
