package io.meterstore.trino;

/**
 * The reader-grace test with the cold tier in an S3 bucket: expiry and orphan removal list and delete objects through
 * the S3 server. It drives the connector's SPI directly, to order planning, archival and execution exactly; what a
 * cluster adds, splits made on one node and read on another, the oracle test on the cluster shows.
 */
final class TestMeterstoreClusterReaderGrace
        extends TestMeterstoreReaderGrace
{
    @Override
    protected TestingDeployment deployment()
    {
        return TestingDeployment.CLUSTER;
    }
}
