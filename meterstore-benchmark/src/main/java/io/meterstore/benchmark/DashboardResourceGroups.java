package io.meterstore.benchmark;

import com.google.common.collect.ImmutableMap;
import io.trino.spi.Plugin;
import io.trino.spi.resourcegroups.ResourceGroup;
import io.trino.spi.resourcegroups.ResourceGroupConfigurationManager;
import io.trino.spi.resourcegroups.ResourceGroupConfigurationManagerContext;
import io.trino.spi.resourcegroups.ResourceGroupConfigurationManagerFactory;
import io.trino.spi.resourcegroups.ResourceGroupId;
import io.trino.spi.resourcegroups.SelectionContext;
import io.trino.spi.resourcegroups.SelectionCriteria;
import io.trino.testing.DistributedQueryRunner;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The resource groups docs/operations.md gives a deployment whose dashboards share the engine with heavy reports
 * ("Sizing for dashboards"), for D1g: queries tagged {@value #REPORT_TAG} (the JDBC driver's {@code clientTags}) run
 * in the group {@code reports}, {@value #REPORTS_AT_ONCE} at a time, the others queued in it; every other query runs
 * in {@code dashboards}, whose limits do not bind. A deployment writes them as the JSON of Trino's file-based manager;
 * that manager's plugin is not published for Trino 483, so the benchmark's engine gets the same two groups and the same
 * selector from this manager.
 */
final class DashboardResourceGroups
        implements Plugin
{
    static final String REPORT_TAG = "report";
    static final int REPORTS_AT_ONCE = 1;
    private static final String NAME = "meterstore-dashboards";
    private static final ResourceGroupId DASHBOARDS = new ResourceGroupId("dashboards");
    private static final ResourceGroupId REPORTS = new ResourceGroupId("reports");

    /** Puts {@code engine}'s queries into the two groups from now on. */
    static void install(DistributedQueryRunner engine)
    {
        engine.installPlugin(new DashboardResourceGroups());
        engine.getCoordinator().getResourceGroupManager().orElseThrow().setConfigurationManager(NAME, ImmutableMap.of());
    }

    @Override
    public Iterable<ResourceGroupConfigurationManagerFactory> getResourceGroupConfigurationManagerFactories()
    {
        return List.of(new ResourceGroupConfigurationManagerFactory()
        {
            @Override
            public String getName()
            {
                return NAME;
            }

            @Override
            public ResourceGroupConfigurationManager<?> create(Map<String, String> config, ResourceGroupConfigurationManagerContext context)
            {
                return new Manager();
            }
        });
    }

    private static final class Manager
            implements ResourceGroupConfigurationManager<ResourceGroupId>
    {
        @Override
        public void configure(ResourceGroup group, SelectionContext<ResourceGroupId> context)
        {
            // as the file manager's "softMemoryLimit": "100%" and the legacy global group's 1000 running, 5000 queued
            group.setSoftMemoryLimitBytes(Long.MAX_VALUE);
            int running = group.getId().equals(REPORTS) ? REPORTS_AT_ONCE : 1_000;
            group.setHardConcurrencyLimit(running);
            group.setSoftConcurrencyLimit(running);
            group.setMaxQueuedQueries(5_000);
        }

        @Override
        public Optional<SelectionContext<ResourceGroupId>> match(SelectionCriteria criteria)
        {
            ResourceGroupId group = criteria.getTags().contains(REPORT_TAG) ? REPORTS : DASHBOARDS;
            return Optional.of(new SelectionContext<>(group, group));
        }

        @Override
        public SelectionContext<ResourceGroupId> parentGroupContext(SelectionContext<ResourceGroupId> context)
        {
            throw new IllegalArgumentException("Both groups are root groups: %s has no parent".formatted(context.getResourceGroupId()));
        }

        @Override
        public void shutdown() {}
    }
}
