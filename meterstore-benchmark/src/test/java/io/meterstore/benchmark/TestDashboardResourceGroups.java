package io.meterstore.benchmark;

import io.trino.Session;
import io.trino.server.ResourceGroupInfo;
import io.trino.spi.resourcegroups.ResourceGroupId;
import io.trino.testing.DistributedQueryRunner;
import org.junit.jupiter.api.Test;

import java.util.Set;

import static io.trino.testing.TestingSession.testSessionBuilder;
import static org.assertj.core.api.Assertions.assertThat;

/** D1g's resource groups on a real engine: a query's client tags choose its group, and the reports' group admits one running query. */
final class TestDashboardResourceGroups
{
    @Test
    void testReportsRunInAGroupOfTheirOwnLimitedToOne()
            throws Exception
    {
        try (DistributedQueryRunner engine = DistributedQueryRunner.builder(testSessionBuilder().build()).setWorkerCount(0).build()) {
            DashboardResourceGroups.install(engine);
            Session report = testSessionBuilder().setClientTags(Set.of(DashboardResourceGroups.REPORT_TAG)).build();
            Session dashboard = testSessionBuilder().setClientTags(Set.of("panel")).build();

            engine.execute(report, "SELECT 'the report'");
            engine.execute(dashboard, "SELECT 'the panel'");
            engine.execute(testSessionBuilder().build(), "SELECT 'untagged'");

            assertThat(groupOf(engine, "the report")).isEqualTo("reports");
            assertThat(groupOf(engine, "the panel")).isEqualTo("dashboards");
            assertThat(groupOf(engine, "untagged")).isEqualTo("dashboards");
            var groups = engine.getCoordinator().getResourceGroupManager().orElseThrow();
            ResourceGroupInfo reports = groups.tryGetResourceGroupInfo(new ResourceGroupId("reports")).orElseThrow();
            assertThat(reports.hardConcurrencyLimit()).isEqualTo(DashboardResourceGroups.REPORTS_AT_ONCE);
            ResourceGroupInfo dashboards = groups.tryGetResourceGroupInfo(new ResourceGroupId("dashboards")).orElseThrow();
            assertThat(dashboards.hardConcurrencyLimit()).isGreaterThan(100);
        }
    }

    private static String groupOf(DistributedQueryRunner engine, String marker)
    {
        return (String) engine.execute("SELECT array_join(resource_group_id, '.') FROM system.runtime.queries WHERE query = 'SELECT ''%s''' AND state = 'FINISHED'".formatted(marker)).getOnlyValue();
    }
}
