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
        String message = failure.getMessage() == null ? failure.toString() : failure.getMessage();
        return new BenchmarkResult(id, title, meterstoreLabel, peerLabel, unit, Double.NaN, Double.NaN, target, Comparison.NOT_COMPARABLE, Optional.of(message.lines().findFirst().orElse(message)), List.of());
    }

    public double ratio()
    {
        return meterstore / peer;
    }

    public Verdict verdict()
    {
        if (error.isPresent() || !Double.isFinite(ratio())) {
            return Verdict.FAILED;
        }
        if (comparison == Comparison.MISMATCH) {
            return Verdict.MISMATCH;
        }
        return ratio() <= target.maxRatio() ? Verdict.MET : Verdict.MISSED;
    }
}
