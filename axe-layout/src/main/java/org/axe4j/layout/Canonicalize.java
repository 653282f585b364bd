package org.axe4j.layout;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The canonical form of a layout (paper Appendix A): rewrite {@code L = (D, R, O)} until no rule applies.
 *
 * <pre>
 *   D0  (1, s@a)                       -&gt;  (deleted)
 *   DZ  (e, 0@a)                       -&gt;  (e, 0@m)
 *   D1  (e1, s1@a), (e2, s2@a)          -&gt;  (e1*e2, s2@a)           if s1 = e2*s2   (adjacent in D)
 *   C0  (1, t@b)                       -&gt;  (deleted)
 *   CZ  (f, 0@b)                       -&gt;  (deleted)               {0, 0, ..., 0} = {0}
 *   C1  (f, t@b), t &lt; 0               -&gt;  (f, -t@b),  O_b += (f-1)*t
 *   C2  (f1, t1@b), (f2, c*t1@b)       -&gt;  (f1 + c*(f2-1), t1@b)   if t1 &gt; 0 and 1 &lt;= c &lt;= f1
 *   O   zero offsets are dropped; replicas are sorted by axis name, then stride, then extent
 * </pre>
 *
 * Every rule keeps the set-valued map {@code L(x) = D(x) + O + Rset} unchanged:
 * <ul>
 *   <li>D0, C0: an extent-1 iter contributes only its digit 0.</li>
 *   <li>DZ: a stride-0 iter contributes the zero vector whatever its axis, so its axis is fixed to
 *       {@code m}. Without this rule {@code S[(2,2):(0@a,0@b)]} and {@code S[4:0@a]} (the same map)
 *       would stay different; with it, a normalized {@code D} is determined by its function
 *       (Theorem A.8, whose reconstruction reads an iter's axis off its non-zero stride).</li>
 *   <li>D1: digits {@code (d1, d2)} of extents {@code (e1, e2)} contribute
 *       {@code d1*e2*s2 + d2*s2 = (d1*e2 + d2)*s2}, and {@code d1*e2 + d2} is the digit of extent {@code e1*e2}.</li>
 *   <li>C1: {@code {0, t, ..., (f-1)t} = (f-1)t + {0, -t, ..., -(f-1)t}}.</li>
 *   <li>C2: {@code t1*[0,f1) + c*t1*[0,f2) = t1*[0, f1 + c*(f2-1))} exactly when {@code c <= f1} (each
 *       shifted block {@code [k*c, k*c + f1)} starts no later than the previous one ends). This is the
 *       exact condition for the sum of two progressions (smaller stride {@code t1}) to be a progression
 *       again; the paper's rule is the case {@code c = f1}, and {@code c = 1} merges equal strides.</li>
 * </ul>
 * Termination: D0, D1, C0, CZ and C2 shrink the iter count; DZ and C1 apply at most once per iter.
 * The chain is applied in a fixed order and C2 always merges the first mergeable pair in replica
 * order, so the result is a function of the input and {@link #canonicalize} is idempotent.
 *
 * <p>Example: {@code S[(2,4):(4,1)] + R[2:-3@warpid]} becomes {@code S[8:1] + R[2:3@warpid] - 3@warpid};
 * {@code S[1:1] + R[(2,2,3):(1,2,2)]} becomes {@code S[1:1] + R[8:1]}.
 */
public final class Canonicalize {
    private Canonicalize() {}

    /** The explicit replica order of canonical forms: axis name, then stride, then extent. */
    public static final Comparator<Iter> REPLICA_ORDER = Comparator.comparing(Iter::axis)
            .thenComparingLong(Iter::stride)
            .thenComparingLong(Iter::extent);

    /** The canonical form of {@code l}; induces the same map as {@code l}. */
    public static Layout canonicalize(Layout l) {
        try {
            return rewrite(l);
        } catch (AxeException e) {
            throw new AxeException(e.kind(), "canonicalize of " + l + ": " + e.getMessage(), e);
        }
    }

    private static Layout rewrite(Layout l) {
        List<Iter> shard = canonicalShard(l.shard());
        if (l.replica().isEmpty()) {
            return new Layout(shard, List.of(), l.offset());
        }
        TreeMap<Axis, Long> offset = new TreeMap<>(l.offset());
        List<Iter> replica = dropZeroStrideReplicas(dropUnitReplicas(l.replica()));
        replica = normalizeReplicaSigns(replica, offset);
        replica = mergeReplicaProgressions(replica);
        return new Layout(shard, replica, offset);
    }

    /** D0, DZ, D1: the canonical form of a shard alone (two shards are the same function iff these are equal). */
    public static List<Iter> canonicalShard(List<Iter> shard) {
        // D0, DZ and D1 in one pass (the composition of the three passes below, without the intermediate lists).
        Iter[] out = new Iter[shard.size()];
        int n = 0;
        for (Iter it : shard) {
            if (it.extent() == 1) {
                continue;
            }
            Iter next = it.stride() == 0 && !it.axis().isMemory() ? new Iter(it.extent(), 0, Axis.M) : it;
            Iter merged = n > 0 ? mergedOrNull(out[n - 1], next) : null;
            if (merged != null) {
                out[n - 1] = merged;
                continue;
            }
            out[n++] = next;
        }
        return n == out.length ? List.of(out) : List.of(java.util.Arrays.copyOf(out, n));
    }

    /** D0: delete shard iters of extent 1. */
    static List<Iter> dropUnitShardIters(List<Iter> shard) {
        return shard.stream().filter(it -> it.extent() != 1).toList();
    }

    /** DZ: a stride-0 shard iter maps every digit to the zero vector; give it the memory axis. */
    static List<Iter> zeroStrideOnMemoryAxis(List<Iter> shard) {
        return shard.stream().map(it -> it.stride() == 0 ? new Iter(it.extent(), 0, Axis.M) : it).toList();
    }

    /**
     * D1: merge adjacent same-axis iters {@code (e1,s1),(e2,s2)} with {@code s1 = e2*s2} into
     * {@code (e1*e2, s2)}, left to right. A merged iter {@code (e1*e2, s2)} can merge with its left
     * neighbour {@code (e0, s0)} iff {@code s0 = e1*e2*s2 = e1*s1}, i.e. iff {@code (e0,s0),(e1,s1)}
     * could, so one stack pass reaches the fixpoint.
     */
    static List<Iter> mergeShardNeighbours(List<Iter> shard) {
        List<Iter> out = new ArrayList<>();
        for (Iter next : shard) {
            if (!out.isEmpty()) {
                Optional<Iter> merged = mergeShardPair(out.get(out.size() - 1), next);
                if (merged.isPresent()) {
                    out.set(out.size() - 1, merged.get());
                    continue;
                }
            }
            out.add(next);
        }
        return List.copyOf(out);
    }

    /** {@code (e1*e2, s2@a)} if {@code outer = (e1,s1@a)} and {@code inner = (e2,s2@a)} satisfy {@code s1 = e2*s2}. */
    static Optional<Iter> mergeShardPair(Iter outer, Iter inner) {
        return Optional.ofNullable(mergedOrNull(outer, inner));
    }

    /** {@link #mergeShardPair} without the Optional: the merged iter, or null. */
    static Iter mergedOrNull(Iter outer, Iter inner) {
        if (!outer.axis().equals(inner.axis())) {
            return null;
        }
        // s1 = e2*s2 without overflow: |e2*s2| <= reach of inner + |s2|, which fits since strides fit.
        long innerSpan;
        try {
            innerSpan = Math.multiplyExact(inner.extent(), inner.stride());
        } catch (ArithmeticException e) {
            return null;
        }
        if (outer.stride() != innerSpan) {
            return null;
        }
        long extent = Checks.mul(() -> "merged extent of " + outer + " and " + inner, outer.extent(), inner.extent());
        return new Iter(extent, inner.stride(), inner.axis());
    }

    /** C0: delete replica iters of extent 1. */
    static List<Iter> dropUnitReplicas(List<Iter> replica) {
        return replica.stream().filter(it -> it.extent() != 1).toList();
    }

    /** CZ: delete stride-0 replica iters; their set is {0}. */
    static List<Iter> dropZeroStrideReplicas(List<Iter> replica) {
        return replica.stream().filter(it -> it.stride() != 0).toList();
    }

    /**
     * C1: {@code (f, t@b)} with {@code t < 0} becomes {@code (f, -t@b)}, and {@code (f-1)*t} is added to
     * {@code offset[b]} (which this pass updates in place; zero entries are dropped by {@link Layout}).
     */
    static List<Iter> normalizeReplicaSigns(List<Iter> replica, Map<Axis, Long> offset) {
        List<Iter> out = new ArrayList<>();
        for (Iter it : replica) {
            if (it.stride() < 0) {
                long shift = (it.extent() - 1) * it.stride(); // fits: it is minus the iter's reach
                offset.merge(it.axis(), shift, (o, s) -> Checks.add(() -> "offset on axis " + it.axis() + " after C1", o, s));
                out.add(new Iter(it.extent(), -it.stride(), it.axis()));
            } else {
                out.add(it);
            }
        }
        return List.copyOf(out);
    }

    /**
     * C2 to a fixpoint, then sort by {@link #REPLICA_ORDER}: repeatedly merge the first pair (in replica
     * order) that {@link #mergeProgressions} accepts. Expects positive strides and extents &gt;= 2.
     */
    static List<Iter> mergeReplicaProgressions(List<Iter> replica) {
        List<Iter> cur = new ArrayList<>(replica);
        cur.sort(REPLICA_ORDER);
        boolean merged = true;
        while (merged) {
            merged = false;
            search:
            for (int i = 0; i < cur.size(); i++) {
                for (int j = i + 1; j < cur.size(); j++) {
                    Optional<Iter> m = mergeProgressions(cur.get(i), cur.get(j));
                    if (m.isPresent()) {
                        cur.remove(j);
                        cur.set(i, m.get());
                        cur.sort(REPLICA_ORDER);
                        merged = true;
                        break search;
                    }
                }
            }
        }
        return List.copyOf(cur);
    }

    /**
     * The single progression equal to {@code t1*[0,f1) + t2*[0,f2)} for same-axis replicas with
     * {@code 0 < t1 <= t2}, if there is one: {@code (f1 + c*(f2-1), t1)} when {@code t2 = c*t1}, {@code c <= f1}.
     * Otherwise empty: an arithmetic progression from 0 steps by its smallest positive element {@code t1},
     * so {@code t2} must be a multiple {@code c*t1}; and for {@code c > f1} the value {@code f1*t1} is missing
     * although {@code c*t1 > f1*t1} is present.
     */
    static Optional<Iter> mergeProgressions(Iter p, Iter q) {
        if (!p.axis().equals(q.axis()) || p.stride() <= 0 || q.stride() < p.stride() || q.stride() % p.stride() != 0) {
            return Optional.empty();
        }
        long c = q.stride() / p.stride();
        if (c > p.extent()) {
            return Optional.empty();
        }
        // c*(f2-1) <= f1*(f2-1) < f1*f2, which fits because the replica count of the layout does.
        long extent = Checks.add(() -> "merged replica extent of " + p + " and " + q, p.extent(),
                Checks.mul(() -> "merged replica extent of " + p + " and " + q, c, q.extent() - 1));
        return Optional.of(new Iter(extent, p.stride(), p.axis()));
    }
}
