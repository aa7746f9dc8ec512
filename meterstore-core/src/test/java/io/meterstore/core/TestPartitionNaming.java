package io.meterstore.core;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.util.Optional;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

final class TestPartitionNaming
{
    private static final PartitionNaming DAILY = new PartitionNaming("readings", PartitionNaming.DEFAULT_STEP);

    @Test
    void testName()
    {
        Instant start = Instant.parse("2026-08-20T00:00:00Z");
        assertThat(DAILY.partitionName(start)).isEqualTo("readings_2026_08_20_0000");
        assertThat(new PartitionNaming("readings", Duration.ofHours(1)).partitionName(Instant.parse("2026-08-20T13:00:00Z"))).isEqualTo("readings_2026_08_20_1300");
        assertThat(new PartitionNaming("meter_readings", Duration.ofMinutes(15)).partitionName(Instant.parse("2026-12-31T23:45:00Z"))).isEqualTo("meter_readings_2026_12_31_2345");
    }

    @Test
    void testRoundTrip()
    {
        PartitionNaming quarterHourly = new PartitionNaming("readings", Duration.ofMinutes(15));
        for (Instant start = Instant.parse("2026-10-24T00:00:00Z"); start.isBefore(Instant.parse("2026-10-27T00:00:00Z")); start = start.plus(Duration.ofMinutes(15))) {
            String name = quarterHourly.partitionName(start);
            assertThat(quarterHourly.partitionStart(name)).contains(start);
            assertThat(quarterHourly.isAligned(start)).isTrue();
        }
        for (Instant start = Instant.parse("2026-03-27T00:00:00Z"); start.isBefore(Instant.parse("2026-04-02T00:00:00Z")); start = start.plus(Duration.ofDays(1))) {
            assertThat(DAILY.partitionStart(DAILY.partitionName(start))).contains(start);
        }
    }

    @Test
    void testAlignmentToTheEpochInUtc()
    {
        // 23:30 in Berlin on the 20th is 21:30 UTC: the partition is the UTC day, not the Berlin day
        Instant lateEvening = ZonedDateTime.parse("2026-08-20T23:30:00+02:00[Europe/Berlin]").toInstant();
        assertThat(DAILY.alignDown(lateEvening)).isEqualTo(Instant.parse("2026-08-20T00:00:00Z"));
        // 00:30 in Berlin on the 21st is still the 20th in UTC
        Instant afterMidnight = ZonedDateTime.parse("2026-08-21T00:30:00+02:00[Europe/Berlin]").toInstant();
        assertThat(DAILY.alignDown(afterMidnight)).isEqualTo(Instant.parse("2026-08-20T00:00:00Z"));
        assertThat(DAILY.alignDown(Instant.parse("2026-08-20T00:00:00Z"))).isEqualTo(Instant.parse("2026-08-20T00:00:00Z"));
        assertThat(DAILY.alignDown(Instant.parse("2026-08-20T23:59:59.999999Z"))).isEqualTo(Instant.parse("2026-08-20T00:00:00Z"));
        // before the epoch, alignment rounds down, not towards zero
        assertThat(DAILY.alignDown(Instant.parse("1969-12-31T12:00:00Z"))).isEqualTo(Instant.parse("1969-12-31T00:00:00Z"));
        // a 6-hour step is aligned to 00, 06, 12 and 18 UTC
        PartitionNaming sixHourly = new PartitionNaming("readings", Duration.ofHours(6));
        assertThat(sixHourly.alignDown(Instant.parse("2026-08-20T17:59:00Z"))).isEqualTo(Instant.parse("2026-08-20T12:00:00Z"));
        // a two-day step counts from the epoch: 2026-08-20 is day 20685, an odd day, so it belongs to the step starting on the 19th
        PartitionNaming twoDaily = new PartitionNaming("readings", Duration.ofDays(2));
        assertThat(twoDaily.alignDown(Instant.parse("2026-08-20T10:00:00Z"))).isEqualTo(Instant.parse("2026-08-19T00:00:00Z"));
        assertThat(DAILY.isAligned(Instant.parse("2026-08-20T00:00:00.000001Z"))).isFalse();
        assertThat(DAILY.isAligned(Instant.parse("2026-08-20T01:00:00Z"))).isFalse();
    }

    @Test
    void testRejectsMisalignedStart()
    {
        assertThatThrownBy(() -> DAILY.partitionName(Instant.parse("2026-08-20T13:00:00Z")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("Partition start 2026-08-20T13:00:00Z is not aligned to the archival step PT24H");
        assertThatThrownBy(() -> DAILY.partitionName(Instant.parse("2026-08-20T00:00:00.000001Z")))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void testRejectsBadSteps()
    {
        assertThatThrownBy(() -> new PartitionNaming("readings", Duration.ofMinutes(7)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must be whole minutes that divide a day, or whole days");
        assertThatThrownBy(() -> new PartitionNaming("readings", Duration.ofSeconds(30)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new PartitionNaming("readings", Duration.ofHours(36)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new PartitionNaming("Readings", Duration.ofDays(1)))
                .hasMessageContaining("must be lowercase letters, digits and underscores");
        assertThatThrownBy(() -> new PartitionNaming("r".repeat(48), Duration.ofDays(1)))
                .hasMessageContaining("is longer than 47 characters");
    }

    @Test
    void testPartitionStartOfOtherNames()
    {
        assertThat(DAILY.partitionStart("readings")).isEmpty();
        assertThat(DAILY.partitionStart("readings_default")).isEmpty();
        assertThat(DAILY.partitionStart("readings_2026_08_20_0000_old")).isEmpty();
        assertThat(DAILY.partitionStart("readings_2026_13_20_0000")).isEmpty();
        // impossible dates that a lenient parse would move to another day are not partition names
        assertThat(DAILY.partitionStart("readings_2026_02_30_0000")).isEmpty();
        assertThat(DAILY.partitionStart("readings_2026_08_20_2400")).isEmpty();
        // a name off the configured step is still read: a reader must never lose a partition to its configuration
        assertThat(DAILY.partitionStart("readings_2026_08_20_0015")).contains(Instant.parse("2026-08-20T00:15:00Z"));
        assertThat(DAILY.partitionStart("other_2026_08_20_0000")).isEmpty();
        assertThat(DAILY.partitionStart("readingsx2026_08_20_0000")).isEmpty();
        assertThat(new PartitionNaming("meter_readings", PartitionNaming.DEFAULT_STEP).partitionStart("readings_2026_08_20_0000")).isEmpty();
        assertThat(DAILY.partitionStart("meter_readings_2026_08_20_0000")).isEmpty();
    }

    @Test
    void testLikePatternMatchesOnlyPartitionNames()
    {
        Pattern like = likeToRegex(DAILY.likePattern());
        assertThat(like.matcher("readings_2026_08_20_0000").matches()).isTrue();
        assertThat(like.matcher("readings_1999_12_31_2345").matches()).isTrue();
        // the underscores of the table name and the separators are literal, not LIKE's single-character wildcard
        assertThat(like.matcher("readingsx2026_08_20_0000").matches()).isFalse();
        assertThat(like.matcher("readings_2026x08_20_0000").matches()).isFalse();
        assertThat(like.matcher("readings_2026_08_20x0000").matches()).isFalse();
        assertThat(like.matcher("readings").matches()).isFalse();
        assertThat(like.matcher("readings_default").matches()).isFalse();
        assertThat(like.matcher("readings_2026_08_20_0000_old").matches()).isFalse();
        assertThat(like.matcher("readings_2026_08_20_000").matches()).isFalse();
        assertThat(like.matcher("meter_readings_2026_08_20_0000").matches()).isFalse();
        assertThat(like.matcher("xreadings_2026_08_20_0000").matches()).isFalse();

        Pattern meterReadings = likeToRegex(new PartitionNaming("meter_readings", PartitionNaming.DEFAULT_STEP).likePattern());
        assertThat(meterReadings.matcher("meter_readings_2026_08_20_0000").matches()).isTrue();
        assertThat(meterReadings.matcher("meterxreadings_2026_08_20_0000").matches()).isFalse();
        assertThat(meterReadings.matcher("readings_2026_08_20_0000").matches()).isFalse();
    }

    @Test
    void testLikePatternAgreesWithPartitionStart()
    {
        // every name the pattern lets through and partitionStart accepts round-trips; every real name gets through
        Pattern like = likeToRegex(DAILY.likePattern());
        for (Instant start = Instant.parse("2026-01-01T00:00:00Z"); start.isBefore(Instant.parse("2027-01-01T00:00:00Z")); start = start.plus(Duration.ofDays(1))) {
            String name = DAILY.partitionName(start);
            assertThat(like.matcher(name).matches()).as(name).isTrue();
            assertThat(DAILY.partitionStart(name)).isEqualTo(Optional.of(start));
        }
    }

    /** PostgreSQL's LIKE with its default escape character, the backslash. */
    private static Pattern likeToRegex(String like)
    {
        StringBuilder regex = new StringBuilder();
        for (int index = 0; index < like.length(); index++) {
            char character = like.charAt(index);
            if (character == '\\') {
                index++;
                regex.append(Pattern.quote(String.valueOf(like.charAt(index))));
            }
            else if (character == '_') {
                regex.append('.');
            }
            else if (character == '%') {
                regex.append(".*");
            }
            else {
                regex.append(Pattern.quote(String.valueOf(character)));
            }
        }
        return Pattern.compile(regex.toString(), Pattern.DOTALL);
    }
}
