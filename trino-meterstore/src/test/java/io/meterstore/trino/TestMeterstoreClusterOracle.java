package io.meterstore.trino;

import io.trino.Session;
import io.trino.testing.DistributedQueryRunner;
import io.trino.testing.MaterializedRow;
import io.trino.testing.QueryRunner.MaterializedResultWithPlan;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The oracle test past one machine: the cold tier in an S3 bucket, the hot tier in PostgreSQL, splits read by two
 * workers while the coordinator only plans. Fewer meters than on one node: the point here is where the splits run.
 */
final class TestMeterstoreClusterOracle
        extends TestMeterstoreOracle
{
    @Override
    protected TestingDeployment deployment()
    {
        return TestingDeployment.CLUSTER;
    }

    @Override
    protected int meters()
    {
        return 24;
    }

    @Override
    protected int[] archivalSteps()
    {
        // past one machine the steps themselves are not what is tested: the first day, then most of the rest
        return new int[] {1, 27};
    }

    @Test
    void testEveryWorkerReadsSplits()
    {
        DistributedQueryRunner queryRunner = queryRunner();
        Session session = queryRunner.getDefaultSession();
        MaterializedResultWithPlan result = queryRunner.executeWithPlan(session, "SELECT count(*) FROM readings_versions");
        assertThat((long) result.result().getOnlyValue()).isPositive();

        // stage 1 scans the table (stage 0 sums the partial counts): its tasks, by node, with the splits each completed
        List<MaterializedRow> scans = queryRunner.execute(session, """
                SELECT t.node_id, n.coordinator, t.completed_splits
                FROM system.runtime.tasks t JOIN system.runtime.nodes n ON n.node_id = t.node_id
                WHERE t.query_id = '%1$s' AND t.stage_id = '%1$s.1'""".formatted(result.queryId())).getMaterializedRows();
        assertThat(scans).hasSize(TestingDeployment.CLUSTER_WORKERS);
        assertThat(scans).allSatisfy(task -> {
            assertThat(task.getField(1)).as("on the coordinator").isEqualTo(false);
            assertThat((long) task.getField(2)).as("splits completed by node %s", task.getField(0)).isPositive();
        });
    }
}
