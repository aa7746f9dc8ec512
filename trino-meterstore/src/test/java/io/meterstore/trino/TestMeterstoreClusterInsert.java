package io.meterstore.trino;

/** The INSERT test past one machine: cold rows committed to the S3 bucket, from workers, on a two-worker cluster. */
final class TestMeterstoreClusterInsert
        extends TestMeterstoreInsert
{
    @Override
    protected TestingDeployment deployment()
    {
        return TestingDeployment.CLUSTER;
    }
}
