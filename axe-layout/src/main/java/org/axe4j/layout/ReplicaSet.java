package org.axe4j.layout;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.TreeMap;

/**
 * The distinct replica displacements {@code Rset} of a layout, without enumerating them.
 *
 * <pre>
 *   Rset = { sum_j r_j t_j unit(b_j) : r_j in [0, f_j) } = product over axes a of  V_a,
 *   V_a  = t_1*[0,f_1) + ... + t_n*[0,f_n)        (the replica iters on axis a)
 * </pre>
 *
 * Each iter moves one axis, so {@code Rset} is the product of its per-axis value sets, and
 * {@code |Rset| = prod |V_a|}. On one axis a negative stride {@code t} gives
 * {@code t*[0,f) = |t|*[0,f) - (f-1)|t|}, so {@code V_a = sum |t_j|*[0,f_j) - N} with {@code N} the reach of
 * the negative iters. With the strides sorted by size, if each exceeds the reach of all smaller ones (the
 * gap condition) the sums are all distinct and ascend as a mixed-radix number: nothing is stored. Otherwise
 * {@code V_a} is kept as runs of consecutive multiples of the gcd ({@link Runs}), built in
 * {@code O(runs * log f)} per iter, which stays short when progressions overlap:
 * {@code R[(4096,4096):(1,1)]} is the one run {@code [0, 8190]}, 8,191 values, where the iters make
 * 16,777,216 combinations.
 *
 * <p>{@link #iterator()} yields the points in ascending {@link Point} order (axes in name order, each
 * ascending), one at a time, so a caller can stream a set of any size in constant memory.
 */
public final class ReplicaSet implements Iterable<Point> {
    private final TreeMap<Axis, AxisValues> axes;

    private ReplicaSet(TreeMap<Axis, AxisValues> axes) {
        this.axes = axes;
    }

    /**
     * The set of {@code replica}; an axis whose values form more than {@code runLimit} runs is refused with
     * {@code tooMany}'s error (it has more than {@code runLimit} values).
     */
    static ReplicaSet of(List<Iter> replica, long runLimit, java.util.function.LongFunction<AxeException> tooMany) {
        TreeMap<Axis, List<Iter>> byAxis = new TreeMap<>();
        for (Iter it : replica) {
            if (it.extent() > 1 && it.stride() != 0) {
                byAxis.computeIfAbsent(it.axis(), a -> new ArrayList<>()).add(it);
            }
        }
        TreeMap<Axis, AxisValues> axes = new TreeMap<>();
        for (Map.Entry<Axis, List<Iter>> e : byAxis.entrySet()) {
            axes.put(e.getKey(), AxisValues.of(e.getValue(), runLimit, tooMany));
        }
        return new ReplicaSet(axes);
    }

    /** {@code |Rset|}, exact; {@code Long.MAX_VALUE} when it is 2^63 or more. */
    public long count() {
        long n = 1;
        for (AxisValues v : axes.values()) {
            long c = v.count();
            if (n > Long.MAX_VALUE / c) {
                return Long.MAX_VALUE;
            }
            n *= c;
        }
        return n;
    }

    /** True iff {@code r} is one of the displacements. */
    public boolean contains(Point r) {
        for (Map.Entry<Axis, Long> e : r.coords().entrySet()) {
            if (!axes.containsKey(e.getKey())) {
                return false;
            }
        }
        for (Map.Entry<Axis, AxisValues> e : axes.entrySet()) {
            if (!e.getValue().contains(r.get(e.getKey()))) {
                return false;
            }
        }
        return true;
    }

    /** The axes the displacements move (those of replica iters with extent and stride other than 0 and 1). */
    public java.util.SortedSet<Axis> axes() {
        return java.util.Collections.unmodifiableSortedSet(new java.util.TreeSet<>(axes.keySet()));
    }

    /** The set with the coordinate on {@code axis} fixed to {@code value} (empty if no displacement has it). */
    ReplicaSet restrict(Axis axis, long value) {
        TreeMap<Axis, AxisValues> out = new TreeMap<>(axes);
        AxisValues v = axes.get(axis);
        if (v == null) {
            return value == 0 ? this : null;
        }
        if (!v.contains(value)) {
            return null;
        }
        out.put(axis, AxisValues.single(value));
        return new ReplicaSet(out);
    }

    /** The displacements in ascending {@link Point} order, generated one at a time. */
    @Override
    public Iterator<Point> iterator() {
        return iterator(0);
    }

    /**
     * The displacements from the {@code start}-th on (0-based, in ascending order), found without walking the
     * ones before it: {@code start} is read as a mixed-radix number over the per-axis counts, last axis fastest.
     */
    public Iterator<Point> iterator(long start) {
        Checks.nonNegative("start", start);
        List<Axis> names = new ArrayList<>(axes.keySet());
        List<AxisValues> sets = new ArrayList<>(axes.values());
        long[] from = new long[sets.size()];
        long rest = start;
        for (int k = sets.size() - 1; k >= 0; k--) {
            long c = sets.get(k).count();
            from[k] = rest % c;
            rest /= c;
        }
        boolean beyond = rest > 0; // start >= count
        return new Iterator<>() {
            private final AxisValues.Cursor[] cursors = new AxisValues.Cursor[sets.size()];
            private final long[] current = new long[sets.size()];
            private boolean started;
            private boolean done = beyond;

            @Override
            public boolean hasNext() {
                if (done) {
                    return false;
                }
                if (!started) {
                    return true;
                }
                for (AxisValues.Cursor c : cursors) {
                    if (c.hasNext()) {
                        return true;
                    }
                }
                return false;
            }

            @Override
            public Point next() {
                Budget.tick();
                if (done) {
                    throw new NoSuchElementException();
                }
                if (!started) {
                    started = true;
                    for (int k = 0; k < cursors.length; k++) {
                        cursors[k] = sets.get(k).cursor(from[k]);
                        current[k] = cursors[k].next();
                    }
                    return point();
                }
                // Odometer, last axis fastest: the first axis in name order is the most significant.
                for (int k = cursors.length - 1; k >= 0; k--) {
                    if (cursors[k].hasNext()) {
                        current[k] = cursors[k].next();
                        return point();
                    }
                    cursors[k] = sets.get(k).cursor(0);
                    current[k] = cursors[k].next();
                }
                done = true;
                throw new NoSuchElementException();
            }

            private Point point() {
                TreeMap<Axis, Long> m = new TreeMap<>();
                for (int k = 0; k < current.length; k++) {
                    m.put(names.get(k), current[k]);
                }
                return new Point(m);
            }
        };
    }

    /** The distinct values {@code V_a} of one axis: a mixed-radix progression under the gap condition, else runs. */
    private static final class AxisValues {
        private final long shift;          // -N: the negative iters' reach
        private final long g;              // gcd of the |strides| (runs only)
        private final long[] extents;      // gap condition: extents and |strides|, smallest stride first
        private final long[] strides;
        private final Runs runs;           // otherwise

        private AxisValues(long shift, long g, long[] extents, long[] strides, Runs runs) {
            this.shift = shift;
            this.g = g;
            this.extents = extents;
            this.strides = strides;
            this.runs = runs;
        }

        static AxisValues single(long value) {
            return new AxisValues(value, 1, new long[0], new long[0], null);
        }

        static AxisValues of(List<Iter> iters, long runLimit, java.util.function.LongFunction<AxeException> tooMany) {
            List<Iter> positive = new ArrayList<>();
            long shift = 0;
            long g = 0;
            for (Iter it : iters) {
                long t = Math.abs(it.stride());
                if (it.stride() < 0) {
                    shift -= it.reach(); // the axis reach fits (Layout's constructor checks it)
                }
                positive.add(new Iter(it.extent(), t, it.axis()));
                g = Checks.gcd(g, t);
            }
            positive.sort(Comparator.comparingLong(Iter::stride));
            long reach = 0;
            boolean gap = true;
            for (Iter it : positive) {
                if (it.stride() <= reach) {
                    gap = false;
                    break;
                }
                reach += it.reach();
            }
            if (gap) {
                long[] e = new long[positive.size()];
                long[] s = new long[positive.size()];
                for (int i = 0; i < e.length; i++) {
                    e[i] = positive.get(i).extent();
                    s[i] = positive.get(i).stride();
                }
                return new AxisValues(shift, g, e, s, null);
            }
            long max = 0;
            for (Iter it : positive) {
                max += it.reach();
            }
            Runs r = Runs.of(positive, g, max / g, runLimit);
            if (r == null) {
                throw tooMany.apply(runLimit);
            }
            return new AxisValues(shift, g, null, null, r);
        }

        /** {@code |V_a|}: the product of the extents under the gap condition (all sums distinct), else the runs' count. */
        long count() {
            if (runs != null) {
                return runs.count();
            }
            long n = 1;
            for (long e : extents) {
                n *= e; // distinct sums no larger than the axis reach: the product fits
            }
            return n;
        }

        boolean contains(long v) {
            long u = v - shift;
            if ((shift < 0 && u < v) || (shift > 0 && u > v)) {
                return false; // v - shift overflows: outside every value, which all fit
            }
            if (runs != null) {
                return u >= 0 && u % g == 0 && runs.contains(u / g);
            }
            if (u < 0) {
                return false;
            }
            // Mixed radix, largest stride first: under the gap condition each digit is forced.
            for (int i = extents.length - 1; i >= 0; i--) {
                u -= Math.min(u / strides[i], extents[i] - 1) * strides[i];
            }
            return u == 0;
        }

        /** Ascending values from the {@code from}-th on ({@code from < count()}). */
        Cursor cursor(long from) {
            return runs != null ? new RunCursor(from) : new RadixCursor(from);
        }

        /** Ascending values of one axis. */
        interface Cursor {
            boolean hasNext();

            long next();
        }

        private final class RadixCursor implements Cursor {
            private final long[] digits = new long[extents.length];
            private long value = shift;
            private boolean first = true;

            RadixCursor(long from) {
                for (int i = 0; i < digits.length; i++) { // smallest stride is the least significant digit
                    digits[i] = from % extents[i];
                    from /= extents[i];
                    value += digits[i] * strides[i];
                }
            }

            @Override
            public boolean hasNext() {
                if (first) {
                    return true;
                }
                for (int i = 0; i < digits.length; i++) {
                    if (digits[i] < extents[i] - 1) {
                        return true;
                    }
                }
                return false;
            }

            @Override
            public long next() {
                if (first) {
                    first = false;
                    return value;
                }
                for (int i = 0; i < digits.length; i++) { // smallest stride fastest
                    if (digits[i] < extents[i] - 1) {
                        digits[i]++;
                        value += strides[i];
                        return value;
                    }
                    value -= digits[i] * strides[i];
                    digits[i] = 0;
                }
                throw new NoSuchElementException();
            }
        }

        private final class RunCursor implements Cursor {
            private int run;
            private long at;

            RunCursor(long from) {
                while (from > runs.high(run) - runs.low(run)) {
                    from -= runs.high(run) - runs.low(run) + 1;
                    run++;
                }
                at = runs.low(run) + from;
            }

            @Override
            public boolean hasNext() {
                return run < runs.runCount();
            }

            @Override
            public long next() {
                if (!hasNext()) {
                    throw new NoSuchElementException();
                }
                long v = at * g + shift;
                if (at < runs.high(run)) {
                    at++;
                } else if (++run < runs.runCount()) {
                    at = runs.low(run);
                }
                return v;
            }
        }
    }
}
