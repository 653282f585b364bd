package org.axe4j.tvm;

import java.util.Arrays;
import java.util.List;

/** Seconds per run for each repeat of TVM's time evaluator, with mean, median and minimum. */
public record Timing(List<Double> seconds) {
    public Timing {
        seconds = List.copyOf(seconds);
        if (seconds.isEmpty()) {
            throw new IllegalArgumentException("Timing needs at least one repeat");
        }
    }

    public double mean() {
        return seconds.stream().mapToDouble(Double::doubleValue).average().orElseThrow();
    }

    public double median() {
        double[] sorted = seconds.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    public double min() {
        return seconds.stream().mapToDouble(Double::doubleValue).min().orElseThrow();
    }

    public double max() {
        return seconds.stream().mapToDouble(Double::doubleValue).max().orElseThrow();
    }

    @Override
    public String toString() {
        return String.format("mean %.3f us, median %.3f us, min %.3f us over %d repeats %s", mean() * 1e6,
                median() * 1e6, min() * 1e6, seconds.size(), Arrays.toString(seconds.toArray()));
    }
}
