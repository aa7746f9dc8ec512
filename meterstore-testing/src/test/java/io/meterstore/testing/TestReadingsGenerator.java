package io.meterstore.testing;

import io.meterstore.core.MaloId;
import io.meterstore.core.MeloId;
import io.meterstore.core.MeteringCalendar;
import io.meterstore.core.Quality;
import io.meterstore.core.Reading;
import io.meterstore.core.Sparte;
import io.meterstore.core.Sparte.MeasurementUnit;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

final class TestReadingsGenerator
{
    private static final LocalDate SPRING = LocalDate.of(2026, 3, 29);
    private static final LocalDate AUTUMN = LocalDate.of(2026, 10, 25);

    @Test
    void testDeterministic()
    {
        List<Reading> first = generator(7, 20, AUTUMN.minusDays(1), 3).stream().toList();
        List<Reading> second = generator(7, 20, AUTUMN.minusDays(1), 3).stream().toList();
        assertThat(first).hasSizeGreaterThan(20 * (96 + 100 + 96));
        assertThat(second).isEqualTo(first);

        // another seed: the same meters and intervals, other values
        List<Reading> other = generator(8, 20, AUTUMN.minusDays(1), 3).stream().toList();
        assertThat(other.stream().map(Reading::maloId).distinct().toList()).isEqualTo(first.stream().map(Reading::maloId).distinct().toList());
        assertThat(values(other)).isNotEqualTo(values(first));
    }

    @Test
    void testDaysAndMeterDaysAreSlicesOfTheWhole()
    {
        ReadingsGenerator generator = generator(3, 12, SPRING.minusDays(1), 3);
        List<Reading> all = generator.stream().toList();
        List<Reading> byDay = new ArrayList<>();
        generator.forEachDay(byDay::addAll);
        assertThat(byDay).isEqualTo(all);

        List<Reading> byMeterDay = new ArrayList<>();
        for (LocalDate day : generator.localDays()) {
            List<Reading> dayRows = generator.readings(day);
            assertThat(generator.stream(day).toList()).isEqualTo(dayRows);
            List<Reading> meterDays = new ArrayList<>();
            for (int meter = 0; meter < generator.meters(); meter++) {
                meterDays.addAll(generator.readings(meter, day));
            }
            assertThat(meterDays).isEqualTo(dayRows);
            byMeterDay.addAll(meterDays);
            // every row of a day's batch belongs to that Berlin day
            assertThat(dayRows).allSatisfy(reading -> assertThat(MeteringCalendar.localDay(reading.from())).isEqualTo(day));
        }
        assertThat(byMeterDay).isEqualTo(all);
    }

    @Test
    void testEveryRowValidates()
    {
        ReadingsGenerator generator = ReadingsGenerator.builder()
                .seed(11)
                .meters(40)
                .startDay(LocalDate.of(2026, 10, 24))
                .days(3)
                .correctionsFraction(0.05)
                .operatorId("9912345000007")
                .build();
        long rows = 0;
        for (Reading reading : generator) {
            reading.validate();
            assertThat(reading.obisCode()).isEqualTo("1-1:1.29.0");
            assertThat(reading.sparte()).isEqualTo(Sparte.STROM);
            assertThat(reading.unit()).isEqualTo(MeasurementUnit.KWH);
            assertThat(reading.resolution()).isEqualTo("PT15M");
            assertThat(reading.sourceKind()).isEqualTo("MSCONS");
            assertThat(reading.sourceDetail()).hasValueSatisfying(detail -> assertThat(detail).startsWith("{\"message\":\"MSCONS_").endsWith("}"));
            assertThat(reading.versionScope()).isEqualTo("9912345000007:2026-10");
            assertThat(reading.balancingDay()).isEqualTo(MeteringCalendar.localDay(reading.from()));
            // values at Wh resolution, stored at the column's scale
            assertThat(reading.value().scale()).isEqualTo(6);
            assertThat(reading.value().movePointRight(3).stripTrailingZeros().scale()).isLessThanOrEqualTo(0);
            assertThat(reading.value().signum()).isGreaterThanOrEqualTo(0);
            // the version is the transaction time in epoch microseconds
            assertThat(reading.version()).isEqualTo(BigInteger.valueOf(reading.recordedAt().getEpochSecond() * 1_000_000 + reading.recordedAt().getNano() / 1_000));
            rows++;
        }
        assertThat(rows).isGreaterThan(generator.originalCount());
    }

    @Test
    void testCutAtKnownAtLeavesOutWhatArrivesLater()
    {
        // ten days; the cut falls after the eighth day's batch arrived, so later batches and some corrections are missing
        Instant knownAt = LocalDate.of(2026, 8, 28).plusDays(1).atTime(12, 0).toInstant(ZoneOffset.UTC);
        ReadingsGenerator.Builder builder = ReadingsGenerator.builder().seed(9).meters(20).startDay(LocalDate.of(2026, 8, 20)).days(10).correctionsFraction(0.1);
        List<Reading> all = builder.build().stream().toList();
        ReadingsGenerator cut = builder.knownAt(knownAt).build();

        assertThat(cut.stream().toList()).isEqualTo(all.stream().filter(reading -> !reading.recordedAt().isAfter(knownAt)).toList());
        assertThat(all).anySatisfy(reading -> assertThat(reading.recordedAt()).isAfter(knownAt));
        // corrections of the early days that arrived by then are kept, later ones are not
        long corrections = all.stream().filter(TestReadingsGenerator::isCorrection).count();
        assertThat(cut.stream().filter(TestReadingsGenerator::isCorrection).count()).isPositive().isLessThan(corrections);
        assertThat(cut.stream()).allSatisfy(reading -> assertThat(reading.recordedAt()).isBeforeOrEqualTo(knownAt));
        assertThatThrownBy(cut::originalCount).hasMessageContaining("count them");
    }

    private static boolean isCorrection(Reading reading)
    {
        return reading.provenance().filter(provenance -> provenance.contains("\"corrected\"")).isPresent();
    }

    @Test
    void testIdentifiers()
    {
        ReadingsGenerator generator = generator(1, 200, LocalDate.of(2026, 8, 20), 1);
        List<String> maloIds = generator.maloIds();
        assertThat(maloIds).hasSize(200).doesNotHaveDuplicates().allSatisfy(maloId -> assertThat(MaloId.isValid(maloId)).isTrue());
        // ascending with the meter index, so delivery order is also MaLo-ID order
        assertThat(maloIds).isSorted();
        assertThat(ReadingsGenerator.maloId(0)).isEqualTo("5100000000" + MaloId.checkDigit("5100000000"));

        Map<String, Set<String>> meloIds = new HashMap<>();
        for (Reading reading : generator) {
            meloIds.computeIfAbsent(reading.maloId(), key -> new HashSet<>()).add(reading.meloId().map(MeloId::new).map(MeloId::value).orElse("none"));
        }
        // one MeLo-ID per market location, present for most
        assertThat(meloIds.values()).allSatisfy(ids -> assertThat(ids).hasSize(1));
        long withMelo = meloIds.values().stream().filter(ids -> !ids.contains("none")).count();
        assertThat(withMelo).isBetween(170L, 199L);
    }

    @Test
    void testDaylightSavingDays()
    {
        for (LocalDate day : List.of(SPRING, AUTUMN)) {
            ReadingsGenerator generator = ReadingsGenerator.builder().seed(5).meters(10).startDay(day.minusDays(1)).days(3).correctionsFraction(0).build();
            Map<String, Map<LocalDate, Long>> perMeterDay = generator.stream()
                    .collect(Collectors.groupingBy(Reading::maloId, Collectors.groupingBy(reading -> MeteringCalendar.localDay(reading.from()), Collectors.counting())));
            long expected = day.equals(SPRING) ? 92 : 100;
            assertThat(perMeterDay).hasSize(10);
            assertThat(perMeterDay.values()).allSatisfy(days -> assertThat(days).containsExactlyInAnyOrderEntriesOf(Map.of(day.minusDays(1), 96L, day, expected, day.plusDays(1), 96L)));
            assertThat(generator.originalCount()).isEqualTo(10 * (96 + expected + 96));

            // the intervals tile the Berlin days without gap or overlap; the range in UTC follows from the local days
            List<Reading> meterDay = generator.readings(0, day);
            assertThat(meterDay).hasSize((int) expected);
            assertThat(meterDay.getFirst().from()).isEqualTo(MeteringCalendar.startOfLocalDay(day));
            assertThat(meterDay.getLast().end()).isEqualTo(MeteringCalendar.startOfLocalDay(day.plusDays(1)));
            for (int index = 1; index < meterDay.size(); index++) {
                assertThat(meterDay.get(index).from()).isEqualTo(meterDay.get(index - 1).end());
                assertThat(Duration.between(meterDay.get(index).from(), meterDay.get(index).end())).isEqualTo(Duration.ofMinutes(15));
            }
        }
        assertThat(ReadingsGenerator.builder().startDay(SPRING).days(1).build().start()).isEqualTo(Instant.parse("2026-03-28T23:00:00Z"));
        assertThat(ReadingsGenerator.builder().startDay(AUTUMN).days(1).build().end()).isEqualTo(Instant.parse("2026-10-25T23:00:00Z"));
    }

    @Test
    void testCorrections()
    {
        ReadingsGenerator generator = ReadingsGenerator.builder().seed(13).meters(100).startDay(LocalDate.of(2026, 8, 20)).days(2).correctionsFraction(0.03).build();
        Map<String, List<Reading>> versionsByKey = generator.stream()
                .collect(Collectors.groupingBy(reading -> reading.maloId() + "@" + reading.from()));
        assertThat(versionsByKey).hasSize(100 * 2 * 96);
        List<List<Reading>> corrected = versionsByKey.values().stream().filter(versions -> versions.size() > 1).toList();
        // roughly 3 % of 19,200 intervals
        assertThat(corrected.size()).isBetween(450, 720);
        for (List<Reading> versions : corrected) {
            assertThat(versions).hasSize(2);
            Reading original = versions.get(0);
            Reading correction = versions.get(1);
            assertThat(correction.version()).isGreaterThan(original.version());
            assertThat(correction.recordedAt()).isAfterOrEqualTo(original.recordedAt().plus(Duration.ofDays(1)));
            assertThat(correction.recordedAt()).isBefore(original.recordedAt().plus(Duration.ofDays(11)));
            assertThat(correction.value()).isNotEqualByComparingTo(original.value());
            assertThat(correction.quality()).isIn(Quality.CORRECTED, Quality.SUBSTITUTED);
            assertThat(correction.provenance()).hasValueSatisfying(provenance -> assertThat(provenance).contains("\"corrected\"").contains("\"supersedes\":" + original.version()));
            assertThat(correction.versionScope()).isEqualTo(original.versionScope());
            assertThat(correction.to()).isEqualTo(original.to());
        }
        // a correction comes after its original in delivery order
        List<Reading> meterDay = generator.readings(0, LocalDate.of(2026, 8, 20));
        assertThat(meterDay.subList(0, 96)).extracting(Reading::version).containsOnly(meterDay.getFirst().version());

        assertThat(ReadingsGenerator.builder().meters(50).correctionsFraction(0).build().stream().count()).isEqualTo(50 * 96);
    }

    @Test
    void testDeliveryBatches()
    {
        ReadingsGenerator generator = generator(17, 5, LocalDate.of(2026, 8, 20), 1);
        for (int meter = 0; meter < 5; meter++) {
            List<Reading> originals = generator.readings(meter, LocalDate.of(2026, 8, 20)).subList(0, 96);
            // the next morning at 05:00 UTC, meters spread over seconds
            Instant expected = Instant.parse("2026-08-21T05:00:00Z").plusSeconds(meter);
            assertThat(originals).extracting(Reading::recordedAt).containsOnly(expected);
        }
    }

    @Test
    void testRealisticValues()
    {
        ReadingsGenerator generator = ReadingsGenerator.builder().seed(21).meters(200).startDay(LocalDate.of(2026, 8, 20)).days(1).correctionsFraction(0).build();
        Map<Quality, Long> qualities = new HashMap<>();
        Map<Integer, BigDecimal> sumByHour = new HashMap<>();
        Map<String, Set<BigDecimal>> distinctPerMeter = new HashMap<>();
        Map<String, BigDecimal> totalPerMeter = new HashMap<>();
        for (Reading reading : generator) {
            qualities.merge(reading.quality(), 1L, Long::sum);
            sumByHour.merge(reading.from().atZone(MeteringCalendar.BERLIN).getHour(), reading.value(), BigDecimal::add);
            distinctPerMeter.computeIfAbsent(reading.maloId(), key -> new HashSet<>()).add(reading.value());
            totalPerMeter.merge(reading.maloId(), reading.value(), BigDecimal::add);
        }
        long rows = 200 * 96;
        // mostly measured, about half a percent each substituted and estimated
        assertThat(qualities.get(Quality.MEASURED)).isGreaterThan(rows * 97 / 100);
        assertThat(qualities.get(Quality.SUBSTITUTED)).isBetween(rows / 1000, rows / 100);
        assertThat(qualities.get(Quality.ESTIMATED)).isBetween(rows / 1000, rows / 100);
        // never constant: each meter's day has many distinct values
        assertThat(distinctPerMeter.values()).allSatisfy(values -> assertThat(values.size()).isGreaterThan(10));
        // meters differ in level by more than an order of magnitude between the smallest and the largest
        BigDecimal smallest = totalPerMeter.values().stream().min(BigDecimal::compareTo).orElseThrow();
        BigDecimal largest = totalPerMeter.values().stream().max(BigDecimal::compareTo).orElseThrow();
        assertThat(largest).isGreaterThan(smallest.multiply(BigDecimal.TEN));
        // the daily shape: the evening peak and the morning peak above the night
        BigDecimal night = sumByHour.get(3);
        assertThat(sumByHour.get(19)).isGreaterThan(night.multiply(new BigDecimal("1.5")));
        assertThat(sumByHour.get(7)).isGreaterThan(night.multiply(new BigDecimal("1.2")));
        // a household-to-small-business range per quarter-hour
        BigDecimal average = totalPerMeter.values().stream().reduce(BigDecimal.ZERO, BigDecimal::add).divide(BigDecimal.valueOf(rows), java.math.RoundingMode.HALF_UP);
        assertThat(average).isBetween(new BigDecimal("0.02"), new BigDecimal("0.5"));
    }

    @Test
    void testLazy()
    {
        // 100 k meters for a year would be 3.5 billion rows: only what is taken is produced
        ReadingsGenerator generator = ReadingsGenerator.builder().meters(100_000).startDay(LocalDate.of(2026, 1, 1)).days(365).build();
        Iterator<Reading> iterator = generator.iterator();
        List<Reading> first = new ArrayList<>();
        for (int index = 0; index < 1_000; index++) {
            first.add(iterator.next());
        }
        assertThat(first.getFirst().maloId()).isEqualTo(ReadingsGenerator.maloId(0));
        assertThat(first.stream().map(Reading::maloId).distinct().count()).isBetween(9L, 11L);
        assertThat(generator.stream(LocalDate.of(2026, 12, 31)).limit(5).toList()).hasSize(5);
    }

    @Test
    void testBuilderChecks()
    {
        assertThatThrownBy(() -> ReadingsGenerator.builder().operatorId("990000000003"))
                .hasMessage("operatorId '990000000003' must have 13 digits");
        assertThatThrownBy(() -> ReadingsGenerator.builder().meters(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ReadingsGenerator.builder().correctionsFraction(1.5)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> generator(1, 1, LocalDate.of(2026, 8, 20), 1).readings(LocalDate.of(2026, 8, 21)))
                .hasMessage("Day 2026-08-21 is not in [2026-08-20, 2026-08-21)");
    }

    private static ReadingsGenerator generator(long seed, int meters, LocalDate startDay, int days)
    {
        return ReadingsGenerator.builder().seed(seed).meters(meters).startDay(startDay).days(days).build();
    }

    private static List<BigDecimal> values(List<Reading> readings)
    {
        return readings.stream().map(Reading::value).toList();
    }
}
