package org.axe4j.layout;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Brute-force references for tile, direct sum and tile-of, computed from the definitions by enumeration
 * ({@link Oracle#table}), never from the structural constructions; plus generators of layouts grouped
 * by construction.
 */
final class TileOracle {
    private TileOracle() {}

    static final List<Axis> AXES = List.of(Axis.M, Axis.of("laneid"), Axis.of("warpid"), Axis.of("reg"), Axis.of("P"));

    // ---- generators ----------------------------------------------------------------------------------

    /** A shape of the given rank with dimensions from {1, 2, 3, 4, 6} and size at most {@code maxSize}. */
    static Shape shape(Random r, int rank, long maxSize) {
        long[] choices = {1, 2, 2, 3, 4, 4, 6};
        long[] dims = new long[rank];
        long size = 1;
        for (int k = 0; k < rank; k++) {
            long d = choices[r.nextInt(choices.length)];
            while (size * d > maxSize) {
                d = d == 6 ? 3 : d / 2;
            }
            dims[k] = Math.max(1, d);
            size *= dims[k];
        }
        return Shape.of(dims);
    }

    /**
     * A layout grouped by {@code shape} by construction: each dimension is an ordered random factorisation
     * into iters with compact, arbitrary, zero or negative strides on random axes; sometimes replicas
     * (at most 2 iters of extent at most 3) and an offset.
     */
    static Layout grouped(Random r, Shape shape) {
        List<Iter> shard = new ArrayList<>();
        long compact = 1;
        for (int k = shape.rank() - 1; k >= 0; k--) {
            List<Iter> block = new ArrayList<>();
            long rest = shape.dim(k);
            while (rest > 1) {
                long e = smallestFactor(rest);
                if (r.nextBoolean() && rest % (e * e) == 0) {
                    e *= e;
                } else if (r.nextInt(3) == 0) {
                    e = rest;
                }
                long s = switch (r.nextInt(6)) {
                    case 0, 1 -> compact;
                    case 2 -> r.nextInt(7);
                    case 3 -> -1 - r.nextInt(3);
                    case 4 -> compact * (1 + r.nextInt(3));
                    default -> 1L << r.nextInt(4);
                };
                block.add(0, new Iter(e, s, axis(r)));
                compact *= e;
                rest /= e;
            }
            shard.addAll(0, block);
        }
        List<Iter> replica = new ArrayList<>();
        if (r.nextInt(3) == 0) {
            int n = 1 + r.nextInt(2);
            for (int i = 0; i < n; i++) {
                long t = r.nextInt(5) == 0 ? -(1 + r.nextInt(3)) : r.nextInt(9);
                replica.add(new Iter(1 + r.nextInt(3), t, axis(r)));
            }
        }
        TreeMap<Axis, Long> offset = new TreeMap<>();
        if (r.nextInt(3) == 0) {
            offset.put(axis(r), (long) (r.nextInt(13) - 6));
        }
        return new Layout(shard, replica, offset);
    }

    /**
     * The same map written differently: negative replica strides flipped into the offset, replicas
     * reordered, a shard iter split in two, zero strides moved to another axis.
     */
    static Layout rewrite(Random r, Layout l) {
        List<Iter> replica = new ArrayList<>();
        TreeMap<Axis, Long> offset = new TreeMap<>(l.offset());
        for (Iter it : l.replica()) {
            if (it.stride() < 0 && r.nextBoolean()) {
                replica.add(0, it.withStride(-it.stride()));
                offset.merge(it.axis(), (it.extent() - 1) * it.stride(), Long::sum);
            } else {
                replica.add(0, it);
            }
        }
        List<Iter> shard = new ArrayList<>();
        for (Iter it : l.shard()) {
            long e = it.extent();
            long c = smallestFactor(e);
            if (c < e && r.nextBoolean()) { // (e, s) == (e/c, s*c), (c, s)
                shard.add(new Iter(e / c, it.stride() * c, it.axis()));
                shard.add(new Iter(c, it.stride(), it.axis()));
            } else if (it.stride() == 0) {
                shard.add(new Iter(e, 0, axis(r)));
            } else {
                shard.add(it);
            }
        }
        return new Layout(shard, replica, offset);
    }

    static Axis axis(Random r) {
        return r.nextInt(3) == 0 ? Axis.M : AXES.get(r.nextInt(AXES.size()));
    }

    private static long smallestFactor(long n) {
        for (long p = 2; p * p <= n; p++) {
            if (n % p == 0) {
                return p;
            }
        }
        return n;
    }

    // ---- definitions ---------------------------------------------------------------------------------

    /** {@code span_a(B) = 1 + sum (e-1)*|s|} over shard and replica iters on {@code a}, written out. */
    static Map<Axis, Long> span(Layout b) {
        TreeMap<Axis, Long> span = new TreeMap<>();
        for (List<Iter> part : List.of(b.shard(), b.replica())) {
            for (Iter it : part) {
                span.merge(it.axis(), 1 + (it.extent() - 1) * Math.abs(it.stride()), (x, y) -> x + y - 1);
            }
        }
        return span;
    }

    static Point scale(Point p, Map<Axis, Long> span) {
        TreeMap<Axis, Long> m = new TreeMap<>();
        p.coords().forEach((a, v) -> m.put(a, v * span.getOrDefault(a, 1L)));
        return new Point(m);
    }

    /**
     * The table of {@code A (x) B} (or {@code A (+) B} without scaling) by definition: for {@code z} in
     * {@code T}, {@code x_k = z_k / T_B[k]}, {@code y_k = z_k mod T_B[k]},
     * {@code L(z) = { a ⊙ span(B) + b : a in L_A(x), b in L_B(y) }}.
     */
    static List<TreeSet<Point>> expected(Layout a, Shape ta, Layout b, Shape tb, boolean scaleBySpan) {
        List<TreeSet<Point>> tableA = Oracle.table(a);
        List<TreeSet<Point>> tableB = Oracle.table(b);
        Map<Axis, Long> span = scaleBySpan ? span(b) : Map.of();
        long[] t = new long[ta.rank()];
        for (int k = 0; k < t.length; k++) {
            t[k] = ta.dim(k) * tb.dim(k);
        }
        long size = ta.size() * tb.size();
        List<TreeSet<Point>> out = new ArrayList<>();
        for (long flat = 0; flat < size; flat++) {
            long[] z = unflatten(t, flat);
            long[] x = new long[t.length];
            long[] y = new long[t.length];
            for (int k = 0; k < t.length; k++) {
                x[k] = z[k] / tb.dim(k);
                y[k] = z[k] % tb.dim(k);
            }
            TreeSet<Point> set = new TreeSet<>();
            for (Point p : tableA.get((int) Oracle.flat(ta.toArray(), x))) {
                for (Point q : tableB.get((int) Oracle.flat(tb.toArray(), y))) {
                    set.add(scale(p, span).plus(q));
                }
            }
            out.add(set);
        }
        return out;
    }

    static long[] unflatten(long[] shape, long x) {
        long[] c = new long[shape.length];
        for (int k = shape.length - 1; k >= 0; k--) {
            c[k] = x % shape[k];
            x /= shape[k];
        }
        return c;
    }

    // ---- tile-of by enumeration ----------------------------------------------------------------------

    /** What the brute-force search concluded. */
    enum Verdict { EXISTS, NONE, UNDECIDED }

    /**
     * Whether some {@code A} admitting {@code T / T_B} has {@code L == A (x) B}, by enumeration:
     * {@code L(x, 0) = s⊙A(x) + B(0)} and {@code B(0)} lies in a box {@code [c, c + s)}, so the only candidate
     * map is {@code A*(x) = { floor((p - c) / s) : p in L(x, 0) }}; it must rebuild {@code L} at every
     * {@code z}, and be the map of a layout: a translate {@code A*(0) + d(x)} with {@code d} separable over
     * {@code T_A}, each dimension's {@code d} a shard (some ordered factorisation reproduces it from the
     * strides it reads at the place values), and {@code A*(0)} an offset plus replica progressions (searched
     * among at most 3 progressions with steps inside the set; UNDECIDED if none of those fits).
     */
    static Verdict outerExists(Layout l, Shape t, Layout b, Shape tb) {
        Map<Axis, Long> s = span(b);
        Shape ta = quotient(t, tb);
        List<TreeSet<Point>> tableL = Oracle.table(l);
        List<TreeSet<Point>> tableB = Oracle.table(b);
        TreeSet<Point> b0 = tableB.get(0);
        List<TreeSet<Point>> candidate = new ArrayList<>();
        for (long x = 0; x < ta.size(); x++) {
            long[] z = interleave(ta, tb, ta.unflatten(x), new long[tb.rank()]);
            TreeSet<Point> a = new TreeSet<>();
            for (Point p : tableL.get((int) t.flatten(z))) {
                a.add(floorQuotient(p, min(b0), s));
            }
            candidate.add(a);
        }
        return rebuilds(tableL, t, candidate, ta, tableB, tb, s) ? isLayoutMap(candidate, ta) : Verdict.NONE;
    }

    /**
     * Whether some {@code B} admitting {@code T / T_A} has {@code L == A (x) B}, by enumeration. The inner
     * shard function is {@code d_B(y) = min L(0, y) - min L(0, 0)}, whose width on an axis is B's shard
     * reach; since widths of Minkowski sums add, {@code s = span(B)} must be
     * {@code (width(L(0)) + 1 + reach) / (width(A(0)) + 1)}; then {@code B*(y)} is the part of {@code L(0, y)}
     * whose quotient by {@code s} (in the box of {@code B(0)} moved by {@code d_B(y)}) is the minimum corner of
     * {@code A(0)}, and the checks are as for the outer.
     */
    static Verdict innerExists(Layout l, Shape t, Layout a, Shape ta) {
        Shape tb = quotient(t, ta);
        List<TreeSet<Point>> tableL = Oracle.table(l);
        List<TreeSet<Point>> tableA = Oracle.table(a);
        TreeSet<Point> l0 = tableL.get(0);
        TreeSet<Point> a0 = tableA.get(0);
        List<TreeSet<Point>> lOfY = new ArrayList<>();
        for (long y = 0; y < tb.size(); y++) {
            long[] z = interleave(ta, tb, new long[ta.rank()], tb.unflatten(y));
            lOfY.add(tableL.get((int) t.flatten(z)));
        }
        TreeSet<Axis> axes = new TreeSet<>();
        for (TreeSet<Point> set : tableL) {
            set.forEach(p -> axes.addAll(p.coords().keySet()));
        }
        for (TreeSet<Point> set : tableA) {
            set.forEach(p -> axes.addAll(p.coords().keySet()));
        }
        a.shard().forEach(it -> axes.add(it.axis()));
        TreeMap<Axis, Long> s = new TreeMap<>();
        for (Axis ax : axes) {
            long lo = Long.MAX_VALUE;
            long hi = Long.MIN_VALUE;
            for (TreeSet<Point> set : lOfY) {
                long v = min(set).minus(min(l0)).get(ax);
                lo = Math.min(lo, v);
                hi = Math.max(hi, v);
            }
            long num = width(l0, ax) + 1 + (hi - lo);
            long den = width(a0, ax) + 1;
            if (num % den != 0) {
                return Verdict.NONE;
            }
            s.put(ax, num / den);
        }
        Point cornerA = min(a0);
        Point cornerB = min(l0).minus(scale(cornerA, s));
        List<TreeSet<Point>> candidate = new ArrayList<>();
        for (TreeSet<Point> set : lOfY) {
            // L(0, y) = s⊙A(0) + d_B(y) + B(0): the box of B(0) moves with d_B(y).
            Point shift = min(set).minus(min(l0));
            TreeSet<Point> bSet = new TreeSet<>();
            for (Point p : set) {
                if (floorQuotient(p.minus(shift), cornerB, s).equals(cornerA)) {
                    bSet.add(p.minus(scale(cornerA, s)));
                }
            }
            candidate.add(bSet);
        }
        // span(B*) must be s: 1 + shard reach + width of B*(0) on every axis.
        for (Axis ax : axes) {
            long lo = Long.MAX_VALUE;
            long hi = Long.MIN_VALUE;
            for (TreeSet<Point> set : candidate) {
                if (set.isEmpty()) {
                    return Verdict.NONE;
                }
                long v = min(set).minus(min(candidate.get(0))).get(ax);
                lo = Math.min(lo, v);
                hi = Math.max(hi, v);
            }
            if (1 + (hi - lo) + width(candidate.get(0), ax) != s.get(ax)) {
                return Verdict.NONE;
            }
        }
        return rebuilds(tableL, t, tableA, ta, candidate, tb, s) ? isLayoutMap(candidate, tb) : Verdict.NONE;
    }

    /** True iff {@code L(z) = { a ⊙ s + b : a in A(x), b in B(y) }} at every {@code z}. */
    private static boolean rebuilds(List<TreeSet<Point>> tableL, Shape t, List<TreeSet<Point>> tableA, Shape ta,
                                  List<TreeSet<Point>> tableB, Shape tb, Map<Axis, Long> s) {
        for (long flat = 0; flat < t.size(); flat++) {
            long[] z = t.unflatten(flat);
            long[] x = new long[z.length];
            long[] y = new long[z.length];
            for (int k = 0; k < z.length; k++) {
                x[k] = z[k] / tb.dim(k);
                y[k] = z[k] % tb.dim(k);
            }
            TreeSet<Point> set = new TreeSet<>();
            for (Point p : tableA.get((int) ta.flatten(x))) {
                for (Point q : tableB.get((int) tb.flatten(y))) {
                    set.add(scale(p, s).plus(q));
                }
            }
            if (!set.equals(tableL.get((int) flat))) {
                return false;
            }
        }
        return true;
    }

    /**
     * Whether a table is the map of a layout grouped by {@code shape}: every set a translate
     * {@code Q + d(x)} of {@code Q = table(0)}, {@code d} separable over the shape, each dimension's
     * {@code d} a shard function, and {@code Q} an offset plus replica progressions.
     */
    static Verdict isLayoutMap(List<TreeSet<Point>> table, Shape shape) {
        TreeSet<Point> q = table.get(0);
        Point q0 = min(q);
        List<Point> d = new ArrayList<>();
        for (TreeSet<Point> set : table) {
            Point dx = min(set).minus(q0);
            TreeSet<Point> moved = new TreeSet<>();
            q.forEach(p -> moved.add(p.plus(dx)));
            if (!moved.equals(set)) {
                return Verdict.NONE;
            }
            d.add(dx);
        }
        long[] dims = shape.toArray();
        for (long x = 0; x < table.size(); x++) {
            long[] c = shape.unflatten(x);
            Point sum = Point.ZERO;
            for (int k = 0; k < dims.length; k++) {
                long[] only = new long[dims.length];
                only[k] = c[k];
                sum = sum.plus(d.get((int) Oracle.flat(dims, only)));
            }
            if (!sum.equals(d.get((int) x))) {
                return Verdict.NONE;
            }
        }
        for (int k = 0; k < dims.length; k++) {
            List<Point> g = new ArrayList<>();
            for (long i = 0; i < dims[k]; i++) {
                long[] only = new long[dims.length];
                only[k] = i;
                g.add(d.get((int) Oracle.flat(dims, only)));
            }
            if (!isShardFunction(g, new ArrayList<>())) {
                return Verdict.NONE;
            }
        }
        return isOffsetPlusReplicas(q);
    }

    /**
     * Some ordered factorisation {@code n = e_0 * ... * e_m} (prefix {@code extents} fixed) whose iters,
     * with the single-axis strides {@code g} takes at the place values, reproduce {@code g}.
     */
    private static boolean isShardFunction(List<Point> g, List<Long> extents) {
        long n = g.size();
        long used = 1;
        for (long e : extents) {
            used *= e;
        }
        if (used == n) {
            long[] e = extents.stream().mapToLong(Long::longValue).toArray();
            Point[] stride = new Point[e.length];
            long place = n;
            for (int j = 0; j < e.length; j++) {
                place /= e[j];
                stride[j] = g.get((int) place);
                if (stride[j].coords().size() > 1) {
                    return false;
                }
            }
            for (long i = 0; i < n; i++) {
                long[] digits = unflatten(e, i);
                Point sum = Point.ZERO;
                for (int j = 0; j < e.length; j++) {
                    for (long r = 0; r < digits[j]; r++) {
                        sum = sum.plus(stride[j]);
                    }
                }
                if (!sum.equals(g.get((int) i))) {
                    return false;
                }
            }
            return true;
        }
        for (long f = 2; f <= n / used; f++) {
            if ((n / used) % f == 0) {
                extents.add(f);
                boolean ok = isShardFunction(g, extents);
                extents.remove(extents.size() - 1);
                if (ok) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * {@code Q} as an offset plus replica iters: the product of its per-axis projections, each projection its
     * minimum plus a sum of at most 3 progressions {@code {0, t, .., (f-1)t}} whose points all lie in it.
     */
    static Verdict isOffsetPlusReplicas(TreeSet<Point> q) {
        TreeSet<Axis> axes = new TreeSet<>();
        q.forEach(p -> axes.addAll(p.coords().keySet()));
        long product = 1;
        boolean decided = true;
        for (Axis a : axes) {
            TreeSet<Long> proj = new TreeSet<>();
            q.forEach(p -> proj.add(p.get(a)));
            product *= proj.size();
            long lo = proj.first();
            TreeSet<Long> y = new TreeSet<>();
            proj.forEach(v -> y.add(v - lo));
            List<TreeSet<Long>> progressions = new ArrayList<>();
            for (long t : y) {
                TreeSet<Long> ap = new TreeSet<>(List.of(0L));
                for (long f = 1; t > 0 && y.contains(f * t); f++) {
                    ap.add(f * t);
                    progressions.add(new TreeSet<>(ap));
                }
            }
            decided &= sumOfAtMost(y, new TreeSet<>(List.of(0L)), progressions, 0, 3);
        }
        if (product != q.size()) {
            return Verdict.NONE;
        }
        return decided ? Verdict.EXISTS : Verdict.UNDECIDED;
    }

    private static boolean sumOfAtMost(TreeSet<Long> y, TreeSet<Long> sum, List<TreeSet<Long>> progressions,
                                       int from, int left) {
        if (sum.equals(y)) {
            return true;
        }
        if (left == 0) {
            return false;
        }
        for (int i = from; i < progressions.size(); i++) {
            TreeSet<Long> next = new TreeSet<>();
            for (long u : sum) {
                for (long v : progressions.get(i)) {
                    next.add(u + v);
                }
            }
            if (y.containsAll(next) && sumOfAtMost(y, next, progressions, i, left - 1)) {
                return true;
            }
        }
        return false;
    }

    private static Shape quotient(Shape t, Shape known) {
        long[] d = new long[t.rank()];
        for (int k = 0; k < d.length; k++) {
            d[k] = t.dim(k) / known.dim(k);
        }
        return Shape.of(d);
    }

    private static long[] interleave(Shape ta, Shape tb, long[] x, long[] y) {
        long[] z = new long[x.length];
        for (int k = 0; k < z.length; k++) {
            z[k] = x[k] * tb.dim(k) + y[k];
        }
        return z;
    }

    static long width(TreeSet<Point> set, Axis a) {
        long lo = Long.MAX_VALUE;
        long hi = Long.MIN_VALUE;
        for (Point p : set) {
            lo = Math.min(lo, p.get(a));
            hi = Math.max(hi, p.get(a));
        }
        return hi - lo;
    }

    /** Per-axis minimum of a set. */
    static Point min(TreeSet<Point> set) {
        TreeMap<Axis, Long> m = new TreeMap<>();
        for (Point p : set) {
            p.coords().keySet().forEach(a -> m.put(a, 0L));
        }
        for (Axis a : new ArrayList<>(m.keySet())) {
            long v = Long.MAX_VALUE;
            for (Point p : set) {
                v = Math.min(v, p.get(a));
            }
            m.put(a, v);
        }
        return new Point(m);
    }

    static Point floorQuotient(Point p, Point corner, Map<Axis, Long> s) {
        TreeMap<Axis, Long> m = new TreeMap<>();
        TreeSet<Axis> axes = new TreeSet<>(p.coords().keySet());
        axes.addAll(corner.coords().keySet());
        for (Axis a : axes) {
            m.put(a, Math.floorDiv(p.get(a) - corner.get(a), s.getOrDefault(a, 1L)));
        }
        return new Point(m);
    }
}
