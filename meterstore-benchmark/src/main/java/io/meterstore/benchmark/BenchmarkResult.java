package io.meterstore.benchmark;

import com.google.common.collect.ImmutableList;

import java.util.List;
import java.util.Optional;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

/**
 * One row of the report: MeterStore's figure against its peer's (median seconds, or bytes per row), their ratio and the
 * issue's target for it, whether both returned the same answer, and what else the row measured.
 */
public record BenchmarkResult(
        String id,
        String title,
        String meterstoreLabel,
        String peerLabel,
        Unit unit,
        double meterstore,
        double peer,
        Target target,
        Comparison comparison,
        Optional<String> error,
        List<String> details)
{
    public enum Unit
    {
        SECONDS("s"),
        BYTES_PER_ROW("B/row");

        private final String symbol;

        Unit(String symbol)
        {
            this.symbol = symbol;
        }

        public String symbol()
        {
            return symbol;
        }
    }

    /** Whether the two sides' answers were compared, and how that went. */
    public enum Comparison
    {
        SAME_RESULT,
        MISMATCH,
        NOT_COMPARABLE,
    }

    public enum Verdict
    {
        MET,
        MISSED,
        MISMATCH,
        FAILED,
        /** A row without a peer (an erasure, a retention sweep): its figures are reported, its checks passed. */
        REPORTED,
    }

    /** The target: the ratio MeterStore / peer at most {@code maxRatio}; {@code text} says it as the issue does. */
    public record Target(double maxRatio, String text)
    {
        public Target
        {
            checkArgument(maxRatio > 0, "maxRatio must be positive");
            requireNonNull(text, "text is null");
        }

        public static Target atMost(double maxRatio)
        {
            return new Target(maxRatio, "<= %s".formatted(BenchmarkReport.ratio(maxRatio)));
        }

        /** No ratio to meet: the row has no honest peer, so its figure is reported and only its checks decide. */
        public static Target reported(String text)
        {
            return new Target(Double.POSITIVE_INFINITY, text);
        }

        public boolean isReported()
        {
            return maxRatio == Double.POSITIVE_INFINITY;
        }
    }

    public BenchmarkResult
    {
        requireNonNull(id, "id is null");
        requireNonNull(title, "title is null");
        requireNonNull(meterstoreLabel, "meterstoreLabel is null");
        requireNonNull(peerLabel, "peerLabel is null");
        requireNonNull(unit, "unit is null");
        requireNonNull(target, "target is null");
        requireNonNull(comparison, "comparison is null");
        requireNonNull(error, "error is null");
        details = ImmutableList.copyOf(details);
    }

    public static BenchmarkResult failed(String id, String title, String meterstoreLabel, String peerLabel, Unit unit, Target target, Throwable failure)
    {
        return new BenchmarkResult(id, title, meterstoreLabel, peerLabel, unit, Double.NaN, Double.NaN, target, Comparison.NOT_COMPARABLE, Optional.of(reason(failure)), List.of());
    }

    /** The first line of a failure's message, as a report shows it. */
    public static String reason(Throwable failure)
    {
        String message = failure.getMessage() == null ? failure.toString() : failure.getMessage();
        return message.lines().findFirst().orElse(message);
    }

    /**
     * A row without a peer: MeterStore's figure alone, with {@code comparison} saying whether its checks (what the
     * statement must have done, and left alone) held.
     */
    public static BenchmarkResult reported(String id, String title, String meterstoreLabel, Unit unit, double meterstore, Target target, Comparison comparison, List<String> details)
    {
        checkArgument(target.isReported(), "a row without a peer has no target ratio");
        return new BenchmarkResult(id, title, meterstoreLabel, "none", unit, meterstore, Double.NaN, target, comparison, Optional.empty(), details);
    }

    public double ratio()
    {
        return meterstore / peer;
    }

    public Verdict verdict()
    {
        if (error.isPresent()) {
            return Verdict.FAILED;
        }
        if (target.isReported()) {
            if (!Double.isFinite(meterstore)) {
                return Verdict.FAILED;
            }
            // a wrong outcome is never reported as a figure
            return comparison == Comparison.MISMATCH ? Verdict.MISMATCH : Verdict.REPORTED;
        }
        if (!Double.isFinite(ratio())) {
            return Verdict.FAILED;
        }
        if (comparison == Comparison.MISMATCH) {
            return Verdict.MISMATCH;
        }
        return ratio() <= target.maxRatio() ? Verdict.MET : Verdict.MISSED;
    }
}
