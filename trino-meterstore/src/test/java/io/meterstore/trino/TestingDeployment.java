package io.meterstore.trino;

import io.meterstore.testing.TestingDatabase;
import io.meterstore.testing.TestingS3Server;
import io.meterstore.testing.TestingWarehouse;

/**
 * Where an integration test runs MeterStore. The oracle, reader-grace and INSERT tests run on both: their bodies are
 * written once, and a subclass that returns {@link #CLUSTER} runs them past one machine.
 */
enum TestingDeployment
{
    /** A local warehouse directory and one Trino node that plans and reads every split. */
    SINGLE_NODE,
    /**
     * The warehouse in a bucket of the JVM's S3 server and the hot tier in the shared PostgreSQL (storage every node
     * reaches over the network), a coordinator that schedules no splits and two workers.
     */
    CLUSTER;

    static final int CLUSTER_WORKERS = 2;

    TestingWarehouse warehouse(TestingDatabase database)
    {
        return switch (this) {
            case SINGLE_NODE -> TestingWarehouse.create(database);
            case CLUSTER -> TestingWarehouse.onS3(database, TestingS3Server.shared());
        };
    }

    MeterstoreQueryRunner.Builder queryRunner(TestingWarehouse warehouse)
    {
        return switch (this) {
            case SINGLE_NODE -> MeterstoreQueryRunner.builder(warehouse);
            case CLUSTER -> MeterstoreQueryRunner.builder(warehouse).withWorkersOnly(CLUSTER_WORKERS);
        };
    }
}
