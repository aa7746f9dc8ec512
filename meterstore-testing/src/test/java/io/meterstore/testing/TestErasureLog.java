package io.meterstore.testing;

import com.google.common.collect.ImmutableSortedSet;
import io.meterstore.core.ErasureKey;
import io.meterstore.core.ErasureLog;
import io.meterstore.core.ErasureLog.Erasure;
import io.meterstore.core.ErasureLog.Lift;
import io.meterstore.core.ErasureLog.NewErasure;
import io.meterstore.core.ErasureLog.Trigger;
import io.meterstore.core.ErasureScope;
import io.meterstore.core.TierSplit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.TestInstance.Lifecycle.PER_CLASS;

@TestInstance(PER_CLASS)
final class TestErasureLog
{
    private static final ErasureKey KEY = ErasureKey.of("0123456789abcdef0123456789abcdef");
    private static final Instant AUGUST_1 = Instant.parse("2026-08-01T00:00:00Z");
    private static final Instant AUGUST_20 = Instant.parse("2026-08-20T00:00:00Z");

    private TestingDatabase database;

    @BeforeAll
    void createDatabase()
    {
        database = TestingPostgresServer.shared().createDatabase("test_erasure_log");
    }

    @AfterAll
    void dropDatabase()
    {
        database.close();
    }

    @Test
    void testRecordListLiftAndComplete()
            throws SQLException
    {
        try (Connection connection = database.connect()) {
            // no log yet: nothing erased, nothing suppressed, nothing to lift
            assertThat(ErasureLog.exists(connection, "recorded")).isFalse();
            assertThat(ErasureLog.erasures(connection, "recorded", "readings")).isEmpty();
            assertThat(ErasureLog.suppressions(connection, "recorded", "readings")).isEmpty();
            assertThat(ErasureLog.lift(connection, "recorded", "readings", 1, new Lift(AUGUST_20, "ops", "why"))).isEmpty();

            ErasureLog.create(connection, "recorded");
            ErasureLog.create(connection, "recorded");
            assertThat(ErasureLog.exists(connection, "recorded")).isTrue();

            NewErasure request = new NewErasure("readings", Trigger.REQUEST, "alice", AUGUST_20, Optional.of(KEY.fingerprint()),
                    new ErasureScope(Optional.of(ImmutableSortedSet.of(KEY.scope("51234567890"), KEY.scope("10000000003"))), Optional.of(ImmutableSortedSet.of("1-1:1.29.0")),
                            new TierSplit.Range(Optional.of(AUGUST_1), Optional.empty())),
                    96, 2880, Optional.of(4242L));
            NewErasure retention = new NewErasure("readings", Trigger.RETENTION, "meterstore-archiver", AUGUST_20, Optional.empty(),
                    new ErasureScope(Optional.empty(), Optional.empty(), new TierSplit.Range(Optional.of(Instant.parse("2016-01-01T00:00:00Z")), Optional.of(Instant.parse("2016-02-01T00:00:00Z")))),
                    0, 123456, Optional.empty());
            NewErasure otherTable = new NewErasure("gas_readings", Trigger.REQUEST, "bob", AUGUST_20, Optional.of(KEY.fingerprint()),
                    new ErasureScope(Optional.of(ImmutableSortedSet.of(KEY.scope("51234567890"))), Optional.empty(), TierSplit.Range.ALL),
                    1, 0, Optional.empty());
            Erasure first = ErasureLog.record(connection, "recorded", request);
            Erasure second = ErasureLog.record(connection, "recorded", retention);
            ErasureLog.record(connection, "recorded", otherTable);

            // read back exactly, per table, oldest first; the log never holds a malo_id
            assertThat(ErasureLog.erasures(connection, "recorded", "readings")).containsExactly(first, second);
            assertThat(first.recorded()).isEqualTo(request);
            assertThat(second.erasureId()).isGreaterThan(first.erasureId());
            assertThat(scalar(connection, "SELECT count(*) FROM recorded.meterstore_erasures WHERE scope::text LIKE '%51234567890%'")).isEqualTo(0L);
            assertThat(ErasureLog.suppressions(connection, "recorded", "readings")).containsExactly(first, second);
            assertThat(first.recorded().scope().matches(KEY.scope("51234567890"), "1-1:1.29.0", AUGUST_20)).isTrue();
            assertThat(first.recorded().scope().matches(KEY.scope("51234567890"), "1-1:2.29.0", AUGUST_20)).isFalse();
            assertThat(first.recorded().scope().matches(KEY.scope("51234567891"), "1-1:1.29.0", AUGUST_20)).isFalse();
            assertThat(first.recorded().scope().matches(KEY.scope("51234567890"), "1-1:1.29.0", AUGUST_1.minusNanos(1000))).isFalse();

            // a lift is recorded once and ends the suppression; old snapshots stay hidden, those after the lift are not
            Lift lift = new Lift(Instant.parse("2026-08-21T00:00:00Z"), "carol", "Erased by mistake: ticket 17");
            Erasure lifted = ErasureLog.lift(connection, "recorded", "readings", first.erasureId(), lift).orElseThrow();
            assertThat(lifted.lift()).contains(lift);
            assertThat(lifted.suppresses()).isFalse();
            assertThat(lifted.hidesSnapshotAt(AUGUST_20)).isTrue();
            assertThat(lifted.hidesSnapshotAt(lift.liftedAt())).isFalse();
            assertThat(ErasureLog.suppressions(connection, "recorded", "readings")).containsExactly(second);
            assertThatThrownBy(() -> ErasureLog.lift(connection, "recorded", "readings", first.erasureId(), new Lift(AUGUST_20, "mallory", "again")))
                    .hasMessageContaining("was lifted already");
            // an erasure of another table is not lifted through this one
            assertThat(ErasureLog.lift(connection, "recorded", "readings", first.erasureId() + 2, lift)).isEmpty();

            // the physical completion is recorded once
            Instant completed = Instant.parse("2026-08-22T00:00:00Z");
            assertThat(ErasureLog.recordPhysicalCompletion(connection, "recorded", second.erasureId(), completed)).isTrue();
            assertThat(ErasureLog.recordPhysicalCompletion(connection, "recorded", second.erasureId(), completed.plusSeconds(1))).isFalse();
            assertThat(ErasureLog.erasures(connection, "recorded", "readings").get(1).physicallyCompletedAt()).contains(completed);
        }
    }

    @Test
    void testAppendOnly()
            throws SQLException
    {
        try (Connection connection = database.connect()) {
            ErasureLog.create(connection, "append_only");
            Erasure erasure = ErasureLog.record(connection, "append_only", new NewErasure("readings", Trigger.REQUEST, "alice", AUGUST_20, Optional.of(KEY.fingerprint()),
                    new ErasureScope(Optional.of(ImmutableSortedSet.of(KEY.scope("51234567890"))), Optional.empty(), TierSplit.Range.ALL),
                    3, 4, Optional.of(1L)));
            long id = erasure.erasureId();
            try (Statement statement = connection.createStatement()) {
                assertThatThrownBy(() -> statement.execute("DELETE FROM append_only.meterstore_erasures"))
                        .hasMessageContaining("The erasure log append_only.meterstore_erasures is append-only: DELETE is refused");
                assertThatThrownBy(() -> statement.execute("TRUNCATE append_only.meterstore_erasures"))
                        .hasMessageContaining("is append-only: TRUNCATE is refused");
                assertThatThrownBy(() -> statement.execute("UPDATE append_only.meterstore_erasures SET rows_removed_cold = 0"))
                        .hasMessageContaining("erasure %s may only get its physical completion and its lift recorded".formatted(id));
                assertThatThrownBy(() -> statement.execute("UPDATE append_only.meterstore_erasures SET scope = NULL, key_fingerprint = NULL, trigger = 'retention'"))
                        .hasMessageContaining("may only get its physical completion and its lift recorded");
                statement.execute("UPDATE append_only.meterstore_erasures SET physically_completed_at = now()");
                assertThatThrownBy(() -> statement.execute("UPDATE append_only.meterstore_erasures SET physically_completed_at = NULL"))
                        .hasMessageContaining("recorded its physical completion already");
                // the lift's columns go together
                assertThatThrownBy(() -> statement.execute("UPDATE append_only.meterstore_erasures SET lifted_at = now()"))
                        .hasMessageContaining("violates check constraint");
            }
            // a second create, on first use by a writer, changes nothing
            ErasureLog.create(connection, "append_only");
            assertThat(ErasureLog.erasures(connection, "append_only", "readings")).hasSize(1)
                    .allSatisfy(row -> assertThat(row.recorded()).isEqualTo(erasure.recorded()));
        }
    }

    private static Object scalar(Connection connection, String sql)
            throws SQLException
    {
        try (Statement statement = connection.createStatement(); ResultSet result = statement.executeQuery(sql)) {
            result.next();
            return result.getObject(1);
        }
    }
}
