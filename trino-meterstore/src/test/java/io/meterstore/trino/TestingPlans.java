package io.meterstore.trino;

import io.meterstore.trino.handle.MeterstoreTableHandle;
import io.trino.sql.planner.optimizations.PlanNodeSearcher;
import io.trino.sql.planner.plan.TableScanNode;
import io.trino.testing.QueryRunner.MaterializedResultWithPlan;

import java.util.List;

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
}
