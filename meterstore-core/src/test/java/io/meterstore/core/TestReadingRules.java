package io.meterstore.core;

import io.meterstore.core.Sparte.MeasurementUnit;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

final class TestReadingRules
{
    private static final TableColumns TENANTS = TableColumns.of(TableShape.declared(Map.of("identity_columns", "tenant")));
    private static final String OPERATOR = "9900000000003";
    private static final String OTHER_OPERATOR = "9900000000010";
    private static final Instant HOUR = Instant.parse("2026-04-10T08:00:00Z");
    private static final Duration QUARTER = Duration.ofMinutes(15);
    private static final Duration ONE_HOUR = Duration.ofHours(1);

    @Test
    void testTwoTenantsAreTwoChannels()
    {
        Reading quarterOfA = reading("a", HOUR, QUARTER, OPERATOR);
        Reading hourOfB = reading("b", HOUR, ONE_HOUR, OTHER_OPERATOR);
        Reading quarterOfB = reading("b", HOUR, QUARTER, OTHER_OPERATOR);
        assertThat(ReadingRules.violation(quarterOfA, hourOfB, TENANTS)).isEmpty();
        assertThat(ReadingRules.violation(quarterOfA, quarterOfB, TENANTS)).isEmpty();
        assertThat(ReadingRules.violation(quarterOfA, reading("a", HOUR, QUARTER, OTHER_OPERATOR), TENANTS)).get()
                .satisfies(violation -> assertThat(violation.rule()).isEqualTo(ReadingRules.ONE_OPERATOR_PER_READING))
                .satisfies(violation -> assertThat(violation.getMessage()).startsWith("Reading (malo_id '41373559241', tenant 'a', obis_code '1-0:1.8.0', \"from\" 2026-04-10T08:00:00Z) belongs to network operator 9900000000003"));
        // the default key has no tenant: the same pairs are versions of one reading
        assertThat(ReadingRules.violation(quarterOfA, quarterOfB)).map(ReadingRules.ViolationException::rule).contains(ReadingRules.ONE_OPERATOR_PER_READING);
        assertThat(ReadingRules.violation(quarterOfA, hourOfB)).map(ReadingRules.ViolationException::rule).contains(ReadingRules.SPANS_DO_NOT_OVERLAP);
    }

    @Test
    void testCheckerComparesEachTenantsVersionsThoughTheyInterleave()
    {
        // in the cold tier's order, (malo_id, obis_code, "from", tenant, version): tenant a's quarter-hours and tenant
        // b's hour interleave, and each is checked against its own tenant's last version
        ReadingRules.Checker rules = new ReadingRules.Checker(TENANTS);
        rules.accept(reading("a", HOUR, QUARTER, OPERATOR));
        rules.accept(reading("b", HOUR, ONE_HOUR, OTHER_OPERATOR));
        rules.accept(reading("a", HOUR.plus(QUARTER), QUARTER, OPERATOR));
        // the refusal (the archival cycle's, which it logs and reports) names the tenant, so the rows can be found
        assertThatThrownBy(() -> rules.accept(reading("b", HOUR.plus(QUARTER), QUARTER, OTHER_OPERATOR)))
                .isInstanceOfSatisfying(ReadingRules.ViolationException.class, e -> assertThat(e.rule()).isEqualTo(ReadingRules.SPANS_DO_NOT_OVERLAP))
                .hasMessageStartingWith("Version 1 of reading (malo_id '41373559241', tenant 'b', obis_code '1-0:1.8.0') has two spans that overlap");

        ReadingRules.Checker defaultKey = new ReadingRules.Checker();
        defaultKey.accept(reading("a", HOUR, QUARTER, OPERATOR));
        assertThatThrownBy(() -> defaultKey.accept(reading("b", HOUR, ONE_HOUR, OPERATOR)))
                .isInstanceOfSatisfying(ReadingRules.ViolationException.class, e -> assertThat(e.rule()).isEqualTo(ReadingRules.SPANS_DO_NOT_OVERLAP))
                .hasMessageStartingWith("Version 1 of reading (malo_id '41373559241', obis_code '1-0:1.8.0') has two spans that overlap");
    }

    private static Reading reading(String tenant, Instant from, Duration length, String operator)
    {
        return new Reading("41373559241", Optional.empty(), "1-0:1.8.0", Sparte.STROM, from, Optional.of(from.plus(length)), BigDecimal.ONE, MeasurementUnit.KWH, Quality.MEASURED,
                length.equals(ONE_HOUR) ? "PT1H" : "PT15M", "MSCONS", Optional.empty(), Optional.empty(), BigInteger.ONE, Reading.versionScope(operator, Sparte.STROM, from),
                from, MeteringCalendar.balancingDay(Sparte.STROM, from), List.of()).withAttributes(List.of(Optional.of(tenant)));
    }
}
