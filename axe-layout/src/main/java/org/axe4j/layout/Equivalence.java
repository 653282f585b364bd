package org.axe4j.layout;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Exact equivalence of layouts: {@code a ~ b} iff {@code size(a) = size(b)} and {@code L_a(x) = L_b(x)}
 * as sets for every {@code x in [0, size)}.
 *
 * <h2>Decision procedure</h2>
 * Let {@code A}, {@code B} be the canonical forms ({@link Canonicalize}); they induce the maps of
 * {@code a}, {@code b}. After C1 every replica stride is positive, so every replica set {@code Rset}
 * is a product over axes of sets of non-negative integers containing 0, and {@code 0} is the unique
 * minimum of {@code Rset} under any functional {@code w} with positive weights (Lemma A.13).
 * <ol>
 *   <li><b>Sizes.</b> Different sizes: not equivalent.</li>
 *   <li><b>Equal canonical forms</b>: equivalent (every rewrite keeps the map).</li>
 *   <li><b>Offsets and shards.</b> {@code min_w L(x) = D(x) + O}, so equal maps force {@code O_A = D_A(0) + O_A
 *       = D_B(0) + O_B = O_B} and then {@code D_A = D_B} as functions. (In general terms: the replica sets
 *       differ by a single translation {@code t} with {@code R_A + t = R_B}; after C1 both have minimum 0,
 *       so {@code t = 0}.) A normalized shard (no extent 1, no mergeable neighbours, stride-0 iters on
 *       {@code m}) is determined by its function: the first differences {@code D(x+1) - D(x)} take the
 *       value {@code c_k = s_k - sum_{j>k} (e_j-1) s_j} exactly when the carry stops at digit {@code k};
 *       consecutive levels have {@code c_k != c_{k+1}} (equality means {@code s_k = e_{k+1} s_{k+1}} on one axis,
 *       a D1 merge, or two stride-0 iters, which DZ puts on one axis and D1 merges), so the digit
 *       boundaries {@code B_k}, the extents and then the strides are read back in order (Theorem A.8).
 *       Hence: canonical shards or offsets differ, not equivalent.</li>
 *   <li><b>Replica sets, per axis.</b> With equal shards and offsets the maps agree iff the replica sets
 *       agree, and a product of non-empty sets is equal iff every factor is. On one axis the set is
 *       {@code S = t_1*[0,f_1) + ... + t_n*[0,f_n)} with {@code 0 < t_1 < ... < t_n} (C2 merged equal strides).
 *       Two lists {@code P}, {@code Q} of that axis are compared by {@link #sameReplicaSet}:
 *       <ol type="a">
 *         <li>equal lists: equal sets;</li>
 *         <li>invariants of the set that the lists give directly: {@code max S = sum (f_j-1) t_j},
 *             the smallest positive element {@code t_1}, and {@code gcd(S) = gcd(t_j)} (every {@code t_j} is in
 *             {@code S} and {@code S} lies in {@code gcd*Z}); any difference: different sets;</li>
 *         <li>both lists satisfy the gap condition: the set alone determines the saturated list
 *             (Theorem A.12, where saturation is C2 with {@code c = f_1}; under GC a merge with {@code c < f_1}
 *             cannot arise since {@code (f_1-1) t_1 < t_2}), so different lists: different sets;</li>
 *         <li>a top iter {@code (f, t)} common to both lists with {@code t > max} of the rest in both:
 *             then {@code S = S' + t*[0,f)} with disjoint blocks, {@code S' = S ∩ [0, t)}, and {@code S_P = S_Q}
 *             iff {@code S'_P = S'_Q}; peel it and start again;</li>
 *         <li>otherwise compute both sets exactly as sorted lists of maximal runs of consecutive
 *             multiples of the gcd, adding one progression at a time by halving
 *             ({@code [0,f) = [0,h) ∪ ((f-h) + [0,h))} with {@code h = ceil(f/2)}), and compare. Overlapping
 *             (non-GC) progressions fill runs, so dense sets stay short. If a set needs more than
 *             {@link #RUN_LIMIT} runs, both sets are compared on the largest window {@code [0, W]} (halving
 *             from the maximum) where they fit, using {@code (S + P) ∩ [0,W] = ((S ∩ [0,W]) + P) ∩ [0,W]}
 *             for non-negative sets: a difference there proves the sets differ; agreement proves nothing,
 *             and the procedure refuses with an {@link AxeException} rather than guess.</li>
 *       </ol></li>
 * </ol>
 * Cost: canonicalization is polynomial in the number of iters; steps 1 to 4d are linear in the
 * number of iters; step 4e is {@code O(runs * log f)} per progression and is reached only for lists
 * outside the gap condition. Limit: refusal needs an axis whose replica set, outside GC and past any
 * common separated top, has more than {@link #RUN_LIMIT} runs and agrees with the other on every
 * window that fits, for example {@code R[(3,2,2^20+1,2):(2,3,100,2^21*100-50)]} against
 * {@code R[(3,2,2^20,2):(2,3,100,2^21*100+50)]}.
 */
public final class Equivalence {
    private Equivalence() {}

    /** Most runs of consecutive values the exact replica-set comparison will build for one axis. */
    public static final int RUN_LIMIT = 1 << 20;

    /** True iff {@code a} and {@code b} induce the same set-valued map (same size, same set at every index). */
    public static boolean equivalent(Layout a, Layout b) {
        if (a.size() != b.size()) {
            return false;
        }
        Layout ca = Canonicalize.canonicalize(a);
        Layout cb = Canonicalize.canonicalize(b);
        if (ca.equals(cb)) {
            return true;
        }
        if (!ca.shard().equals(cb.shard()) || !ca.offset().equals(cb.offset())) {
            return false;
        }
        Map<Axis, List<Iter>> ra = replicasByAxis(ca.replica());
        Map<Axis, List<Iter>> rb = replicasByAxis(cb.replica());
        TreeSet<Axis> axes = new TreeSet<>(ra.keySet());
        axes.addAll(rb.keySet());
        for (Axis axis : axes) {
            if (!sameReplicaSet(axis, ra.getOrDefault(axis, List.of()), rb.getOrDefault(axis, List.of()))) {
                return false;
            }
        }
        return true;
    }

    /**
     * The gap condition on the canonical form of {@code l}: on every axis, with replica strides sorted
     * increasing, {@code sum_{j<=i} (f_j-1) t_j < t_{i+1}}. Equivalently, reading the replica digits with the
     * largest stride most significant, the digit sum is strictly increasing.
     */
    public static boolean satisfiesGapCondition(Layout l) {
        for (List<Iter> axisList : replicasByAxis(Canonicalize.canonicalize(l).replica()).values()) {
            if (!gapCondition(axisList)) {
                return false;
            }
        }
        return true;
    }

    /** GC for one axis's canonical replicas, sorted by increasing stride. */
    static boolean gapCondition(List<Iter> sortedAxisList) {
        long reach = 0;
        for (Iter it : sortedAxisList) {
            if (it.stride() <= reach) {
                return false;
            }
            reach += it.reach(); // bounded by the layout's reach on the axis
        }
        return true;
    }

    /** Canonical replicas grouped by axis; each group keeps the canonical order (increasing stride). */
    private static Map<Axis, List<Iter>> replicasByAxis(List<Iter> replica) {
        Map<Axis, List<Iter>> out = new TreeMap<>();
        for (Iter it : replica) {
            out.computeIfAbsent(it.axis(), x -> new ArrayList<>()).add(it);
        }
        return out;
    }

    /**
     * Step 4 of the class comment: whether two canonical replica lists of one axis (positive distinct
     * strides, increasing; extents &gt;= 2; no C2 merge left) have the same set of sums.
     */
    static boolean sameReplicaSet(Axis axis, List<Iter> p, List<Iter> q) {
        List<Iter> a = new ArrayList<>(p);
        List<Iter> b = new ArrayList<>(q);
        while (true) {
            if (a.equals(b)) {
                return true;
            }
            if (a.isEmpty() || b.isEmpty()) {
                return false; // a non-empty list reaches its positive smallest stride, the empty one only 0
            }
            if (maxOf(a) != maxOf(b) || a.get(0).stride() != b.get(0).stride() || gcdOf(a) != gcdOf(b)) {
                return false;
            }
            if (gapCondition(a) && gapCondition(b)) {
                return false;
            }
            Iter topA = a.get(a.size() - 1);
            Iter topB = b.get(b.size() - 1);
            if (topA.equals(topB) && topA.stride() > maxOf(a.subList(0, a.size() - 1))
                    && topB.stride() > maxOf(b.subList(0, b.size() - 1))) {
                a.remove(a.size() - 1);
                b.remove(b.size() - 1);
                continue;
            }
            return sameRuns(axis, a, b);
        }
    }

    /**
     * Step 4e: both sets as runs. If a set has too many runs, the sets are compared on the largest window
     * {@code [0, W]} (W halving from the maximum) where both fit: a difference there is a proof of
     * inequality; agreement there proves nothing, and the procedure refuses.
     */
    private static boolean sameRuns(Axis axis, List<Iter> a, List<Iter> b) {
        long g = gcdOf(a);
        for (long window = maxOf(a) / g; window > 0; window /= 2) {
            Runs ra = Runs.of(a, g, window, RUN_LIMIT);
            Runs rb = ra == null ? null : Runs.of(b, g, window, RUN_LIMIT);
            if (ra != null && rb != null) {
                if (!ra.sameSet(rb)) {
                    return false;
                }
                if (window == maxOf(a) / g) {
                    return true;
                }
                break;
            }
        }
        throw AxeException.invalid("equivalence cannot be decided within limits: replica sets %s and %s on axis %s "
                + "fail the gap condition and one has more than %d runs of consecutive values (they agree on "
                + "every window [0, W] that fits)", a, b, axis, RUN_LIMIT);
    }

    /** {@code max S = sum (f_j-1) t_j}. */
    private static long maxOf(List<Iter> list) {
        long max = 0;
        for (Iter it : list) {
            max += it.reach(); // fits: bounded by the layout's reach on the axis
        }
        return max;
    }

    private static long gcdOf(List<Iter> list) {
        long g = 0;
        for (Iter it : list) {
            g = Checks.gcd(g, it.stride());
        }
        return g;
    }
}
