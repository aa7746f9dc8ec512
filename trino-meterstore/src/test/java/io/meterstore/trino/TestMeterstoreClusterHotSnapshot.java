package io.meterstore.trino;

/**
 * One query, one PostgreSQL snapshot past one machine: the coordinator holds the snapshot, the two workers import it
 * from the splits they read.
 */
final class TestMeterstoreClusterHotSnapshot
        extends TestMeterstoreHotSnapshot
{
    @Override
    protected TestingDeployment deployment()
    {
        return TestingDeployment.CLUSTER;
    }
}
