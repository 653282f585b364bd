package org.axe4j.layout;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Direct-sum-of (TIRx's {@code is_direct_sum_right} and {@code is_direct_sum_left}): given {@code L} over the
 * interleaved shape {@code I = (T_A[0], T_B[0], T_A[1], T_B[1], ...)} and one addend, decide whether
 * {@code L == A (+) B} as maps ({@link DirectSum}) and recover the other addend. {@link #left} finds {@code A}
 * (over {@code T_A}, the even entries of I) from a given right addend {@code B}; {@link #right} finds {@code B}
 * (over {@code T_B}, the odd entries) from a given left addend {@code A}. Every answer is verified by an exact
 * map comparison before it is returned; an absent answer carries the reason.
 *
 * <p><b>Method</b> (as {@link TileOf}, with every span 1): {@code L(x) = D(x) + Q} with {@code Q = O + Rset}, and
 * {@code A (+) B = (D_A interleaved with D_B, Q_A + Q_B)} (Minkowski sum). The shard: {@code D_L} must group by
 * {@code I}; the known addend's blocks must equal, as fused forms, L's blocks of its parity; L's other blocks are
 * the missing addend's shard. The rest: {@code Q} sets of layouts are products of per-axis sets, so
 * {@code Q_A + Q_B = Q_L} is solved axis by axis: the missing set is {@code min Q_L - min Q_known} plus a
 * Minkowski sum of progressions {@code {0, t, .., (f-1)t}} chosen inside the erosion
 * {@code {e : e + Q_known ⊆ Q_L}} until it covers {@code Q_L} (depth-first over strictly increasing strides, each
 * at most the smallest point not yet covered; complete, bounded by {@link TileOf#SEARCH_BUDGET} nodes). Unlike a
 * tile's, the missing replica set need not be unique ({@code {0,1} + {0,2} = {0,1} + {0,1,2}}); the answer is
 * L's replicas less the known ones where that works, else the first set the search finds.
 *
 * <p>Example: {@code S[16:1]} over {@code I = (2,2,2,2)} with the right addend {@code S[(2,2):(4,1)]} by (2,2)
 * (a 2x2 block of a width-4 matrix) has the left addend {@code S[(2,2):(8,2)]} by (2,2): the block origins.
 */
public final class DirectSumOf {
    private DirectSumOf() {}

    /** The left addend A with {@code sum == A (+) right} (TIRx's {@code right.is_direct_sum_right(sum, I, T_B)}). */
    public static Result<Layout> left(Layout sum, Shape interleaved, Layout right, Shape rightShape) {
        return missing("is_direct_sum_right", sum, interleaved, right, rightShape, true);
    }

    /** The right addend B with {@code sum == left (+) B} (TIRx's {@code left.is_direct_sum_left(sum, I, T_A)}). */
    public static Result<Layout> right(Layout sum, Shape interleaved, Layout left, Shape leftShape) {
        return missing("is_direct_sum_left", sum, interleaved, left, leftShape, false);
    }

    private static Result<Layout> missing(String op, Layout sum, Shape interleaved, Layout known, Shape knownShape,
                                          boolean knownIsRight) {
        String role = knownIsRight ? "right" : "left";
        int rank = knownShape.rank();
        if (interleaved.rank() != 2 * rank) {
            throw AxeException.invalid("%s: interleaved_shape %s has rank %d, not twice the rank %d of %s_shape %s",
                    op, interleaved, interleaved.rank(), rank, role, knownShape);
        }
        List<Long> otherDims = new ArrayList<>();
        for (int k = 0; k < rank; k++) {
            long at = interleaved.dim(2 * k + (knownIsRight ? 1 : 0));
            if (at != knownShape.dim(k)) {
                throw AxeException.invalid("%s: entry %d of interleaved_shape %s is %d, but %s_shape %s has %d there"
                                + " (I interleaves (left[0], right[0], left[1], right[1], ...))",
                        op, 2 * k + (knownIsRight ? 1 : 0), interleaved, at, role, knownShape, knownShape.dim(k));
            }
            otherDims.add(interleaved.dim(2 * k + (knownIsRight ? 0 : 1)));
        }
        Shape otherShape = new Shape(otherDims);
        Tile.requireAdmitted(op, "sum", sum, interleaved);
        Tile.requireAdmitted(op, role, known, knownShape);
        Result<Grouped> gk = Group.tryGroup(known, knownShape);
        if (gk.isEmpty()) {
            return Result.absent("the %s layout %s cannot be grouped by %s: %s", role, known, knownShape, gk.reason());
        }
        Result<Grouped> gs = Group.tryGroup(sum, interleaved);
        if (gs.isEmpty()) {
            return Result.absent("layout %s is not separable over the interleaved shape %s", sum, interleaved);
        }
        List<Iter> shard = new ArrayList<>();
        for (int k = 0; k < rank; k++) {
            List<Iter> knownBlock = gs.get().block(2 * k + (knownIsRight ? 1 : 0));
            if (!TileOf.fusedForm(knownBlock).equals(TileOf.fusedForm(gk.get().block(k)))) {
                return Result.absent("dimension %d: the %s digits of %s are %s, not the %s layout's block %s",
                        k, role, sum, knownBlock, role, gk.get().block(k));
            }
            shard.addAll(gs.get().block(2 * k + (knownIsRight ? 0 : 1)));
        }
        Set<Point> qL = TileOf.offsetReplicaSet(sum);
        Set<Point> qK = TileOf.offsetReplicaSet(known);
        Optional<Layout> rest = structuralRest(sum, known).filter(c -> plus(TileOf.offsetReplicaSet(c), qK).equals(qL))
                .or(() -> searchedRest(qL, qK));
        if (rest.isEmpty()) {
            return Result.absent("the replicas and offset %s of %s are no offset plus replica iters plus the %s "
                    + "layout's %s (or the search budget ran out)", qL, sum, role, qK);
        }
        Layout other = new Layout(shard, rest.get().replica(), rest.get().offset());
        Layout rebuilt = knownIsRight ? DirectSum.directSum(other, otherShape, known, knownShape)
                : DirectSum.directSum(known, knownShape, other, otherShape);
        if (!Equivalence.equivalent(sum, rebuilt)) {
            return Result.absent("the recovered addend %s rebuilds %s, not %s", other, rebuilt, sum);
        }
        return Result.of(other);
    }

    /** L's replicas less the known addend's (as a multiset) and {@code O_L - O_known}; empty where one is missing. */
    private static Optional<Layout> structuralRest(Layout sum, Layout known) {
        List<Iter> left = new ArrayList<>(sum.replica());
        for (Iter it : known.replica()) {
            if (!left.remove(it)) {
                return Optional.empty();
            }
        }
        TreeMap<Axis, Long> offset = new TreeMap<>(sum.offset());
        known.offset().forEach((a, v) -> offset.put(a, Checks.sub("direct-sum-of offset on " + a,
                offset.getOrDefault(a, 0L), v)));
        return Optional.of(Layout.of(List.of(), left, offset));
    }

    /** {@code X + Y} for point sets. */
    static Set<Point> plus(Set<Point> x, Set<Point> y) {
        TreeSet<Point> out = new TreeSet<>();
        for (Point a : x) {
            for (Point b : y) {
                Budget.tick();
                out.add(a.plus(b));
            }
        }
        return out;
    }

    /** A shard-less layout whose {@code O + Rset} plus {@code qK} is {@code qL}, solved axis by axis. */
    private static Optional<Layout> searchedRest(Set<Point> qL, Set<Point> qK) {
        TreeSet<Axis> axes = new TreeSet<>();
        qL.forEach(p -> axes.addAll(p.coords().keySet()));
        qK.forEach(p -> axes.addAll(p.coords().keySet()));
        TreeMap<Axis, Long> offset = new TreeMap<>();
        List<Iter> replicas = new ArrayList<>();
        for (Axis a : axes) {
            TreeSet<Long> z = projection(qL, a);
            TreeSet<Long> y = projection(qK, a);
            long zMin = z.first();
            long yMin = y.first();
            offset.put(a, Checks.sub("direct-sum-of offset on " + a, zMin, yMin));
            Optional<List<long[]>> progressions = solve(shifted(z, zMin), shifted(y, yMin));
            if (progressions.isEmpty()) {
                return Optional.empty();
            }
            for (long[] ft : progressions.get()) {
                replicas.add(new Iter(ft[0], ft[1], a));
            }
        }
        return Optional.of(Layout.of(List.of(), replicas, offset));
    }

    private static TreeSet<Long> projection(Set<Point> set, Axis a) {
        TreeSet<Long> out = new TreeSet<>();
        set.forEach(p -> out.add(p.get(a)));
        return out;
    }

    private static TreeSet<Long> shifted(SortedSet<Long> set, long by) {
        TreeSet<Long> out = new TreeSet<>();
        set.forEach(v -> out.add(Checks.sub("direct-sum-of replica value", v, by)));
        return out;
    }

    /**
     * Progressions {@code (f, t)} whose Minkowski sum X (with 0) satisfies {@code X + y == z}, where
     * {@code min y = min z = 0}; empty when there are none (or the search budget ran out).
     */
    static Optional<List<long[]>> solve(SortedSet<Long> z, SortedSet<Long> y) {
        TreeSet<Long> erosion = new TreeSet<>();
        for (long e : z) {
            boolean inside = true;
            for (long v : y) {
                Budget.tick();
                if (!z.contains(e + v)) {
                    inside = false;
                    break;
                }
            }
            if (inside) {
                erosion.add(e);
            }
        }
        int[] budget = {TileOf.SEARCH_BUDGET};
        List<long[]> path = new ArrayList<>();
        return search(z, y, erosion, new TreeSet<>(List.of(0L)), 0, path, budget) ? Optional.of(path)
                : Optional.empty();
    }

    private static boolean search(SortedSet<Long> z, SortedSet<Long> y, SortedSet<Long> erosion, TreeSet<Long> sum,
                                  long lastStride, List<long[]> path, int[] budget) {
        TreeSet<Long> covered = new TreeSet<>();
        for (long s : sum) {
            for (long v : y) {
                Budget.tick();
                covered.add(s + v);
            }
        }
        if (covered.size() == z.size()) {
            return true; // covered is a subset of z throughout (sum lies in the erosion)
        }
        if (--budget[0] < 0) {
            return false;
        }
        long missing = -1;
        for (long v : z) {
            if (!covered.contains(v)) {
                missing = v;
                break;
            }
        }
        // Every later progression adds points no smaller than its stride, so the one covering `missing` has t <= it.
        if (missing <= lastStride) {
            return false;
        }
        for (long t : erosion.subSet(lastStride + 1, missing + 1)) {
            List<TreeSet<Long>> sums = TileOf.progressions(sum, t, erosion);
            for (int i = sums.size() - 1; i >= 0; i--) { // longest progression first
                path.add(new long[] {i + 2, t});
                if (search(z, y, erosion, sums.get(i), t, path, budget)) {
                    return true;
                }
                path.remove(path.size() - 1);
            }
        }
        return false;
    }
}
