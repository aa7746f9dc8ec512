package io.meterstore.archiver.service;

import io.meterstore.archiver.cycle.ArchiveOutcome;
import org.junit.jupiter.api.Test;

import java.util.Arrays;

import static org.assertj.core.api.Assertions.assertThat;

final class TestCycleResult
{
    @Test
    void testEveryOutcomeKindHasAResult()
    {
        for (ArchiveOutcome.Kind kind : ArchiveOutcome.Kind.values()) {
            assertThat(CycleResult.of(kind).name()).isEqualTo(kind.name());
        }
        assertThat(CycleResult.of(ArchiveOutcome.Kind.ARCHIVED)).isEqualTo(CycleResult.ARCHIVED);
    }

    @Test
    void testNames()
    {
        assertThat(Arrays.stream(CycleResult.values()).map(CycleResult::toString))
                .containsExactly("archived", "idle", "lease_contended", "deferred", "superseded", "failed");
    }
}
