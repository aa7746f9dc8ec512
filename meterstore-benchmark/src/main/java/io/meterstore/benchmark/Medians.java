package io.meterstore.benchmark;

import java.util.List;

import static com.google.common.base.Preconditions.checkArgument;

final class Medians
{
    private Medians() {}

    /** The median of the samples; of an even count, the mean of the middle two. */
    static double median(List<? extends Number> samples)
    {
        checkArgument(!samples.isEmpty(), "No samples");
        double[] sorted = samples.stream().mapToDouble(Number::doubleValue).sorted().toArray();
        int middle = sorted.length / 2;
        return sorted.length % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
    }

    static double seconds(long nanos)
    {
        return nanos / 1e9;
    }
}
