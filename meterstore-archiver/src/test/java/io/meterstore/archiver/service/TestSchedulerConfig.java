package io.meterstore.archiver.service;

import com.google.common.collect.ImmutableMap;
import io.airlift.units.Duration;
import io.airlift.units.MinDuration;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static io.airlift.configuration.testing.ConfigAssertions.assertFullMapping;
import static io.airlift.configuration.testing.ConfigAssertions.assertRecordedDefaults;
import static io.airlift.configuration.testing.ConfigAssertions.recordDefaults;
import static io.airlift.testing.ValidationAssertions.assertFailsValidation;
import static java.util.concurrent.TimeUnit.DAYS;
import static java.util.concurrent.TimeUnit.HOURS;
import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.MINUTES;
import static java.util.concurrent.TimeUnit.SECONDS;

final class TestSchedulerConfig
{
    @Test
    void testDefaults()
    {
        assertRecordedDefaults(recordDefaults(SchedulerConfig.class)
                .setScheduleInterval(new Duration(1, MINUTES))
                .setShutdownTimeout(new Duration(5, MINUTES))
                .setMaintenanceInterval(new Duration(1, DAYS)));
    }

    @Test
    void testExplicitPropertyMappings()
    {
        Map<String, String> properties = ImmutableMap.<String, String>builder()
                .put("meterstore.schedule-interval", "30s")
                .put("meterstore.shutdown-timeout", "10m")
                .put("meterstore.maintenance-interval", "6h")
                .buildOrThrow();

        SchedulerConfig expected = new SchedulerConfig()
                .setScheduleInterval(new Duration(30, SECONDS))
                .setShutdownTimeout(new Duration(10, MINUTES))
                .setMaintenanceInterval(new Duration(6, HOURS));

        assertFullMapping(properties, expected);
    }

    @Test
    void testScheduleIntervalIsAtLeastOneSecond()
    {
        assertFailsValidation(
                new SchedulerConfig().setScheduleInterval(new Duration(100, MILLISECONDS)),
                "scheduleInterval",
                "must be greater than or equal to 1s",
                MinDuration.class);
    }

    @Test
    void testMaintenanceIntervalIsAtLeastOneMinute()
    {
        assertFailsValidation(
                new SchedulerConfig().setMaintenanceInterval(new Duration(30, SECONDS)),
                "maintenanceInterval",
                "must be greater than or equal to 1m",
                MinDuration.class);
    }
}
