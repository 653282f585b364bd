package org.axe4j.layout;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * An Axe layout {@code L = (D, R, O)}: shard iters {@code D} (ordered), replica iters {@code R}
 * (a multiset, kept in the given order), and an offset {@code O} (one integer per axis).
 *
 * <pre>
 *   B_k  = e_{k+1} * ... * e_{n-1}              d_k(x) = floor(x / B_k) mod e_k
 *   D(x) = sum_k d_k(x) * s_k * unit(a_k)
 *   L(x) = { D(x) + r + O : r in Rset },  Rset = { sum_j r_j t_j unit(b_j) : r_j in [0, f_j) }
 * </pre>
 *
 * Example: {@code S[(8,2,4,2):(4@laneid,1@warpid,1@laneid,1@reg)] + R[2:4@warpid] + 5@warpid}
 * with shape (8,16) maps coordinate (2,9) to {@code {laneid:8, reg:1, warpid:6}} and
 * {@code {laneid:8, reg:1, warpid:10}}.
 *
 * <p>Instances are immutable; the constructor drops zero offsets and rejects layouts whose size or
 * replica count overflows 64 bits, or some image coordinate ({@code sum (e-1)*|s| + |O|} per axis) does, or,
 * on an axis with an offset, span plus offset does, naming the layout and the farthest point. So every image
 * coordinate and every {@code span + offset} of a layout fits; a span of 2^63 (on an axis without offset,
 * {@code S[2:9223372036854775807]}) is refused by {@link #spanOn}, naming the layout.
 */
public record Layout(List<Iter> shard, List<Iter> replica, SortedMap<Axis, Long> offset) {
    /** Above this many elements, exhaustive checks (injectivity, replica sets) refuse to run. */
    static final long ENUMERATION_LIMIT = 1L << 24;

    public Layout {
        shard = List.copyOf(shard);
        replica = List.copyOf(replica);
        offset = nonZero(offset);
        long size = 1;
        long replicas = 1;
        // 1 + the sum of all reaches and |offsets| bounds every axis's coordinates and span: when it fits, so does
        // everything requireFits checks, which runs (exactly, per axis) only when it does not.
        long total = 1;
        for (Iter it : shard) {
            size = Checks.mulSaturating(size, it.extent());
            total = Checks.addSaturating(total, it.reach());
        }
        for (Iter it : replica) {
            replicas = Checks.mulSaturating(replicas, it.extent());
            total = Checks.addSaturating(total, it.reach());
        }
        for (long v : offset.values()) {
            total = Checks.addSaturating(total, v == Long.MIN_VALUE ? Long.MAX_VALUE : Math.abs(v));
        }
        if (size == Long.MAX_VALUE || replicas == Long.MAX_VALUE || total == Long.MAX_VALUE) {
            requireFits(shard, replica, offset);
        }
    }

    private static final SortedMap<Axis, Long> NO_OFFSET = Collections.unmodifiableSortedMap(new TreeMap<>());

    /** The offset without its zero entries, unmodifiable. */
    private static SortedMap<Axis, Long> nonZero(Map<Axis, Long> offset) {
        if (offset.isEmpty()) {
            return NO_OFFSET;
        }
        TreeMap<Axis, Long> o = new TreeMap<>();
        for (Map.Entry<Axis, Long> e : offset.entrySet()) {
            if (e.getValue() != 0L) {
                o.put(e.getKey(), e.getValue());
            }
        }
        return o.isEmpty() ? NO_OFFSET : Collections.unmodifiableSortedMap(o);
    }

    /** The exact checks of size, replica count and per-axis span, each naming what overflowed. */
    private static void requireFits(List<Iter> d, List<Iter> r, Map<Axis, Long> o) {
        long size = 1;
        for (Iter it : d) {
            size = Checks.mul(() -> "size of layout shard " + d, size, it.extent());
        }
        long replicas = 1;
        for (Iter it : r) {
            replicas = Checks.mul(() -> "replica count of " + r, replicas, it.extent());
        }
        // Every coordinate of every image point must fit: sum of reaches + |offset| per axis. Where the axis has
        // an offset, span + offset must fit too (1 + reach + |offset|); without one the span may be 2^63
        // (S[2:9223372036854775807]), which spanOn refuses by name while apply still answers.
        Map<Axis, Long> reach = new TreeMap<>();
        for (List<Iter> part : List.of(d, r)) {
            for (Iter it : part) {
                reach.merge(it.axis(), it.reach(), (a, b) -> {
                    if (Long.MAX_VALUE - a < b) {
                        throw AxeException.invalid("layout %s reaches %s on axis %s: a coordinate overflows 64 bits "
                                + "(the reach of its iters)", LayoutText.print(d, r, o), farthest(d, r, o, it.axis()),
                                it.axis());
                    }
                    return a + b;
                });
            }
        }
        for (Map.Entry<Axis, Long> e : o.entrySet()) {
            long abs = e.getValue() == Long.MIN_VALUE ? Long.MAX_VALUE : Math.abs(e.getValue());
            long before = reach.getOrDefault(e.getKey(), 0L);
            if (Long.MAX_VALUE - before < abs || Long.MAX_VALUE - before - abs < 1) {
                throw AxeException.invalid("layout %s reaches %s on axis %s: %s overflows 64 bits (reach %d of its "
                        + "iters + |offset| %d%s)", LayoutText.print(d, r, o),
                        farthest(d, r, o, e.getKey()), e.getKey(),
                        Long.MAX_VALUE - before >= abs ? "span + offset" : "a coordinate", before, abs,
                        Long.MAX_VALUE - before >= abs ? " + 1" : "");
            }
        }
    }

    /** The coordinate farthest from 0 on {@code axis} (exact, any size) and the index x whose base point has it. */
    private static String farthest(List<Iter> shard, List<Iter> replica, Map<Axis, Long> offset, Axis axis) {
        java.math.BigInteger hi = java.math.BigInteger.valueOf(offset.getOrDefault(axis, 0L));
        java.math.BigInteger lo = hi;
        java.math.BigInteger xHi = java.math.BigInteger.ZERO;
        java.math.BigInteger xLo = java.math.BigInteger.ZERO;
        java.math.BigInteger radix = java.math.BigInteger.ONE;
        for (int k = shard.size() - 1; k >= 0; k--) {
            Iter it = shard.get(k);
            java.math.BigInteger e1 = java.math.BigInteger.valueOf(it.extent() - 1);
            if (it.axis().equals(axis) && it.stride() != 0) {
                java.math.BigInteger step = e1.multiply(java.math.BigInteger.valueOf(it.stride()));
                if (it.stride() > 0) {
                    hi = hi.add(step);
                    xHi = xHi.add(e1.multiply(radix));
                } else {
                    lo = lo.add(step);
                    xLo = xLo.add(e1.multiply(radix));
                }
            }
            radix = radix.multiply(java.math.BigInteger.valueOf(it.extent()));
        }
        for (Iter it : replica) {
            if (it.axis().equals(axis)) {
                java.math.BigInteger step = java.math.BigInteger.valueOf(it.extent() - 1)
                        .multiply(java.math.BigInteger.valueOf(it.stride()));
                hi = it.stride() > 0 ? hi.add(step) : hi;
                lo = it.stride() < 0 ? lo.add(step) : lo;
            }
        }
        boolean up = hi.abs().compareTo(lo.abs()) >= 0;
        return (up ? hi : lo) + " at x = " + (up ? xHi : xLo) + (replica.isEmpty() ? "" : " (farthest replica)");
    }

    // ---- factories -------------------------------------------------------------------------

    public static Layout of(List<Iter> shard, List<Iter> replica, Map<Axis, Long> offset) {
        return new Layout(shard, replica, new TreeMap<>(offset));
    }

    /** A layout with no replicas and no offset. */
    public static Layout shard(Iter... shard) {
        return new Layout(List.of(shard), List.of(), new TreeMap<>());
    }

    /** Parses the text form, e.g. {@code S[(8,2):(2,1@laneid)] + R[2:4@warpid] + 5@warpid}. */
    public static Layout parse(String text) {
        return LayoutText.parse(text);
    }

    public Layout withShard(List<Iter> d) {
        return new Layout(d, replica, offset);
    }

    public Layout withReplica(List<Iter> r) {
        return new Layout(shard, r, offset);
    }

    public Layout withOffset(Map<Axis, Long> o) {
        return new Layout(shard, replica, new TreeMap<>(o));
    }

    // ---- sizes and spans -------------------------------------------------------------------

    /** {@code E = e_0 * ... * e_{n-1}}: how many logical elements the layout maps. */
    public long size() {
        long size = 1;
        for (Iter it : shard) {
            size *= it.extent();
        }
        return size;
    }

    /** Number of replica combinations {@code f_0 * f_1 * ...} (1 without replicas). */
    public long replicaCount() {
        long n = 1;
        for (Iter it : replica) {
            n *= it.extent();
        }
        return n;
    }

    /** Every axis named by a shard iter, replica iter or offset, in name order. */
    public SortedSet<Axis> axes() {
        TreeSet<Axis> axes = new TreeSet<>();
        shard.forEach(it -> axes.add(it.axis()));
        replica.forEach(it -> axes.add(it.axis()));
        axes.addAll(offset.keySet());
        return Collections.unmodifiableSortedSet(axes);
    }

    /** {@code size_a(L)}: product of the extents of the shard iters on {@code axis}. */
    public long sizeOn(Axis axis) {
        long n = 1;
        for (Iter it : shard) {
            if (it.axis().equals(axis)) {
                n *= it.extent();
            }
        }
        return n;
    }

    /** {@code span_a(L) = 1 + sum (e-1)*|s|} over the shard and replica iters on {@code axis}; the offset does not count. */
    public long spanOn(Axis axis) {
        long span = 1;
        for (List<Iter> part : List.of(shard, replica)) {
            for (Iter it : part) {
                if (it.axis().equals(axis)) {
                    long before = span;
                    span = Checks.add(() -> "span of " + this + " on axis " + axis, before, it.reach());
                }
            }
        }
        return span;
    }

    /** The largest coordinate of the image on {@code axis}: {@code O_a + sum (e-1) * max(s, 0)} (TIRx's span less 1). */
    public long largestOn(Axis axis) {
        long max = offsetOn(axis);
        for (List<Iter> part : List.of(shard, replica)) {
            for (Iter it : part) {
                if (it.axis().equals(axis) && it.stride() > 0) {
                    long before = max;
                    max = Checks.add(() -> "the largest coordinate of " + this + " on axis " + axis, before,
                            it.reach());
                }
            }
        }
        return max;
    }

    /** {@link #spanOn} for every axis of a shard or replica iter. */
    public SortedMap<Axis, Long> spans() {
        TreeMap<Axis, Long> spans = new TreeMap<>();
        for (List<Iter> part : List.of(shard, replica)) {
            for (Iter it : part) {
                spans.merge(it.axis(), Checks.add(() -> "span of " + this + " on axis " + it.axis(), 1, it.reach()),
                        (a, b) -> Checks.add(() -> "span of " + this + " on axis " + it.axis(), a, b - 1));
            }
        }
        return Collections.unmodifiableSortedMap(spans);
    }

    /** The offset on {@code axis} (0 if absent). */
    public long offsetOn(Axis axis) {
        return offset.getOrDefault(axis, 0L);
    }

    /** The offset as a point. */
    public Point offsetPoint() {
        return new Point(offset);
    }

    // ---- shapes ----------------------------------------------------------------------------

    /** True iff the product of {@code shape}'s dimensions equals {@link #size()}. */
    public boolean admits(Shape shape) {
        return shape.size() == size();
    }

    /** Throws an INVALID error naming the shape and the layout unless {@link #admits}. */
    public void requireAdmits(Shape shape) {
        if (!admits(shape)) {
            throw AxeException.invalid("shape %s (size %d) is not admitted by layout %s (size %d)",
                    shape, shape.size(), this, size());
        }
    }

    // ---- the forward map -------------------------------------------------------------------

    /** The digits {@code d_k(x)} of a flat index, last iter fastest. */
    public long[] digits(long x) {
        checkIndex(x);
        long[] d = new long[shard.size()];
        for (int k = shard.size() - 1; k >= 0; k--) {
            long e = shard.get(k).extent();
            d[k] = x % e;
            x /= e;
        }
        return d;
    }

    /** {@code D(x)}: the shard image of flat index {@code x}, without replicas and offset. */
    public Point shardImage(long x) {
        long[] d = digits(x);
        TreeMap<Axis, Long> p = new TreeMap<>();
        for (int k = 0; k < d.length; k++) {
            Iter it = shard.get(k);
            if (d[k] != 0 && it.stride() != 0) {
                p.merge(it.axis(), d[k] * it.stride(), Long::sum);
            }
        }
        return new Point(p);
    }

    /** {@code D(x) + O}: the replica-free image (what TIRx's apply returns). */
    public Point base(long x) {
        return shardImage(x).plus(offsetPoint());
    }

    /**
     * {@code Rset} as a set that counts, tests membership and enumerates lazily ({@link ReplicaSet}); an axis
     * whose values form more than {@link Equivalence#RUN_LIMIT} runs is refused.
     */
    public ReplicaSet replicas() {
        return ReplicaSet.of(replica, Equivalence.RUN_LIMIT, limit -> Budget.overLimit("the replica set of " + this
                + " has more than " + limit + " runs of values on one axis, more than axe4j enumerates"));
    }

    /** {@code Rset}: the distinct replica displacements, sorted. */
    public List<Point> replicaSet() {
        ReplicaSet rs = replicas();
        long n = requireEnumerable(rs.count(), () -> "the replica set of " + this);
        List<Point> out = new ArrayList<>((int) n);
        rs.forEach(out::add);
        return List.copyOf(out);
    }

    /** {@code L(x)}: the set of hardware points of flat index {@code x}, sorted. */
    public List<Point> apply(long x) {
        Point b = base(x);
        if (replica.isEmpty()) {
            return List.of(b);
        }
        ReplicaSet rs = replicas();
        long n = requireEnumerable(rs.count(), () -> "L(" + x + ") of " + this);
        List<Point> out = new ArrayList<>((int) n);
        for (Point r : rs) {
            out.add(b.plus(r)); // translation keeps the ascending order and distinctness
        }
        return List.copyOf(out);
    }

    /** {@code |L(x)|}, exact, without enumerating: the number of distinct replica displacements. */
    public long pointCount(long x) {
        checkIndex(x);
        return replicas().count();
    }

    /**
     * {@code L(x)} one point at a time, in the order of {@link #apply(long)}, in constant memory: no point cap
     * applies (the time cap of an active {@link Budget} does).
     */
    public java.util.Iterator<Point> points(long x) {
        Point b = base(x);
        java.util.Iterator<Point> rs = replicas().iterator();
        return new java.util.Iterator<>() {
            @Override
            public boolean hasNext() {
                return rs.hasNext();
            }

            @Override
            public Point next() {
                return b.plus(rs.next());
            }
        };
    }

    /**
     * Refuses to enumerate {@code n} points: over the active {@link Budget}'s point cap (TOO_LARGE), or outside a
     * budget over {@link #ENUMERATION_LIMIT} (INVALID). Returns {@code n}.
     */
    static long requireEnumerable(long n, java.util.function.Supplier<String> what) {
        Budget.requirePoints(n, what);
        if (n > ENUMERATION_LIMIT) {
            throw AxeException.invalid("%s has %s points, more than the enumeration limit %d", what.get(),
                    n == Long.MAX_VALUE ? "more than 2^63" : Long.toString(n), ENUMERATION_LIMIT);
        }
        return n;
    }

    /** {@code L(c)} for a logical coordinate of an admitted shape. */
    public List<Point> apply(Shape shape, long... coord) {
        requireAdmits(shape);
        return apply(shape.flatten(coord));
    }

    private void checkIndex(long x) {
        if (x < 0 || x >= size()) {
            throw AxeException.invalid("flat index %d is outside [0, %d) of layout %s", x, size(), this);
        }
    }

    // ---- the backward map ------------------------------------------------------------------

    /** True iff {@code D} is injective: no two flat indices share a shard image. Exact. */
    public boolean isShardInjective() {
        Map<Axis, List<Iter>> byAxis = new TreeMap<>();
        for (Iter it : shard) {
            if (it.extent() > 1) {
                byAxis.computeIfAbsent(it.axis(), a -> new ArrayList<>()).add(it);
            }
        }
        for (Map.Entry<Axis, List<Iter>> e : byAxis.entrySet()) {
            if (!AxisDigits.injective(e.getValue())) {
                return false;
            }
        }
        return true;
    }

    /**
     * Every flat index {@code x} with {@code p in L(x)}, ascending. Exact; works for any layout
     * (non-injective shards give several indices).
     */
    public List<Long> preimages(Point p) {
        Point q;
        try {
            q = p.minus(offsetPoint());
        } catch (AxeException | ArithmeticException overflow) {
            return List.of(); // p - O does not fit in 64 bits: farther from O than any image point reaches
        }
        // An axis no shard iter moves has D(x) = 0 there, so the replica must supply all of q on it.
        java.util.Set<Axis> moved = new TreeSet<>();
        for (Iter it : shard) {
            if (it.extent() > 1 && it.stride() != 0) {
                moved.add(it.axis());
            }
        }
        ReplicaSet rs = replicas();
        TreeSet<Axis> fixed = new TreeSet<>(rs.axes());
        fixed.addAll(q.coords().keySet());
        fixed.removeAll(moved);
        for (Axis a : fixed) {
            rs = rs.restrict(a, q.get(a));
            if (rs == null) {
                return List.of();
            }
        }
        requireEnumerable(rs.count(), () -> "the replicas to search for a preimage of " + p + " under " + this);
        TreeSet<Long> xs = new TreeSet<>();
        for (Point r : rs) {
            Point residual;
            try {
                residual = q.minus(r);
            } catch (AxeException | ArithmeticException overflow) {
                continue; // q - r does not fit: farther than the shard reaches
            }
            xs.addAll(AxisDigits.solve(shard, residual));
        }
        return List.copyOf(xs);
    }

    /**
     * {@code L^{-1}(p)}: the flat index whose image contains {@code p}, or empty if {@code p} is outside
     * the image. Requires an injective shard; if replicas overlap other indices' images the point is
     * ambiguous and an error names both indices.
     */
    public OptionalLong inverse(Point p) {
        if (!isShardInjective()) {
            throw AxeException.invalid("backward map of %s needs an injective shard", this);
        }
        List<Long> xs = preimages(p);
        if (xs.isEmpty()) {
            return OptionalLong.empty();
        }
        if (xs.size() > 1) {
            throw AxeException.invalid("point %s of layout %s has several preimages %s", p, this, xs);
        }
        return OptionalLong.of(xs.get(0));
    }

    /** {@link #inverse} as a logical coordinate of an admitted shape. */
    public java.util.Optional<long[]> inverse(Shape shape, Point p) {
        requireAdmits(shape);
        OptionalLong x = inverse(p);
        return x.isPresent() ? java.util.Optional.of(shape.unflatten(x.getAsLong())) : java.util.Optional.empty();
    }

    /** Distinct image points over the whole domain (all replicas), for small layouts. */
    public Set<Point> image() {
        long perIndex = replicas().count();
        long n = size() > Long.MAX_VALUE / perIndex ? Long.MAX_VALUE : size() * perIndex;
        requireEnumerable(n, () -> "the image of " + this);
        Set<Point> out = new LinkedHashSet<>();
        for (long x = 0; x < size(); x++) {
            out.addAll(apply(x));
        }
        return out;
    }

    /** The text form, which {@link #parse} reads back to an equal value. */
    @Override
    public String toString() {
        return LayoutText.print(this);
    }
}
