package io.meterstore.benchmark;

import io.meterstore.benchmark.ArchiveOnceProbe.Cycle;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** A1 and W1n read the child JVM's cycles back from the lines its main prints. */
final class TestArchiveOnceProbe
{
    @Test
    void testCyclesAreReadBackAsPrinted()
    {
        String output = String.join("",
                "2026-12-07T19:35:14.225Z\tINFO\tmain\tio.meterstore.archiver\tarchived rows=1077078\n",
                "metering.readings: archived [2026-03-11T00:00:00Z, 2026-03-12T00:00:00Z): 1077078 rows in 2 files\n",
                ArchiveOnceProbe.FIGURES.formatted(ArchiveOnceProbe.RESULT_PREFIX, "ARCHIVED", 1_077_078L, 7_916_138_794L, 199_960_408L, 268_435_456L),
                "metering.readings: idle, nothing closed\n",
                ArchiveOnceProbe.FIGURES.formatted(ArchiveOnceProbe.WARM_RESULT_PREFIX, "IDLE", 0L, 5_563_396_465L, 205_225_016L, 268_435_456L));

        assertThat(ArchiveOnceProbe.cycles(output)).containsExactly(
                new Cycle("ARCHIVED", 1_077_078, 7_916_138_794L, 199_960_408, 268_435_456),
                new Cycle("IDLE", 0, 5_563_396_465L, 205_225_016, 268_435_456));
        assertThat(ArchiveOnceProbe.cycles(output)).extracting(Cycle::archived).containsExactly(true, false);
        assertThat(ArchiveOnceProbe.cycles("the JVM died before its first cycle")).isEqualTo(List.of());
    }
}
