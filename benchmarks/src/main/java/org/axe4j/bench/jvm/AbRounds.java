package org.axe4j.bench.jvm;

import java.util.Arrays;

/**
 * Two sides timed in alternation: round r runs A then B when r is even, B then A when odd, each for at least
 * {@code roundNanos} (whole calls, at least {@code minCalls}), so a drift in machine load falls on both. A side's
 * rate in a round is calls / elapsed; the ratio of a round is A's rate over B's.
 */
record AbRounds(double[] ratesA, double[] ratesB) {
    interface Call {
        void run() throws Exception;
    }

    static AbRounds measure(Call a, Call b, int rounds, long roundNanos, int minCalls) throws Exception {
        double[] ra = new double[rounds];
        double[] rb = new double[rounds];
        for (int r = 0; r < rounds; r++) {
            if (r % 2 == 0) {
                ra[r] = rate(a, roundNanos, minCalls);
                rb[r] = rate(b, roundNanos, minCalls);
            } else {
                rb[r] = rate(b, roundNanos, minCalls);
                ra[r] = rate(a, roundNanos, minCalls);
            }
        }
        return new AbRounds(ra, rb);
    }

    /** Calls per second over one round. */
    static double rate(Call call, long roundNanos, int minCalls) throws Exception {
        long start = System.nanoTime();
        long now = start;
        int calls = 0;
        while (calls < minCalls || now - start < roundNanos) {
            call.run();
            calls++;
            now = System.nanoTime();
        }
        return calls * 1e9 / (now - start);
    }

    double[] ratios() {
        double[] q = new double[ratesA.length];
        for (int i = 0; i < q.length; i++) {
            q[i] = ratesA[i] / ratesB[i];
        }
        return q;
    }

    static double median(double[] values) {
        double[] s = values.clone();
        Arrays.sort(s);
        int n = s.length;
        return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    }

    static double min(double[] values) {
        return Arrays.stream(values).min().orElseThrow();
    }

    static double max(double[] values) {
        return Arrays.stream(values).max().orElseThrow();
    }
}
