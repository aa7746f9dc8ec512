package io.meterstore.testing;

import io.meterstore.core.MeteringCalendar;
import io.meterstore.core.Quality;
import io.meterstore.core.Reading;
import io.meterstore.core.Sparte;
import io.meterstore.core.Sparte.MeasurementUnit;
import io.meterstore.testing.ReadingsOracle.MeterDay;
import io.meterstore.testing.ReadingsOracle.Summary;
import io.meterstore.testing.ReadingsOracle.Totals;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static io.meterstore.testing.ReadingsOracle.View.RESOLVED;
import static io.meterstore.testing.ReadingsOracle.View.VERSIONS;
import static org.assertj.core.api.Assertions.assertThat;

final class TestReadingsOracle
{
    private static final String METER = "41373559241";
    private static final String OTHER_METER = "51238696781";
    private static final Instant T0 = Instant.parse("2026-08-20T10:00:00Z");
    private static final Instant T1 = T0.plus(Duration.ofMinutes(15));
    private static final Instant KNOWN = Instant.parse("2026-08-21T05:00:00Z");

    @Test
    void testResolution()
    {
        Reading original = reading(METER, T0, "1.000", 100, KNOWN);
        Reading correction = reading(METER, T0, "2.000", 200, KNOWN.plus(Duration.ofDays(3)));
        // a late delivery of an older version loses although it was recorded last
        Reading stale = reading(METER, T0, "9.000", 150, KNOWN.plus(Duration.ofDays(5)));
        Reading other = reading(METER, T1, "0.500", 100, KNOWN);
        Reading otherMeter = reading(OTHER_METER, T0, "0.250", 100, KNOWN);
        ReadingsOracle oracle = ReadingsOracle.of(List.of(original, correction, stale, other, otherMeter));

        assertThat(oracle.size()).isEqualTo(5);
        assertThat(oracle.versions(ReadingsOracle.all())).containsExactly(original, correction, stale, other, otherMeter);
        assertThat(oracle.resolved(ReadingsOracle.all())).containsExactly(correction, other, otherMeter);
        assertThat(oracle.summary(VERSIONS, ReadingsOracle.all())).isEqualTo(new Summary(5, new BigDecimal("12.750000"), Optional.of(T0), Optional.of(T1)));
        assertThat(oracle.summary(RESOLVED, ReadingsOracle.all())).isEqualTo(new Summary(3, new BigDecimal("2.750000"), Optional.of(T0), Optional.of(T1)));
        assertThat(oracle.count(RESOLVED, ReadingsOracle.maloId(METER))).isEqualTo(2);
        assertThat(oracle.sum(RESOLVED, ReadingsOracle.maloId(METER))).isEqualTo(new BigDecimal("2.500000"));
        assertThat(oracle.sum(VERSIONS, ReadingsOracle.maloId(METER))).isEqualTo(new BigDecimal("12.500000"));
        assertThat(oracle.minFrom(RESOLVED, ReadingsOracle.fromAtOrAfter(T1))).contains(T1);
        assertThat(oracle.maxFrom(RESOLVED, ReadingsOracle.fromBefore(T1))).contains(T0);
        assertThat(oracle.summary(RESOLVED, ReadingsOracle.fromRange(T1, T1))).isEqualTo(new Summary(0, new BigDecimal("0.000000"), Optional.empty(), Optional.empty()));
    }

    @Test
    void testMergeKeyOfTheShape()
    {
        // two tenants' readings of one (malo_id, obis_code, "from"), tenant a corrected; two MeLos' under one MaLo
        Reading tenantA = reading(METER, T0, "1.000", 100, KNOWN).withAttributes(List.of(Optional.of("a"), Optional.of("contract")));
        Reading tenantB = reading(METER, T0, "5.000", 100, KNOWN).withAttributes(List.of(Optional.of("b"), Optional.empty()));
        Reading correctedA = reading(METER, T0, "2.000", 200, KNOWN).withAttributes(List.of(Optional.of("a"), Optional.empty()));
        assertThat(ReadingsOracle.of(List.of(tenantA, tenantB, correctedA), false, 1).resolved(ReadingsOracle.all())).containsExactly(tenantB, correctedA);
        // the default key: one winner, and an attribute column (the second) never keys
        assertThat(ReadingsOracle.of(List.of(tenantA, tenantB, correctedA)).resolved(ReadingsOracle.all())).containsExactly(correctedA);
        Reading meloA = withMelo(reading(METER, T0, "1.000", 100, KNOWN), "DE0001234500000000000000000000001");
        Reading meloB = withMelo(reading(METER, T0, "3.000", 100, KNOWN), "DE0001234500000000000000000000002");
        assertThat(ReadingsOracle.of(List.of(meloA, meloB), true, 0).sum(RESOLVED, ReadingsOracle.all())).isEqualTo(new BigDecimal("4.000000"));
        assertThat(ReadingsOracle.of(List.of(meloA, meloB), true, 0).asKnownAt(KNOWN).resolved(ReadingsOracle.all())).containsExactly(meloA, meloB);
    }

    private static Reading withMelo(Reading reading, String meloId)
    {
        return new Reading(reading.maloId(), Optional.of(meloId), reading.obisCode(), reading.sparte(), reading.from(), reading.to(), reading.value(), reading.unit(), reading.quality(),
                reading.resolution(), reading.sourceKind(), reading.sourceDetail(), reading.provenance(), reading.version(), reading.versionScope(), reading.recordedAt(),
                reading.balancingDay(), reading.attributes());
    }

    @Test
    void testTieBrokenByRecordedAt()
    {
        Reading first = reading(METER, T0, "1.000", 100, KNOWN);
        Reading sameVersionLater = reading(METER, T0, "3.000", 100, KNOWN.plusSeconds(1));
        assertThat(ReadingsOracle.of(List.of(first, sameVersionLater)).resolved(ReadingsOracle.all())).containsExactly(sameVersionLater);
        assertThat(ReadingsOracle.of(List.of(sameVersionLater, first)).resolved(ReadingsOracle.all())).containsExactly(sameVersionLater);
    }

    @Test
    void testFiltersApplyToWinners()
    {
        Reading original = reading(METER, T0, "1.000", 100, KNOWN);
        Reading correction = withQuality(reading(METER, T0, "2.000", 200, KNOWN.plus(Duration.ofDays(3))), Quality.CORRECTED);
        ReadingsOracle oracle = ReadingsOracle.of(List.of(original, correction));
        // WHERE quality = 'MEASURED' over readings: the winner is CORRECTED, so nothing; the superseded original does not resurface
        assertThat(oracle.resolved(reading -> reading.quality() == Quality.MEASURED)).isEmpty();
        assertThat(oracle.versions(reading -> reading.quality() == Quality.MEASURED)).containsExactly(original);
    }

    @Test
    void testAsKnownAt()
    {
        Reading original = reading(METER, T0, "1.000", 100, KNOWN);
        Reading correction = reading(METER, T0, "2.000", 200, KNOWN.plus(Duration.ofDays(3)));
        ReadingsOracle oracle = ReadingsOracle.of(List.of(original, correction));
        assertThat(oracle.asKnownAt(KNOWN.minusNanos(1_000)).resolved(ReadingsOracle.all())).isEmpty();
        assertThat(oracle.asKnownAt(KNOWN).resolved(ReadingsOracle.all())).containsExactly(original);
        assertThat(oracle.asKnownAt(KNOWN.plus(Duration.ofDays(3))).resolved(ReadingsOracle.all())).containsExactly(correction);
    }

    @Test
    void testTotalsByBerlinDay()
    {
        // 22:30 UTC on the 24th is 00:30 CEST on the 25th; 23:30 UTC on the 25th is 00:30 CET on the 26th
        Reading lateUtc = reading(METER, Instant.parse("2026-10-24T22:30:00Z"), "1.000", 100, KNOWN);
        Reading repeatedHour = reading(METER, Instant.parse("2026-10-25T01:30:00Z"), "2.000", 100, KNOWN);
        Reading nextDay = reading(METER, Instant.parse("2026-10-25T23:30:00Z"), "4.000", 100, KNOWN);
        ReadingsOracle oracle = ReadingsOracle.of(List.of(lateUtc, repeatedHour, nextDay));
        assertThat(oracle.totalsByMeterDay(RESOLVED, ReadingsOracle.all())).containsExactly(
                Map.entry(new MeterDay(METER, LocalDate.of(2026, 10, 25)), new Totals(2, new BigDecimal("3.000000"))),
                Map.entry(new MeterDay(METER, LocalDate.of(2026, 10, 26)), new Totals(1, new BigDecimal("4.000000"))));
        assertThat(oracle.totalsByDay(VERSIONS, ReadingsOracle.all()).keySet()).containsExactly(LocalDate.of(2026, 10, 25), LocalDate.of(2026, 10, 26));
        assertThat(oracle.totalsByMeter(VERSIONS, ReadingsOracle.all())).containsExactly(Map.entry(METER, new Totals(3, new BigDecimal("7.000000"))));
    }

    @Test
    void testGeneratedWorkload()
    {
        ReadingsGenerator generator = ReadingsGenerator.builder().seed(3).meters(30).startDay(LocalDate.of(2026, 10, 24)).days(3).correctionsFraction(0.05).build();
        ReadingsOracle oracle = ReadingsOracle.of(generator);
        long versions = generator.stream().count();
        assertThat(oracle.count(VERSIONS, ReadingsOracle.all())).isEqualTo(versions);
        // one winner per interval: DST-aware, 96 + 100 + 96 per meter
        assertThat(oracle.count(RESOLVED, ReadingsOracle.all())).isEqualTo(generator.originalCount()).isEqualTo(30L * 292);
        assertThat(oracle.count(VERSIONS, ReadingsOracle.all())).isGreaterThan(oracle.count(RESOLVED, ReadingsOracle.all()));
        assertThat(oracle.totalsByMeterDay(RESOLVED, ReadingsOracle.all())).hasSize(90)
                .allSatisfy((meterDay, totals) -> assertThat(totals.count()).isEqualTo(MeteringCalendar.expectedIntervals(meterDay.day(), Duration.ofMinutes(15))));
        // corrections change sums: resolved is not the sum over first versions
        BigDecimal firstVersions = oracle.versions(ReadingsOracle.all()).stream()
                .filter(reading -> reading.quality() != Quality.CORRECTED && !reading.provenance().orElse("").contains("\"corrected\""))
                .map(Reading::value)
                .reduce(BigDecimal.ZERO, BigDecimal::add);
        assertThat(oracle.sum(RESOLVED, ReadingsOracle.all())).isNotEqualByComparingTo(firstVersions);
        assertThat(oracle.minFrom(RESOLVED, ReadingsOracle.all())).contains(generator.start());
        assertThat(oracle.maxFrom(RESOLVED, ReadingsOracle.all())).contains(generator.end().minus(Duration.ofMinutes(15)));
    }

    private static Reading reading(String maloId, Instant from, String value, long version, Instant recordedAt)
    {
        return new Reading(
                maloId,
                Optional.empty(),
                "1-1:1.29.0",
                Sparte.STROM,
                from,
                from.plus(Duration.ofMinutes(15)),
                new BigDecimal(value),
                MeasurementUnit.KWH,
                Quality.MEASURED,
                "PT15M",
                "MSCONS",
                Optional.empty(),
                Optional.empty(),
                BigInteger.valueOf(version),
                Reading.versionScope(ReadingsGenerator.DEFAULT_OPERATOR_ID, Sparte.STROM, from),
                recordedAt,
                MeteringCalendar.balancingDay(Sparte.STROM, from)).validate();
    }

    private static Reading withQuality(Reading reading, Quality quality)
    {
        return new Reading(reading.maloId(), reading.meloId(), reading.obisCode(), reading.sparte(), reading.from(), reading.to(), reading.value(), reading.unit(), quality,
                reading.resolution(), reading.sourceKind(), reading.sourceDetail(), reading.provenance(), reading.version(), reading.versionScope(), reading.recordedAt(), reading.balancingDay());
    }
}
