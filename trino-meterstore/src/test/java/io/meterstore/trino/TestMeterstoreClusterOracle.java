package io.meterstore.trino;

import io.trino.Session;
import io.trino.testing.DistributedQueryRunner;
import io.trino.testing.MaterializedResult;
import io.trino.testing.MaterializedRow;
import io.trino.testing.QueryRunner.MaterializedResultWithPlan;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.PositionOutputStream;
import org.apache.iceberg.io.SeekableInputStream;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import java.io.IOException;
import java.util.List;

import static io.meterstore.trino.MeterstoreQueryRunner.SCHEMA;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The oracle test past one machine: the cold tier in an S3 bucket, the hot tier in PostgreSQL, splits read by two
 * workers while the coordinator only plans. Fewer meters than on one node: the point here is where the splits run.
 */
// the storage test runs last, once the oracle test has archived the cold tier it reads
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
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

    @Test
    @Order(Integer.MAX_VALUE)
    void testWorkersReadColdFilesFromStorage()
            throws IOException
    {
        String sql = "SELECT count(*), sum(value) FROM readings_versions";
        DistributedQueryRunner queryRunner = queryRunner();
        MaterializedResult expected = queryRunner.execute(sql);
        DataFile file;
        try (CloseableIterable<FileScanTask> tasks = warehouse().catalog().loadTable(TableIdentifier.of(SCHEMA, TestingMeterstoreTables.TABLE)).newScan().planFiles()) {
            file = tasks.iterator().next().file();
        }
        FileIO io = warehouse().fileIo();
        byte[] content;
        try (SeekableInputStream input = io.newInputFile(file.location()).newStream()) {
            content = input.readAllBytes();
        }

        // only the coordinator keeps files in memory: the workers that read the splits read the bucket, so an object gone
        // since the last query fails the next one, never answered from a copy
        io.deleteFile(file.location());
        try {
            assertThatThrownBy(() -> queryRunner.execute(sql))
                    .hasMessageContaining("Data file '%s' of the pinned snapshot does not exist".formatted(file.location()));
        }
        finally {
            try (PositionOutputStream output = io.newOutputFile(file.location()).createOrOverwrite()) {
                output.write(content);
            }
        }
        assertThat(queryRunner.execute(sql)).isEqualTo(expected);
    }
}
