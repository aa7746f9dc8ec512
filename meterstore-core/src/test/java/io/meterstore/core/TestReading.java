package io.meterstore.core;

import io.meterstore.core.Sparte.MeasurementUnit;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

final class TestReading
{
    private static final String OPERATOR = "9900000000003";
    private static final Instant FROM = Instant.parse("2026-08-20T10:15:00Z");

    @Test
    void testValid()
    {
        Reading reading = reading(Sparte.STROM, MeasurementUnit.KWH, FROM, FROM.plus(Duration.ofMinutes(15)), new BigDecimal("0.123000"));
        assertThat(reading.validate()).isSameAs(reading);
        assertThat(reading.versionScope()).isEqualTo("9900000000003:2026-08");
        assertThat(reading.balancingDay()).isEqualTo(LocalDate.of(2026, 8, 20));
        // the same with the other units each commodity allows
        reading(Sparte.GAS, MeasurementUnit.M3, FROM, FROM.plus(Duration.ofMinutes(15)), BigDecimal.ONE).validate();
        reading(Sparte.GAS, MeasurementUnit.KWH, FROM, FROM.plus(Duration.ofMinutes(15)), BigDecimal.ONE).validate();
        reading(Sparte.WASSER, MeasurementUnit.M3, FROM, FROM.plus(Duration.ofMinutes(15)), BigDecimal.ONE).validate();
        reading(Sparte.WAERME, MeasurementUnit.KWH, FROM, FROM.plus(Duration.ofMinutes(15)), BigDecimal.ONE).validate();
    }

    @Test
    void testUnitOfSparte()
    {
        assertThatThrownBy(() -> reading(Sparte.STROM, MeasurementUnit.M3, FROM, FROM.plus(Duration.ofMinutes(15)), BigDecimal.ONE).validate())
                .isInstanceOf(InvalidReadingException.class)
                .hasMessage("Unit M3 does not fit sparte STROM: electricity is KWH, MWH, KW, KVARH or KVAR; under OBIS code '1-1:1.29.0', which measures an energy or a volume, use KWH or MWH");
        assertThatThrownBy(() -> reading(Sparte.WASSER, MeasurementUnit.KWH, FROM, FROM.plus(Duration.ofMinutes(15)), BigDecimal.ONE).validate())
                .hasMessage("Unit KWH does not fit sparte WASSER: water is M3; under OBIS code '1-1:1.29.0', which measures an energy or a volume, use M3");
        assertThatThrownBy(() -> reading(Sparte.WAERME, MeasurementUnit.M3, FROM, FROM.plus(Duration.ofMinutes(15)), BigDecimal.ONE).validate())
                .hasMessage("Unit M3 does not fit sparte WAERME: heat is KWH, MWH or KW; under OBIS code '1-1:1.29.0', which measures an energy or a volume, use KWH or MWH");
        assertThatThrownBy(() -> withObis(reading(Sparte.GAS, MeasurementUnit.KVARH, FROM, FROM.plus(Duration.ofMinutes(15)), BigDecimal.ONE), "7-20:3.1.0").validate())
                .hasMessage("Unit KVARH does not fit sparte GAS: gas is KWH, MWH, KW or M3; under OBIS code '7-20:3.1.0', which measures an energy or a volume, use KWH, MWH or M3");
    }

    @Test
    void testUnitOfObisCode()
    {
        // energy in kWh or MWh, a maximum register (D = 6) in kW, reactive energy (C = 3 to 8) in kvarh, its maximum in kvar
        for (String accepted : List.of("1-1:1.29.0 KWH", "1-1:1.29.0 MWH", "1-1:2.8.1 MWH", "1-1:1.6.0 KW", "1-1:2.6.1 KW", "1-1:3.29.0 KVARH", "1-1:8.8.0 KVARH",
                "1-1:4.6.0 KVAR", "6-0:1.6.0 KW", "7-20:3.1.0 M3", "7-0:3.29.0 M3", "7-20:1.6.0 KW")) {
            String[] code = accepted.split(" ");
            Sparte sparte = code[0].startsWith("1-") ? Sparte.STROM : code[0].startsWith("6-") ? Sparte.WAERME : Sparte.GAS;
            withObis(reading(sparte, MeasurementUnit.valueOf(code[1]), FROM, FROM.plus(Duration.ofMinutes(15)), BigDecimal.ONE), code[0]).validate();
        }
        assertUnitRefused(Sparte.STROM, "1-1:1.6.0", MeasurementUnit.KWH, "Unit KWH does not fit OBIS code '1-1:1.6.0' of sparte STROM: the code measures a demand (maximum register, D = 6); use KW");
        assertUnitRefused(Sparte.STROM, "1-1:1.29.0", MeasurementUnit.KW, "Unit KW does not fit OBIS code '1-1:1.29.0' of sparte STROM: the code measures an energy or a volume; use KWH or MWH");
        assertUnitRefused(Sparte.STROM, "1-1:1.29.0", MeasurementUnit.KVARH, "Unit KVARH does not fit OBIS code '1-1:1.29.0' of sparte STROM: the code measures an energy or a volume; use KWH or MWH");
        assertUnitRefused(Sparte.STROM, "1-1:3.29.0", MeasurementUnit.KWH, "Unit KWH does not fit OBIS code '1-1:3.29.0' of sparte STROM: the code measures reactive energy (electricity, C = 3 to 8); use KVARH");
        assertUnitRefused(Sparte.STROM, "1-1:5.29.0", MeasurementUnit.KVAR, "Unit KVAR does not fit OBIS code '1-1:5.29.0' of sparte STROM: the code measures reactive energy (electricity, C = 3 to 8); use KVARH");
        assertUnitRefused(Sparte.STROM, "1-1:3.6.0", MeasurementUnit.KVARH, "Unit KVARH does not fit OBIS code '1-1:3.6.0' of sparte STROM: the code measures a reactive demand (electricity, C = 3 to 8, maximum register D = 6); use KVAR");
        assertUnitRefused(Sparte.STROM, "1-1:3.6.0", MeasurementUnit.KW, "Unit KW does not fit OBIS code '1-1:3.6.0' of sparte STROM: the code measures a reactive demand (electricity, C = 3 to 8, maximum register D = 6); use KVAR");
        assertUnitRefused(Sparte.WAERME, "6-0:1.6.0", MeasurementUnit.KWH, "Unit KWH does not fit OBIS code '6-0:1.6.0' of sparte WAERME: the code measures a demand (maximum register, D = 6); use KW");
        // water has no demand unit
        assertUnitRefused(Sparte.WASSER, "8-0:1.6.0", MeasurementUnit.M3,
                "Unit M3 does not fit OBIS code '8-0:1.6.0' of sparte WASSER: the code measures a demand (maximum register, D = 6), for which water has no unit (water is M3); store it under a code water measures");
    }

    private static void assertUnitRefused(Sparte sparte, String obisCode, MeasurementUnit unit, String message)
    {
        assertThatThrownBy(() -> withObis(reading(sparte, unit, FROM, FROM.plus(Duration.ofMinutes(15)), BigDecimal.ONE), obisCode).validate())
                .isInstanceOf(InvalidReadingException.class)
                .hasMessage(message);
    }

    private static Reading withObis(Reading reading, String obisCode)
    {
        return new Reading(reading.maloId(), reading.meloId(), obisCode, reading.sparte(), reading.from(), reading.to(), reading.value(), reading.unit(), reading.quality(),
                reading.resolution(), reading.sourceKind(), reading.sourceDetail(), reading.provenance(), reading.version(), reading.versionScope(), reading.recordedAt(), reading.balancingDay());
    }

    @Test
    void testMisalignedInterval()
    {
        Instant from = FROM.plus(Duration.ofMinutes(7));
        assertThatThrownBy(() -> reading(Sparte.STROM, MeasurementUnit.KWH, from, from.plus(Duration.ofMinutes(15)), BigDecimal.ONE).validate())
                .isInstanceOf(InvalidReadingException.class)
                .hasMessage("Interval [2026-08-20T10:22:00Z, 2026-08-20T10:37:00Z) of MaLo-ID '41373559241' is not on the PT15M grid: it must start at a multiple of PT15M and last exactly PT15M");
        Instant fractional = FROM.plusNanos(1_000);
        assertThatThrownBy(() -> reading(Sparte.STROM, MeasurementUnit.KWH, fractional, fractional.plus(Duration.ofMinutes(15)), BigDecimal.ONE).validate())
                .hasMessageContaining("is not on the PT15M grid");
    }

    @Test
    void testWrongDuration()
    {
        assertThatThrownBy(() -> reading(Sparte.STROM, MeasurementUnit.KWH, FROM, FROM.plus(Duration.ofMinutes(30)), BigDecimal.ONE).validate())
                .isInstanceOf(InvalidReadingException.class)
                .hasMessage("Interval [2026-08-20T10:15:00Z, 2026-08-20T10:45:00Z) of MaLo-ID '41373559241' is not on the PT15M grid: it must start at a multiple of PT15M and last exactly PT15M");
        assertThatThrownBy(() -> reading(Sparte.STROM, MeasurementUnit.KWH, FROM, FROM, BigDecimal.ONE).validate())
                .hasMessageContaining("is empty or reversed");
        assertThatThrownBy(() -> reading(Sparte.STROM, MeasurementUnit.KWH, FROM, FROM.minus(Duration.ofMinutes(15)), BigDecimal.ONE).validate())
                .hasMessageContaining("is empty or reversed");
    }

    @Test
    void testResolution()
    {
        assertThat(Reading.resolutionDuration("PT15M")).isEqualTo(Duration.ofMinutes(15));
        assertThat(Reading.resolutionDuration("PT1H")).isEqualTo(Duration.ofHours(1));
        assertThatThrownBy(() -> Reading.resolutionDuration("PT7M"))
                .hasMessage("Resolution 'PT7M' must divide a day");
        assertThatThrownBy(() -> Reading.resolutionDuration("15min"))
                .hasMessage("Resolution '15min' is not an ISO-8601 duration such as PT15M");
    }

    @Test
    void testVersionScopeOfAnotherMonth()
    {
        Reading reading = reading(Sparte.STROM, MeasurementUnit.KWH, FROM, FROM.plus(Duration.ofMinutes(15)), BigDecimal.ONE);
        Reading otherMonth = withScope(reading, OPERATOR + ":2026-07");
        assertThatThrownBy(otherMonth::validate)
                .isInstanceOf(InvalidReadingException.class)
                .hasMessage("Version scope '9900000000003:2026-07' of MaLo-ID '41373559241' does not cover the interval at 2026-08-20T10:15:00Z, whose settlement month is 2026-08");
        assertThatThrownBy(() -> withScope(reading, "990000000003:2026-08").validate())
                .hasMessage("Version scope '990000000003:2026-08' of MaLo-ID '41373559241' must be '<13-digit operator id>:<YYYY-MM>'");
        // the settlement month is the Berlin month: 2026-08-31T22:00Z is already September in Berlin
        Instant september = Instant.parse("2026-08-31T22:00:00Z");
        assertThat(Reading.versionScope(OPERATOR, Sparte.STROM, september)).isEqualTo("9900000000003:2026-09");
        assertThat(Reading.versionScope(OPERATOR, Sparte.STROM, september.minus(Duration.ofMinutes(15)))).isEqualTo("9900000000003:2026-08");
        // for gas the month turns at 06:00 local time: 1 March 04:30 CET still belongs to February's gas day
        Instant gasMorning = Instant.parse("2026-03-01T04:30:00Z");
        assertThat(Reading.versionScope(OPERATOR, Sparte.GAS, gasMorning)).isEqualTo("9900000000003:2026-02");
        assertThat(Reading.versionScope(OPERATOR, Sparte.STROM, gasMorning)).isEqualTo("9900000000003:2026-03");
        assertThatThrownBy(() -> withScope(reading(Sparte.GAS, MeasurementUnit.M3, gasMorning, gasMorning.plus(Duration.ofMinutes(15)), BigDecimal.ONE), OPERATOR + ":2026-03").validate())
                .hasMessageContaining("whose settlement month is 2026-02");
    }

    @Test
    void testValuePrecision()
    {
        assertThatThrownBy(() -> reading(Sparte.STROM, MeasurementUnit.KWH, FROM, FROM.plus(Duration.ofMinutes(15)), new BigDecimal("0.1234567")).validate())
                .isInstanceOf(InvalidReadingException.class)
                .hasMessage("Value 0.1234567 of MaLo-ID '41373559241' at 2026-08-20T10:15:00Z has more than 6 decimal places");
        // trailing zeros are no extra precision
        reading(Sparte.STROM, MeasurementUnit.KWH, FROM, FROM.plus(Duration.ofMinutes(15)), new BigDecimal("0.1234560")).validate();
        // decimal(18,6) holds 12 integer digits
        reading(Sparte.STROM, MeasurementUnit.KWH, FROM, FROM.plus(Duration.ofMinutes(15)), new BigDecimal("999999999999.999999")).validate();
        reading(Sparte.STROM, MeasurementUnit.KWH, FROM, FROM.plus(Duration.ofMinutes(15)), new BigDecimal("-999999999999.999999")).validate();
        assertThatThrownBy(() -> reading(Sparte.STROM, MeasurementUnit.KWH, FROM, FROM.plus(Duration.ofMinutes(15)), new BigDecimal("1000000000000")).validate())
                .isInstanceOf(InvalidReadingException.class)
                .hasMessage("Value 1000000000000 of MaLo-ID '41373559241' at 2026-08-20T10:15:00Z does not fit decimal(18,6)");
    }

    @Test
    void testVersionRange()
    {
        Reading reading = reading(Sparte.STROM, MeasurementUnit.KWH, FROM, FROM.plus(Duration.ofMinutes(15)), BigDecimal.ONE);
        withVersion(reading, BigInteger.TEN.pow(20).subtract(BigInteger.ONE)).validate();
        assertThatThrownBy(() -> withVersion(reading, BigInteger.TEN.pow(20)).validate())
                .hasMessage("Version 100000000000000000000 of MaLo-ID '41373559241' at 2026-08-20T10:15:00Z does not fit decimal(20,0)");
        assertThatThrownBy(() -> withVersion(reading, BigInteger.valueOf(-1)).validate())
                .hasMessageContaining("Version -1 of MaLo-ID");
    }

    @Test
    void testIdentifiers()
    {
        Reading reading = reading(Sparte.STROM, MeasurementUnit.KWH, FROM, FROM.plus(Duration.ofMinutes(15)), BigDecimal.ONE);
        assertThatThrownBy(() -> new Reading("41373559242", reading.meloId(), reading.obisCode(), reading.sparte(), reading.from(), reading.to(), reading.value(), reading.unit(), reading.quality(),
                reading.resolution(), reading.sourceKind(), reading.sourceDetail(), reading.provenance(), reading.version(), reading.versionScope(), reading.recordedAt(), reading.balancingDay()).validate())
                .hasMessageContaining("Invalid MaLo-ID '41373559242'");
        assertThatThrownBy(() -> new Reading(reading.maloId(), Optional.of("DE123"), reading.obisCode(), reading.sparte(), reading.from(), reading.to(), reading.value(), reading.unit(), reading.quality(),
                reading.resolution(), reading.sourceKind(), reading.sourceDetail(), reading.provenance(), reading.version(), reading.versionScope(), reading.recordedAt(), reading.balancingDay()).validate())
                .hasMessageContaining("Invalid MeLo-ID 'DE123'");
        assertThatThrownBy(() -> new Reading(reading.maloId(), reading.meloId(), "1-1:1.29.0*255", reading.sparte(), reading.from(), reading.to(), reading.value(), reading.unit(), reading.quality(),
                reading.resolution(), reading.sourceKind(), reading.sourceDetail(), reading.provenance(), reading.version(), reading.versionScope(), reading.recordedAt(), reading.balancingDay()).validate())
                .hasMessageContaining("store it as '1-1:1.29.0'");
    }

    @Test
    void testBalancingDayAcrossDaylightSaving()
    {
        // 2026-03-29: clocks jump from 02:00 CET to 03:00 CEST; the Berlin day starts at 23:00 UTC the day before
        Instant springMidnight = Instant.parse("2026-03-28T23:00:00Z");
        Reading spring = reading(Sparte.STROM, MeasurementUnit.KWH, springMidnight, springMidnight.plus(Duration.ofMinutes(15)), BigDecimal.ONE);
        assertThat(spring.balancingDay()).isEqualTo(LocalDate.of(2026, 3, 29));
        spring.validate();
        assertThatThrownBy(() -> withBalancingDay(spring, LocalDate.of(2026, 3, 28)).validate())
                .isInstanceOf(InvalidReadingException.class)
                .hasMessage("Balancing day 2026-03-28 of MaLo-ID '41373559241' at 2026-03-28T23:00:00Z should be 2026-03-29");

        // 2026-10-25: 02:00-03:00 happens twice; both quarter-hours at 02:30 belong to the 25th, the last one of the day is 23:45 CET
        for (String from : new String[] {"2026-10-25T00:30:00Z", "2026-10-25T01:30:00Z", "2026-10-24T22:00:00Z", "2026-10-25T22:45:00Z"}) {
            Instant instant = Instant.parse(from);
            Reading autumn = reading(Sparte.STROM, MeasurementUnit.KWH, instant, instant.plus(Duration.ofMinutes(15)), BigDecimal.ONE);
            assertThat(autumn.validate().balancingDay()).as(from).isEqualTo(LocalDate.of(2026, 10, 25));
        }
        Instant nextDay = Instant.parse("2026-10-25T23:00:00Z");
        assertThat(MeteringCalendar.balancingDay(Sparte.STROM, nextDay)).isEqualTo(LocalDate.of(2026, 10, 26));

        // gas days run 06:00 to 06:00 local time, also on the days the clocks change
        Instant gasSpring = Instant.parse("2026-03-29T04:30:00Z"); // 06:30 CEST
        Reading gas = reading(Sparte.GAS, MeasurementUnit.KWH, gasSpring, gasSpring.plus(Duration.ofMinutes(15)), BigDecimal.ONE);
        assertThat(gas.balancingDay()).isEqualTo(LocalDate.of(2026, 3, 29));
        assertThatThrownBy(() -> withBalancingDay(gas, LocalDate.of(2026, 3, 28)).validate())
                .hasMessage("Balancing day 2026-03-28 of MaLo-ID '41373559241' at 2026-03-29T04:30:00Z should be 2026-03-29");
        Instant gasAutumn = Instant.parse("2026-10-25T04:30:00Z"); // 05:30 CET, still the gas day of the 24th
        assertThat(reading(Sparte.GAS, MeasurementUnit.KWH, gasAutumn, gasAutumn.plus(Duration.ofMinutes(15)), BigDecimal.ONE).validate().balancingDay())
                .isEqualTo(LocalDate.of(2026, 10, 24));
    }

    @Test
    void testDailyValueOnTheBalancingDay()
    {
        // the Berlin day: 23 hours on 29 March, 25 on 25 October, "to" the next day's Berlin midnight
        assertThat(daily(Sparte.STROM, "2026-03-28T23:00:00Z", "2026-03-29T22:00:00Z").validate().balancingDay()).isEqualTo(LocalDate.of(2026, 3, 29));
        assertThat(daily(Sparte.WAERME, "2026-10-24T22:00:00Z", "2026-10-25T23:00:00Z").validate().balancingDay()).isEqualTo(LocalDate.of(2026, 10, 25));
        daily(Sparte.WASSER, "2026-08-19T22:00:00Z", "2026-08-20T22:00:00Z").validate();
        // the gas day, 06:00 to 06:00: the one from Saturday 28 March lasts 23 hours
        assertThat(daily(Sparte.GAS, "2026-03-28T05:00:00Z", "2026-03-29T04:00:00Z").validate().balancingDay()).isEqualTo(LocalDate.of(2026, 3, 28));
        daily(Sparte.GAS, "2026-10-24T04:00:00Z", "2026-10-25T05:00:00Z").validate();

        // a day from UTC midnight, as INSERT took it before, is not a balancing day: the calendar and the fitting ends are named
        assertThatThrownBy(() -> daily(Sparte.STROM, "2026-03-29T00:00:00Z", "2026-03-30T00:00:00Z").validate())
                .isInstanceOf(InvalidReadingException.class)
                .hasMessage("Interval [2026-03-29T00:00:00Z, 2026-03-30T00:00:00Z) of MaLo-ID '41373559241' is not a P1D interval of sparte STROM, whose day is the Berlin day, "
                        + "Europe/Berlin midnight to midnight: for balancing day 2026-03-29 write \"from\" 2026-03-28T23:00:00Z and \"to\" 2026-03-29T22:00:00Z");
        assertThatThrownBy(() -> daily(Sparte.STROM, "2026-10-25T00:00:00Z", "2026-10-26T00:00:00Z").validate())
                .hasMessageContaining("write \"from\" 2026-10-24T22:00:00Z and \"to\" 2026-10-25T23:00:00Z");
        // the right start, 24 hours long on a 23-hour day: "to" is checked too
        assertThatThrownBy(() -> daily(Sparte.STROM, "2026-03-28T23:00:00Z", "2026-03-29T23:00:00Z").validate())
                .hasMessageContaining("write \"from\" 2026-03-28T23:00:00Z and \"to\" 2026-03-29T22:00:00Z");
        // a Berlin day is not a gas day
        assertThatThrownBy(() -> daily(Sparte.GAS, "2026-03-28T23:00:00Z", "2026-03-29T22:00:00Z").validate())
                .hasMessageContaining("not a P1D interval of sparte GAS, whose day is the gas day, 06:00 to 06:00 Europe/Berlin: for balancing day 2026-03-28 write \"from\" 2026-03-28T05:00:00Z and \"to\" 2026-03-29T04:00:00Z");
    }

    @Test
    void testMonthlyValueOnTheBalancingMonth()
    {
        // March 2026 has the 23-hour Sunday, October the 25-hour one
        assertThat(monthly(Sparte.STROM, "2026-02-28T23:00:00Z", "2026-03-31T22:00:00Z").validate().balancingDay()).isEqualTo(LocalDate.of(2026, 3, 1));
        monthly(Sparte.STROM, "2026-09-30T22:00:00Z", "2026-10-31T23:00:00Z").validate();
        // the gas month starts at 06:00 on the 1st
        assertThat(monthly(Sparte.GAS, "2026-03-01T05:00:00Z", "2026-04-01T04:00:00Z").validate().versionScope()).isEqualTo(OPERATOR + ":2026-03");
        assertThatThrownBy(() -> monthly(Sparte.STROM, "2026-03-01T00:00:00Z", "2026-04-01T00:00:00Z").validate())
                .isInstanceOf(InvalidReadingException.class)
                .hasMessage("Interval [2026-03-01T00:00:00Z, 2026-04-01T00:00:00Z) of MaLo-ID '41373559241' is not a P1M interval of sparte STROM, whose month is the Berlin month, "
                        + "from Europe/Berlin midnight on the 1st: for balancing month 2026-03 write \"from\" 2026-02-28T23:00:00Z and \"to\" 2026-03-31T22:00:00Z");
        assertThatThrownBy(() -> monthly(Sparte.GAS, "2026-02-28T23:00:00Z", "2026-03-31T22:00:00Z").validate())
                .hasMessageContaining("the gas month, from 06:00 Europe/Berlin on the 1st: for balancing month 2026-02 write \"from\" 2026-02-01T05:00:00Z and \"to\" 2026-03-01T05:00:00Z");
        // other calendar periods are not taken
        assertThatThrownBy(() -> withResolution(monthly(Sparte.STROM, "2025-12-31T23:00:00Z", "2026-12-31T23:00:00Z"), "P1Y").validate())
                .hasMessageContaining("Resolution 'P1Y' of MaLo-ID '41373559241' is a calendar period INSERT does not take: use a step that divides a day (PT15M, PT1H), P1D");
    }

    private static Reading daily(Sparte sparte, String from, String to)
    {
        return withResolution(reading(sparte, sparte == Sparte.WASSER ? MeasurementUnit.M3 : MeasurementUnit.KWH, Instant.parse(from), Instant.parse(to), BigDecimal.ONE), "P1D");
    }

    private static Reading monthly(Sparte sparte, String from, String to)
    {
        return withResolution(reading(sparte, MeasurementUnit.KWH, Instant.parse(from), Instant.parse(to), BigDecimal.ONE), "P1M");
    }

    private static Reading withResolution(Reading reading, String resolution)
    {
        return new Reading(reading.maloId(), reading.meloId(), reading.obisCode(), reading.sparte(), reading.from(), reading.to(), reading.value(), reading.unit(), reading.quality(),
                resolution, reading.sourceKind(), reading.sourceDetail(), reading.provenance(), reading.version(), reading.versionScope(), reading.recordedAt(), reading.balancingDay());
    }

    private static Reading reading(Sparte sparte, MeasurementUnit unit, Instant from, Instant to, BigDecimal value)
    {
        Instant recordedAt = Instant.parse("2026-10-26T05:00:00Z");
        return new Reading(
                "41373559241",
                Optional.of("DE0005620000000000000000000000042"),
                "1-1:1.29.0",
                sparte,
                from,
                to,
                value,
                unit,
                Quality.MEASURED,
                "PT15M",
                "MSCONS",
                Optional.of("{\"message\":\"MSCONS_1\"}"),
                Optional.empty(),
                BigInteger.valueOf(recordedAt.getEpochSecond() * 1_000_000),
                Reading.versionScope(OPERATOR, sparte, from),
                recordedAt,
                MeteringCalendar.balancingDay(sparte, from));
    }

    @Test
    void testRegisterReadingOnItsCadence()
    {
        // a register reading (no "to") read at the start of each balancing day: Berlin midnight, the gas day's 06:00
        Instant berlinMidnight = Instant.parse("2026-03-28T23:00:00Z");
        Reading daily = register(Sparte.STROM, berlinMidnight, "P1D");
        assertThat(daily.validate().timeModel()).isEqualTo(TableShape.TimeModel.POINT);
        assertThat(daily.balancingDay()).isEqualTo(LocalDate.of(2026, 3, 29));
        register(Sparte.GAS, Instant.parse("2026-03-29T04:00:00Z"), "P1D").validate();
        register(Sparte.STROM, Instant.parse("2026-03-31T22:00:00Z"), "P1M").validate();
        register(Sparte.STROM, Instant.parse("2026-03-29T01:15:00Z"), "PT15M").validate();
        assertThatThrownBy(() -> register(Sparte.STROM, Instant.parse("2026-03-29T00:00:00Z"), "P1D").validate())
                .isInstanceOf(InvalidReadingException.class)
                .hasMessage("Register reading of MaLo-ID '41373559241' at 2026-03-29T00:00:00Z is not on its P1D cadence: a daily register reading of sparte STROM is read at the start of the balancing day, "
                        + "the Berlin day, Europe/Berlin midnight to midnight; for balancing day 2026-03-29 write \"from\" 2026-03-28T23:00:00Z");
        assertThatThrownBy(() -> register(Sparte.STROM, Instant.parse("2026-04-01T22:00:00Z"), "P1M").validate())
                .hasMessageStartingWith("Register reading of MaLo-ID '41373559241' at 2026-04-01T22:00:00Z is not on its P1M cadence");
        assertThatThrownBy(() -> register(Sparte.STROM, Instant.parse("2026-03-29T01:10:00Z"), "PT15M").validate())
                .hasMessage("Register reading of MaLo-ID '41373559241' at 2026-03-29T01:10:00Z is not on its PT15M cadence: it must be read at a multiple of PT15M, e.g. 2026-03-29T01:00:00Z");
    }

    @Test
    void testTimeModelOfTheTable()
    {
        Reading interval = reading(Sparte.STROM, MeasurementUnit.KWH, FROM, FROM.plus(Duration.ofMinutes(15)), BigDecimal.ONE);
        Reading point = register(Sparte.STROM, Instant.parse("2026-03-28T23:00:00Z"), "P1D");
        assertThat(interval.requireTimeModel(TableShape.TimeModel.INTERVAL, "metering.readings")).isSameAs(interval);
        assertThat(point.requireTimeModel(TableShape.TimeModel.POINT, "metering.zaehlerstaende")).isSameAs(point);
        assertThatThrownBy(() -> point.requireTimeModel(TableShape.TimeModel.INTERVAL, "metering.readings"))
                .isInstanceOf(InvalidReadingException.class)
                .hasMessageContaining("has \"to\" NULL, a register reading, but table 'metering.readings' has time_model 'interval'");
        assertThatThrownBy(() -> interval.requireTimeModel(TableShape.TimeModel.POINT, "metering.zaehlerstaende"))
                .isInstanceOf(InvalidReadingException.class)
                .hasMessageContaining("has a \"to\", but table 'metering.zaehlerstaende' has time_model 'point', whose value is the register at \"from\": write \"to\" NULL");
    }

    private static Reading register(Sparte sparte, Instant from, String resolution)
    {
        Reading reading = reading(sparte, sparte == Sparte.GAS ? MeasurementUnit.M3 : MeasurementUnit.KWH, from, from.plus(Duration.ofMinutes(15)), new BigDecimal("12345.600000"));
        return new Reading(reading.maloId(), reading.meloId(), sparte == Sparte.GAS ? "7-20:3.8.0" : "1-1:1.8.0", sparte, from, Optional.empty(), reading.value(), reading.unit(), reading.quality(),
                resolution, reading.sourceKind(), reading.sourceDetail(), reading.provenance(), reading.version(), reading.versionScope(), reading.recordedAt(), reading.balancingDay());
    }

    private static Reading withScope(Reading reading, String versionScope)
    {
        return new Reading(reading.maloId(), reading.meloId(), reading.obisCode(), reading.sparte(), reading.from(), reading.to(), reading.value(), reading.unit(), reading.quality(),
                reading.resolution(), reading.sourceKind(), reading.sourceDetail(), reading.provenance(), reading.version(), versionScope, reading.recordedAt(), reading.balancingDay());
    }

    private static Reading withVersion(Reading reading, BigInteger version)
    {
        return new Reading(reading.maloId(), reading.meloId(), reading.obisCode(), reading.sparte(), reading.from(), reading.to(), reading.value(), reading.unit(), reading.quality(),
                reading.resolution(), reading.sourceKind(), reading.sourceDetail(), reading.provenance(), version, reading.versionScope(), reading.recordedAt(), reading.balancingDay());
    }

    private static Reading withBalancingDay(Reading reading, LocalDate balancingDay)
    {
        return new Reading(reading.maloId(), reading.meloId(), reading.obisCode(), reading.sparte(), reading.from(), reading.to(), reading.value(), reading.unit(), reading.quality(),
                reading.resolution(), reading.sourceKind(), reading.sourceDetail(), reading.provenance(), reading.version(), reading.versionScope(), reading.recordedAt(), balancingDay);
    }
}
