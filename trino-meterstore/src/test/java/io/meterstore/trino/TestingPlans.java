package io.meterstore.trino;

import com.google.common.collect.ImmutableMap;
import io.meterstore.trino.handle.MeterstoreTableHandle;
import io.trino.execution.QueryInfo;
import io.trino.operator.OperatorStats;
import io.trino.plugin.base.metrics.LongCount;
import io.trino.spi.metrics.Metric;
import io.trino.spi.metrics.Metrics;
import io.trino.sql.planner.optimizations.PlanNodeSearcher;
import io.trino.sql.planner.plan.TableScanNode;
import io.trino.testing.DistributedQueryRunner;
import io.trino.testing.QueryRunner.MaterializedResultWithPlan;

import java.util.List;
import java.util.Map;

/** What the plan of a query that ran shows of the connector's work. */
final class TestingPlans
{
    private TestingPlans() {}

    /** The handles the query read, as the connector left them after pushdown; none where the planner removed a scan. */
    static List<MeterstoreTableHandle> scannedTables(MaterializedResultWithPlan result)
    {
        return PlanNodeSearcher.searchFrom(result.queryPlan().orElseThrow().getRoot())
                .whereIsInstanceOfAny(TableScanNode.class)
                .findAll().stream()
                .map(scan -> (MeterstoreTableHandle) ((TableScanNode) scan).getTable().connectorHandle())
                .toList();
    }

    /** The connector's counts of a query that ran: every operator's connector metrics, which hold its page sources' and split sources'. */
    static Map<String, Long> connectorCounts(DistributedQueryRunner queryRunner, MaterializedResultWithPlan result)
    {
        QueryInfo queryInfo = queryRunner.getCoordinator().getQueryManager().getFullQueryInfo(result.queryId());
        Metrics metrics = queryInfo.getQueryStats().getOperatorSummaries().stream()
                .map(OperatorStats::getConnectorMetrics)
                .reduce(Metrics.EMPTY, Metrics::mergeWith);
        ImmutableMap.Builder<String, Long> counts = ImmutableMap.builder();
        for (Map.Entry<String, Metric<?>> entry : metrics.getMetrics().entrySet()) {
            if (entry.getValue() instanceof LongCount count) {
                counts.put(entry.getKey(), count.getTotal());
            }
        }
        return counts.buildOrThrow();
    }
}
