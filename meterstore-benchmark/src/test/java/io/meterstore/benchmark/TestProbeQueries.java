package io.meterstore.benchmark;

import io.meterstore.benchmark.ProbeQueries.Engine;
import io.meterstore.benchmark.ProbeQueries.Probe;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

final class TestProbeQueries
{
    @Test
    void testParsesOneStatementPerLineForEitherEngine()
    {
        List<Probe> probes = ProbeQueries.parse(List.of(
                "-- the hot part alone",
                "",
                "SET SESSION meterstore.aggregation_pushdown_enabled = false",
                "  SELECT count(*) FROM readings_versions  ",
                "postgresql: SELECT count(*) FROM metering.readings",
                "PostgreSQL:EXPLAIN SELECT 1"));
        assertThat(probes).containsExactly(
                new Probe(Engine.TRINO, "SET SESSION meterstore.aggregation_pushdown_enabled = false"),
                new Probe(Engine.TRINO, "SELECT count(*) FROM readings_versions"),
                new Probe(Engine.POSTGRESQL, "SELECT count(*) FROM metering.readings"),
                new Probe(Engine.POSTGRESQL, "EXPLAIN SELECT 1"));
    }
}
