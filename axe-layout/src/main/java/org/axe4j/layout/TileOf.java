package org.axe4j.layout;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Tile-of (paper Appendix D): given {@code L} admitting {@code T}, decide whether {@code L == A (x) B}
 * as maps ({@link Tile}) and recover the missing factor: {@link #outer} finds {@code A} (admitting
 * {@code T_A = T / T_B}) from a given inner {@code B}; {@link #inner} finds {@code B} (admitting
 * {@code T_B = T / T_A}) from a given outer {@code A}. Every answer is verified by an exact map
 * comparison before it is returned, except an outer factor where neither layout has replicas: there
 * {@code A (x) B == L} follows from the checks already made (the argument is in {@link #outer}); an
 * absent answer carries the reason ({@link Result}).
 *
 * <p><b>Method.</b> Write {@code s = span(B)} and split every layout into its shard function {@code D}
 * and the set {@code Q = O + Rset} (offset plus replica displacements), so that {@code L(x) = D(x) + Q}.
 * Two layouts induce the same map iff their {@code Q} sets are equal and their shard functions are equal
 * (at {@code x = 0} both sets are {@code Q}; then {@code D(x) + Q = D'(x) + Q} forces {@code D(x) = D'(x)}),
 * and two shards induce the same function iff their fused forms are equal (rules D0/D1, with the axis of
 * a zero stride ignored): the last iter of a fused shard is read off {@code D(1)}, its extent is where
 * {@code D} stops being {@code i * D(1)}, and the rest follows by induction. Since
 * {@code A (x) B = (s⊙D_A (interleaved with) D_B, s⊙Q_A + Q_B)}:
 * <ol>
 *   <li><b>Shard.</b> {@code D_L} must be separable over the interleaved shape
 *       {@code (T_A[0], T_B[0], T_A[1], ...)} ({@link Group}); block {@code 2k+1} must be {@code B}'s block
 *       {@code k} and block {@code 2k} must be {@code A}'s block {@code k} scaled by {@code s}, both as
 *       fused forms. For {@code outer} this determines {@code D_A}: each stride of block {@code 2k} on axis
 *       {@code a} is divided by {@code s_a}, exactly or not at all. For {@code inner} it determines
 *       {@code D_B} (the odd blocks).</li>
 *   <li><b>Span.</b> For {@code inner}, {@code s} is unknown a priori but forced: widths of Minkowski sums
 *       add, and {@code span_a(B) = 1 + shardReach_a(B) + width_a(Q_B)}, so
 *       {@code width_a(Q_L) = s_a * width_a(Q_A) + s_a - 1 - shardReach_a(B)}, i.e.
 *       {@code s_a = (width_a(Q_L) + 1 + shardReach_a(B)) / (width_a(Q_A) + 1)}, which must divide exactly.</li>
 *   <li><b>Replicas and offset.</b> {@code Q_B} lies in a box {@code [c, c + s)} on every axis, so every
 *       point {@code p} of {@code s⊙Q_A + Q_B} splits uniquely as {@code q_A = floor((p - c) / s)}: for
 *       {@code outer}, {@code Q_A = { floor((p - c) / s) : p in Q_L }}; for {@code inner},
 *       {@code Q_B = { p - s⊙m : p in Q_L, floor((p - c) / s) = m }} with {@code m} the per-axis minimum
 *       of {@code Q_A}. Either is checked by {@code s⊙Q_A + Q_B == Q_L}. The set found is then written as
 *       offset plus replicas: first structurally ({@code R_L} minus the known factor's replicas, offsets
 *       subtracted and divided exactly), otherwise by writing it as a product of per-axis sets and each
 *       per-axis set as its minimum plus a Minkowski sum of progressions {@code {0, t, ..., (f-1)t}}
 *       (depth-first search with strictly increasing {@code t}; complete, bounded by
 *       {@link #SEARCH_BUDGET} nodes).</li>
 * </ol>
 *
 * <p><b>Completeness.</b> Steps 1 and 2 are necessary and determine the missing shard and span uniquely,
 * and step 3 determines the missing {@code Q} set uniquely; so the only way to miss an existing factor
 * is a {@code Q} set whose progression search exceeds the budget (reported as such). The outer map is
 * fully identifiable from {@code L} and {@code B}, and the inner map from {@code L} and {@code A}; the
 * layouts returned are one representation of that map (the given layout's iters, replicas in the form
 * {@code L} carries them where possible).
 *
 * <p>Example: the tensor-core tile {@code S[(8,2,4,2):(4@laneid,1@warpid,1@laneid,1@reg)] + R[2:4@warpid]
 * + 5@warpid} by (8,16) over the warp atom {@code S[(8,4,2):(4@laneid,1@laneid,1@reg)]} by (8,8) has the
 * outer layout {@code S[2:1@warpid] + R[2:4@warpid] + 5@warpid} by (1,2): {@code span(B)} is 32 on laneid,
 * 2 on reg and 1 on warpid, so the warp iters, replicas and offset are not scaled.
 */
public final class TileOf {
    private TileOf() {}

    /** Most search nodes spent writing one per-axis set as a sum of progressions. */
    static final int SEARCH_BUDGET = 100_000;

    /** The outer {@code A} with {@code tiled == A (x) inner} as maps, or why there is none. INVALID for bad shapes. */
    public static Result<Layout> outer(Layout tiled, Shape shape, Layout inner, Shape innerShape) {
        long[] outerDims = quotientDims("tileOf.outer", tiled, shape, inner, innerShape, "inner");
        long[] innerDims = new long[innerShape.rank()];
        long[] splitDims = new long[2 * innerDims.length];
        for (int k = 0; k < innerDims.length; k++) {
            innerDims[k] = innerShape.dim(k);
            splitDims[2 * k] = outerDims[k];
            splitDims[2 * k + 1] = innerDims[k];
        }
        Group.Refinement gb = Group.refine(inner.shard(), innerDims);
        if (gb.failedIter() != null) {
            return Result.absent("inner layout " + inner + " cannot be grouped by " + innerShape + ", so it tiles nothing");
        }
        Group.Refinement gl = Group.refine(tiled.shard(), splitDims);
        if (gl.failedIter() != null) {
            return Result.absent("layout " + tiled + " is not separable over the interleaved shape "
                    + Shape.of(splitDims));
        }
        Map<Axis, Long> span = inner.spans();
        Iter[] outerShard = new Iter[gl.iters().size()];
        int n = 0;
        for (int k = 0; k < shape.rank(); k++) {
            List<Iter> innerBlock = gl.block(2 * k + 1);
            if (!sameShardFunction(innerBlock, gb.block(k))) {
                return Result.absent("dimension " + k + ": the inner digits of " + tiled + " are " + innerBlock
                        + ", not the inner layout's block " + gb.block(k));
            }
            for (Iter it : gl.block(2 * k)) {
                long s = span.getOrDefault(it.axis(), 1L);
                if (it.stride() % s != 0) {
                    return Result.absent("dimension " + k + ": outer digit " + it + " is not a multiple of span "
                            + s + " of the inner layout on " + it.axis());
                }
                outerShard[n++] = s == 1 ? it : it.withStride(it.stride() / s);
            }
        }
        List<Iter> outerIters = List.of(Arrays.copyOf(outerShard, n));
        if (tiled.replica().isEmpty() && inner.replica().isEmpty()) {
            // Q_L = {O_L} and Q_B = {O_B}, so Q_A = {(O_L - O_B) / s}, exact on every axis: the general steps
            // below on one-point sets, without building them.
            Optional<SortedMap<Axis, Long>> offset = offsetQuotient(tiled.offset(), inner.offset(), span);
            if (offset.isEmpty()) {
                return Result.absent("replicas and offset of " + tiled + " are not span-scaled outer ones plus the"
                        + " inner's " + offsetReplicaSet(inner));
            }
            // No rebuild check needed here: A (x) B is L as a map. Group keeps each block's function, so on the
            // interleaved coordinate (x_0, y_0, x_1, ...) (the same flat index as z_k = x_k * T_B[k] + y_k)
            //   D_L = sum_k L_2k(x_k) + L_2k+1(y_k),  D_{A (x) B} = sum_k s * A_k(x_k) + B_k(y_k),
            // where A_k = L_2k / s exactly (every stride divided without remainder, so s * A_k = L_2k) and
            // B_k = L_2k+1 (equal fused forms are equal functions); the offsets are s * (O_L - O_B) / s + O_B = O_L;
            // neither layout has replicas. TileOfShortcutTest compares this against the rebuild on random cases.
            return Result.of(new Layout(outerIters, List.of(), offset.get()));
        }
        Shape outerShape = Shape.of(outerDims);
        Set<Point> qL = offsetReplicaSet(tiled);
        Set<Point> qB = offsetReplicaSet(inner);
        Set<Axis> axes = axesOf(qL, qB, span.keySet());
        Map<Axis, Long> corner = minima(qB, axes);
        TreeSet<Point> qA = new TreeSet<>();
        for (Point p : qL) {
            qA.add(floorQuotient(p, corner, span, axes));
        }
        if (!minkowski(qA, span, qB).equals(qL)) {
            return Result.absent("replicas and offset of " + tiled + " are not span-scaled outer ones plus the inner's "
                    + qB);
        }
        Optional<Layout> rest = structuralRest(tiled, inner, span, true)
                .filter(cand -> offsetReplicaSet(cand).equals(qA))
                .or(() -> asOffsetAndReplicas(qA));
        if (rest.isEmpty()) {
            return Result.absent("the outer replica and offset set " + qA + " is not an offset plus replica iters"
                    + " (or the search budget ran out)");
        }
        Layout outer = new Layout(outerIters, rest.get().replica(), rest.get().offset());
        return verified(tiled, Tile.tile(outer, outerShape, inner, innerShape), outer);
    }

    /** Whether two shards are the same function: equal as lists, or with equal fused forms. */
    private static boolean sameShardFunction(List<Iter> a, List<Iter> b) {
        return a.equals(b) || fusedForm(a).equals(fusedForm(b));
    }

    /** The inner {@code B} with {@code tiled == outer (x) B} as maps, or why there is none. INVALID for bad shapes. */
    public static Result<Layout> inner(Layout tiled, Shape shape, Layout outer, Shape outerShape) {
        String op = "tileOf.inner";
        Shape innerShape = quotientShape(op, tiled, shape, outer, outerShape, "outer");
        Result<Grouped> ga = Group.tryGroup(outer, outerShape);
        if (ga.isEmpty()) {
            return Result.absent("outer layout " + outer + " cannot be grouped by " + outerShape + ", so it tiles nothing");
        }
        Shape split = Tile.interleavedShape(outerShape, innerShape);
        Result<Grouped> gl = Group.tryGroup(tiled, split);
        if (gl.isEmpty()) {
            return Result.absent("layout " + tiled + " is not separable over the interleaved shape " + split);
        }
        List<Iter> innerShard = new ArrayList<>();
        for (int k = 0; k < shape.rank(); k++) {
            innerShard.addAll(gl.get().block(2 * k + 1));
        }
        Layout bareInner = Layout.of(innerShard, List.of(), Map.of());
        Set<Point> qL = offsetReplicaSet(tiled);
        Set<Point> qA = offsetReplicaSet(outer);
        TreeSet<Axis> axes = new TreeSet<>(axesOf(qL, qA, bareInner.spans().keySet()));
        outer.shard().forEach(it -> axes.add(it.axis()));
        // s_a = (width_a(Q_L) + 1 + shardReach_a(B)) / (width_a(Q_A) + 1)
        TreeMap<Axis, Long> span = new TreeMap<>();
        for (Axis a : axes) {
            long numerator = Checks.add("tile-of span numerator on " + a, width(qL, a), bareInner.spanOn(a));
            long denominator = Checks.add("tile-of outer width on " + a, width(qA, a), 1);
            if (numerator % denominator != 0) {
                return Result.absent("on axis " + a + " the width " + width(qL, a) + " of the replicas of " + tiled
                        + " is no span multiple of the outer width " + width(qA, a));
            }
            span.put(a, numerator / denominator);
        }
        for (int k = 0; k < shape.rank(); k++) {
            List<Iter> outerBlock = gl.get().block(2 * k);
            List<Iter> scaled = Tile.scale(ga.get().block(k), span);
            if (!fusedForm(outerBlock).equals(fusedForm(scaled))) {
                return Result.absent("dimension " + k + ": the outer digits of " + tiled + " are " + outerBlock
                        + ", not the outer layout's block scaled by the span " + span + ": " + scaled);
            }
        }
        Map<Axis, Long> minA = minima(qA, axes);
        Map<Axis, Long> corner = new TreeMap<>();
        Map<Axis, Long> minL = minima(qL, axes);
        for (Axis a : axes) {
            corner.put(a, Checks.sub("tile-of corner on " + a, minL.get(a),
                    Checks.mul("tile-of scaled minimum on " + a, span.get(a), minA.get(a))));
        }
        Point scaledMinA = scalePoint(new Point(new TreeMap<>(minA)), span);
        Point origin = new Point(new TreeMap<>(minA));
        TreeSet<Point> qB = new TreeSet<>();
        for (Point p : qL) {
            if (floorQuotient(p, corner, span, axes).equals(origin)) {
                qB.add(p.minus(scaledMinA));
            }
        }
        if (!minkowski(qA, span, qB).equals(qL)) {
            return Result.absent("replicas and offset of " + tiled + " are not the outer's " + qA
                    + " scaled by " + span + " plus an inner set");
        }
        Optional<Layout> rest = structuralRest(tiled, outer, span, false)
                .filter(cand -> offsetReplicaSet(cand).equals(qB))
                .or(() -> asOffsetAndReplicas(qB));
        if (rest.isEmpty()) {
            return Result.absent("the inner replica and offset set " + qB + " is not an offset plus replica iters"
                    + " (or the search budget ran out)");
        }
        Layout inner = new Layout(innerShard, rest.get().replica(), rest.get().offset());
        return verified(tiled, Tile.tile(outer, outerShape, inner, innerShape), inner);
    }

    /** {@code (O_L - O_B) / s} axis by axis, or empty where a difference is not a multiple of its span. */
    private static Optional<SortedMap<Axis, Long>> offsetQuotient(SortedMap<Axis, Long> tiledOffset,
                                                                 Map<Axis, Long> innerOffset, Map<Axis, Long> span) {
        if (tiledOffset.isEmpty() && innerOffset.isEmpty()) {
            return Optional.of(tiledOffset);
        }
        TreeMap<Axis, Long> difference = new TreeMap<>(tiledOffset);
        innerOffset.forEach((a, v) -> difference.put(a, Checks.sub("tile-of offset on " + a,
                difference.getOrDefault(a, 0L), v)));
        for (Map.Entry<Axis, Long> e : difference.entrySet()) {
            long s = span.getOrDefault(e.getKey(), 1L);
            if (e.getValue() % s != 0) {
                return Optional.empty();
            }
            e.setValue(e.getValue() / s);
        }
        return Optional.of(difference);
    }

    // ---- exact map comparison ---------------------------------------------------------------------

    /** The canonical shard (D0, DZ, D1): two shards are the same function iff these are equal. */
    static List<Iter> fusedForm(List<Iter> shard) {
        return Canonicalize.canonicalShard(shard);
    }

    /** {@code O + Rset}: what {@code L(x) - D(x)} is for every {@code x}. */
    static Set<Point> offsetReplicaSet(Layout l) {
        TreeSet<Point> out = new TreeSet<>();
        Point o = l.offsetPoint();
        for (Point r : l.replicaSet()) {
            Budget.tick();
            out.add(r.plus(o));
        }
        return out;
    }

    static Result<Layout> verified(Layout tiled, Layout rebuilt, Layout factor) {
        // Equal records are the same map, so the two canonicalisations are only needed when the rebuild differs
        // in form (fused or split digits, reordered replicas).
        if (!tiled.equals(rebuilt) && !Equivalence.equivalent(tiled, rebuilt)) {
            return Result.absent("the recovered factor " + factor + " rebuilds " + rebuilt + ", not " + tiled);
        }
        return Result.of(factor);
    }

    // ---- shapes --------------------------------------------------------------------------------------

    /** {@code T / T_known}, checking ranks, admission and divisibility; errors name the operation. */
    private static Shape quotientShape(String op, Layout tiled, Shape shape, Layout known, Shape knownShape,
                                       String role) {
        return Shape.of(quotientDims(op, tiled, shape, known, knownShape, role));
    }

    /** {@link #quotientShape} as an array of dimensions. */
    private static long[] quotientDims(String op, Layout tiled, Shape shape, Layout known, Shape knownShape,
                                       String role) {
        if (shape.rank() != knownShape.rank()) {
            throw AxeException.invalid("%s: shape %s of %s has rank %d but %s shape %s of %s has rank %d;"
                            + " the ranks must be equal",
                    op, shape, tiled, shape.rank(), role, knownShape, known, knownShape.rank());
        }
        Tile.requireAdmitted(op, "tiled", tiled, shape);
        Tile.requireAdmitted(op, role, known, knownShape);
        long[] dims = new long[shape.rank()];
        for (int k = 0; k < dims.length; k++) {
            if (shape.dim(k) % knownShape.dim(k) != 0) {
                throw AxeException.invalid("%s: %s shape %s does not divide shape %s of %s (dimension %d: %d does not"
                                + " divide %d)",
                        op, role, knownShape, shape, tiled, k, knownShape.dim(k), shape.dim(k));
            }
            dims[k] = shape.dim(k) / knownShape.dim(k);
        }
        return dims;
    }

    // ---- point sets ----------------------------------------------------------------------------------

    private static Set<Axis> axesOf(Set<Point> p, Set<Point> q, Set<Axis> more) {
        TreeSet<Axis> axes = new TreeSet<>(more);
        p.forEach(x -> axes.addAll(x.coords().keySet()));
        q.forEach(x -> axes.addAll(x.coords().keySet()));
        return axes;
    }

    private static Map<Axis, Long> minima(Set<Point> set, Set<Axis> axes) {
        TreeMap<Axis, Long> min = new TreeMap<>();
        for (Axis a : axes) {
            long m = Long.MAX_VALUE;
            for (Point p : set) {
                m = Math.min(m, p.get(a));
            }
            min.put(a, m);
        }
        return min;
    }

    private static long width(Set<Point> set, Axis a) {
        long lo = Long.MAX_VALUE;
        long hi = Long.MIN_VALUE;
        for (Point p : set) {
            lo = Math.min(lo, p.get(a));
            hi = Math.max(hi, p.get(a));
        }
        return Checks.sub("width of a replica set on " + a, hi, lo);
    }

    /** {@code floor((p - c) / s)} axis by axis. */
    private static Point floorQuotient(Point p, Map<Axis, Long> corner, Map<Axis, Long> span, Set<Axis> axes) {
        TreeMap<Axis, Long> q = new TreeMap<>();
        for (Axis a : axes) {
            q.put(a, Math.floorDiv(Checks.sub("tile-of quotient on " + a, p.get(a), corner.getOrDefault(a, 0L)),
                    span.getOrDefault(a, 1L)));
        }
        return new Point(q);
    }

    private static Point scalePoint(Point p, Map<Axis, Long> span) {
        return new Point(Tile.scale(p.coords(), span));
    }

    /** {@code s⊙X + Y}. */
    private static Set<Point> minkowski(Set<Point> x, Map<Axis, Long> span, Set<Point> y) {
        TreeSet<Point> out = new TreeSet<>();
        for (Point a : x) {
            Point scaled = scalePoint(a, span);
            for (Point b : y) {
                Budget.tick();
                out.add(scaled.plus(b));
            }
        }
        return out;
    }

    // ---- offset plus replicas ------------------------------------------------------------------------

    /**
     * The replicas and offset {@code L} leaves for the missing factor, read off structurally: {@code R_L}
     * minus the known factor's replicas (scaled by {@code span} when the known factor is the outer one),
     * and {@code O_L} minus the known offset; for a missing outer factor both are divided by the span,
     * exactly. Empty where the iters do not match up.
     */
    private static Optional<Layout> structuralRest(Layout tiled, Layout known, Map<Axis, Long> span,
                                                   boolean missingOuter) {
        List<Iter> knownReplicas = missingOuter ? known.replica() : Tile.scale(known.replica(), span);
        List<Iter> left = new ArrayList<>(tiled.replica());
        for (Iter it : knownReplicas) {
            if (!left.remove(it)) {
                return Optional.empty();
            }
        }
        Map<Axis, Long> knownOffset = missingOuter ? known.offset() : Tile.scale(known.offset(), span);
        TreeMap<Axis, Long> offset = new TreeMap<>(tiled.offset());
        knownOffset.forEach((a, v) -> offset.put(a, Checks.sub("tile-of offset on " + a, offset.getOrDefault(a, 0L), v)));
        if (!missingOuter) {
            return Optional.of(Layout.of(List.of(), left, offset));
        }
        List<Iter> replicas = new ArrayList<>();
        for (Iter it : left) {
            long s = span.getOrDefault(it.axis(), 1L);
            if (it.stride() % s != 0) {
                return Optional.empty();
            }
            replicas.add(it.withStride(it.stride() / s));
        }
        TreeMap<Axis, Long> divided = new TreeMap<>();
        for (Map.Entry<Axis, Long> e : offset.entrySet()) {
            long s = span.getOrDefault(e.getKey(), 1L);
            if (e.getValue() % s != 0) {
                return Optional.empty();
            }
            divided.put(e.getKey(), e.getValue() / s);
        }
        return Optional.of(Layout.of(List.of(), replicas, divided));
    }

    /**
     * A shard-less layout whose {@code O + Rset} is {@code set}: the set must be the product of its
     * per-axis projections (replica iters on different axes combine independently), and each projection
     * its minimum plus a Minkowski sum of progressions {@code {0, t, ..., (f-1)t}}, t > 0.
     */
    static Optional<Layout> asOffsetAndReplicas(Set<Point> set) {
        TreeSet<Axis> axes = new TreeSet<>(axesOf(set, Set.of(), Set.of()));
        long product = 1;
        TreeMap<Axis, Long> offset = new TreeMap<>();
        List<Iter> replicas = new ArrayList<>();
        for (Axis a : axes) {
            TreeSet<Long> projection = new TreeSet<>();
            set.forEach(p -> projection.add(p.get(a)));
            product = Checks.mul("size of a replica set", product, projection.size());
            long min = projection.first();
            offset.put(a, min);
            TreeSet<Long> shifted = new TreeSet<>();
            projection.forEach(v -> shifted.add(Checks.sub("replica value on " + a, v, min)));
            Optional<List<long[]>> progressions = sumOfProgressions(shifted);
            if (progressions.isEmpty()) {
                return Optional.empty();
            }
            for (long[] ft : progressions.get()) {
                replicas.add(new Iter(ft[0], ft[1], a));
            }
        }
        if (product != set.size()) {
            return Optional.empty();
        }
        return Optional.of(Layout.of(List.of(), replicas, offset));
    }

    /**
     * Progressions {@code (f, t)} whose Minkowski sum {@code {0, t, ..., (f-1)t} + ...} is {@code y}
     * ({@code 0 = min y}). Depth-first with strictly increasing {@code t} (two progressions of one stride
     * add to one), each step growing the partial sum; complete, since sorting any decomposition by
     * stride and dropping the steps that add nothing yields such a path.
     */
    static Optional<List<long[]>> sumOfProgressions(SortedSet<Long> y) {
        int[] budget = {SEARCH_BUDGET};
        List<long[]> path = new ArrayList<>();
        TreeSet<Long> start = new TreeSet<>(List.of(0L));
        return search(y, start, 0, path, budget) ? Optional.of(path) : Optional.empty();
    }

    private static boolean search(SortedSet<Long> y, TreeSet<Long> sum, long lastStride, List<long[]> path,
                                  int[] budget) {
        if (sum.size() == y.size()) {
            return true; // sum is a subset of y throughout
        }
        if (--budget[0] < 0) {
            return false;
        }
        long missing = -1;
        for (long v : y) {
            if (!sum.contains(v)) {
                missing = v;
                break;
            }
        }
        // The smallest missing value needs a progression of stride at most itself.
        for (long t : y.subSet(lastStride + 1, missing + 1)) {
            List<TreeSet<Long>> sums = progressions(sum, t, y);
            for (int i = sums.size() - 1; i >= 0; i--) { // longest progression first
                if (sums.get(i).size() == sum.size()) {
                    continue;
                }
                path.add(new long[] {i + 2, t});
                if (search(y, sums.get(i), t, path, budget)) {
                    return true;
                }
                path.remove(path.size() - 1);
            }
        }
        return false;
    }

    /**
     * The sums {@code sum + {0, t, ..., (f - 1) t}} for f = 2, 3, ... as long as every point stays in {@code within}
     * (the progressions of stride t a search may add next), shortest first.
     */
    static List<TreeSet<Long>> progressions(SortedSet<Long> sum, long t, Set<Long> within) {
        List<TreeSet<Long>> sums = new ArrayList<>();
        TreeSet<Long> next = new TreeSet<>(sum);
        for (long f = 2; ; f++) {
            TreeSet<Long> grown = new TreeSet<>(next);
            for (long v : sum) {
                Budget.tick();
                long w = v + (f - 1) * t;
                if (!within.contains(w)) {
                    return sums;
                }
                grown.add(w);
            }
            next = grown;
            sums.add(grown);
        }
    }
}
