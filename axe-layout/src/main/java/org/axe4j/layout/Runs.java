package org.axe4j.layout;

import java.util.Arrays;
import java.util.List;

/**
 * A finite set of multiples of {@code g}, clipped to {@code [0, window*g]}, as sorted, disjoint,
 * non-adjacent runs {@code [bounds[2i], bounds[2i+1]]} of consecutive multiples, stored divided by {@code g}.
 * Clipping commutes with adding progressions of non-negative values:
 * {@code (S + P) ∩ [0,W] = ((S ∩ [0,W]) + P) ∩ [0,W]}.
 *
 * <p>Example: {@code 2*[0,3) + 3*[0,2)} = {0,2,3,4,5,7} with g = 1 is the runs [0,0], [2,5], [7,7].
 * Overlapping progressions fill runs, so a dense set stays short: {@code 1*[0,4096) + 1*[0,4096)} is one run.
 */
final class Runs {
    private final long[] bounds;

    private Runs(long[] bounds) {
        this.bounds = bounds;
    }

    /**
     * The set {@code sum_j t_j*[0,f_j)} of iters with positive strides, in units of {@code g} (a divisor of
     * every stride), clipped to {@code [0, window]}; null when it needs more than {@code limit} runs.
     */
    static Runs of(List<Iter> list, long g, long window, long limit) {
        Runs acc = new Runs(new long[] {0, 0});
        for (Iter it : list) {
            acc = acc.plusProgression(it.extent(), it.stride() / g, window, limit);
            if (acc == null) {
                return null;
            }
        }
        return acc;
    }

    boolean sameSet(Runs other) {
        return Arrays.equals(bounds, other.bounds);
    }

    /** How many runs. */
    int runCount() {
        return bounds.length / 2;
    }

    /** Start of run {@code i} (in units of g). */
    long low(int i) {
        return bounds[2 * i];
    }

    /** End of run {@code i}, included (in units of g). */
    long high(int i) {
        return bounds[2 * i + 1];
    }

    /** How many values the set holds (at most window + 1, so it fits). */
    long count() {
        long n = 0;
        for (int i = 0; i < bounds.length; i += 2) {
            n += bounds[i + 1] - bounds[i] + 1;
        }
        return n;
    }

    /** True iff {@code v} (in units of g) is in the set. */
    boolean contains(long v) {
        int lo = 0;
        int hi = runCount() - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            if (v < low(mid)) {
                hi = mid - 1;
            } else if (v > high(mid)) {
                lo = mid + 1;
            } else {
                return true;
            }
        }
        return false;
    }

    /** {@code this + u*[0,f)} via {@code [0,f) = [0,h) ∪ ((f-h) + [0,h))}, {@code h = ceil(f/2)}. */
    private Runs plusProgression(long f, long u, long window, long limit) {
        if (f == 1) {
            return this;
        }
        Runs half = plusProgression((f + 1) / 2, u, window, limit);
        // (f-h)*u is at most the set maximum, which fits.
        return half == null ? null : half.unionWithShift((f - (f + 1) / 2) * u, window, limit);
    }

    /** {@code (this ∪ (this + shift)) ∩ [0, window]}, merging overlapping or adjacent runs; null past the limit. */
    private Runs unionWithShift(long shift, long window, long limit) {
        long[] x = bounds;
        long[] out = new long[(int) Math.min(2L * x.length, 2 * Math.min(limit, Integer.MAX_VALUE / 4) + 2)];
        int n = 0;
        int i = 0;
        int j = 0;
        while (i < x.length || j < x.length) {
            Budget.tick();
            long lo;
            long hi;
            if (j >= x.length || (i < x.length && x[i] <= x[j] + shift)) {
                lo = x[i];
                hi = x[i + 1];
                i += 2;
            } else {
                lo = x[j] + shift;
                hi = x[j + 1] + shift;
                j += 2;
            }
            if (lo > window) {
                break; // lo is the smallest start left in either list
            }
            hi = Math.min(hi, window);
            if (n > 0 && lo <= out[n - 1] + 1) {
                out[n - 1] = Math.max(out[n - 1], hi);
            } else {
                if (n / 2 >= limit) {
                    return null;
                }
                out[n++] = lo;
                out[n++] = hi;
            }
        }
        return new Runs(Arrays.copyOf(out, n));
    }
}
