package org.axe4j.mesh;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.axe4j.layout.AxeException;
import org.axe4j.layout.Iter;
import org.axe4j.layout.Layout;

/**
 * Which rank holds which global element, at which local offset, by enumeration: the element-wise planner's
 * tables (the tests' oracle and the fallback), and the overlap check when it cannot be proven from strides. Built
 * by enumerating the layout once (an odometer over the shard digits, times the replica points; padding skipped):
 * for each x and each point p of L(x), {@code rank = ranks(p's device part)}, {@code offset = p.m}.
 *
 * <p>Rejected, with the offending element and rank named: an axis that is neither m nor a mesh axis; a device
 * coordinate outside the mesh (the element would be missing); a negative local offset; two different elements at
 * one rank's offset (overlapping data); a partial group whose ranks hold different elements.
 */
public final class Holdings {
    /** Above this many elements holdings are not enumerated (int tables per rank): the element-wise limit. */
    public static final long ELEMENT_LIMIT = 1L << 26;

    final DistTensor tensor;
    final MeshRanks ranks;
    /** {@code local[r][o]}: the global element at offset o of rank r, or -1 (a hole in the buffer). */
    final int[][] local;
    /** {@code where[r][x]}: one local offset of element x on rank r, or -1. */
    final int[][] where;

    private Holdings(DistTensor tensor, MeshRanks ranks, int[][] local, int[][] where) {
        this.tensor = tensor;
        this.ranks = ranks;
        this.local = local;
        this.where = where;
    }

    public int rankCount() {
        return ranks.size;
    }

    /** The local buffer size of rank r (the span of its offsets; holes included). */
    public int localSize(int rank) {
        return local[rank].length;
    }

    /** The global element at offset o of rank r, or -1. */
    public int globalAt(int rank, int offset) {
        return local[rank][offset];
    }

    /** One local offset of global element x on rank r, or -1 when r does not hold x. */
    public int offsetOf(int rank, int x) {
        return where[rank][x];
    }

    static Holdings of(DistTensor t) {
        MeshRanks ranks = new MeshRanks(t.mesh());
        Layout l = t.layout();
        long total = l.size();
        if (total > ELEMENT_LIMIT) {
            throw new AxeException(AxeException.Kind.INVALID, "distributed tensor " + t + " has " + total
                    + " elements; element-wise holdings are enumerated for at most " + ELEMENT_LIMIT);
        }
        int axisCount = ranks.axes.size() + 1; // index 0 is m
        List<Iter> shard = l.shard();
        int n = shard.size();
        long[] ext = new long[n];
        long[][] step = new long[n][];
        for (int k = 0; k < n; k++) {
            ext[k] = shard.get(k).extent();
            step[k] = unit(shard.get(k), ranks, axisCount, t);
        }
        List<long[]> reps = Cells.replicaPoints(t, ranks, axisCount);
        // Pass 1: (rank, offset, x) triples, buffered per rank.
        List<List<long[]>> perRank = new ArrayList<>();
        for (int r = 0; r < ranks.size; r++) {
            perRank.add(new ArrayList<>());
        }
        long[] coord = new long[axisCount];
        long[] digit = new long[n];
        long logicalTotal = t.globalShape().size();
        for (long xp = 0; xp < total; xp++) {
            long x = logicalIndex(t, xp);
            for (int q = 0; q < reps.size() && x >= 0; q++) {
                long[] rp = reps.get(q);
                int rank = 0;
                for (int a = 1; a < axisCount; a++) {
                    long v = coord[a] + rp[a];
                    int[] table = ranks.rankPart[a - 1];
                    if (v < 0 || v >= table.length) {
                        throw new AxeException(AxeException.Kind.INVALID, "distributed tensor " + t + ": element "
                                + coordText(t, x) + " is placed at " + ranks.axes.get(a - 1) + "=" + v
                                + ", outside the mesh (0.." + (table.length - 1) + "): no rank would hold it");
                    }
                    rank += table[(int) v];
                }
                long off = coord[0] + rp[0];
                if (off < 0 || off >= Integer.MAX_VALUE) {
                    throw new AxeException(AxeException.Kind.INVALID, "distributed tensor " + t + ": element "
                            + coordText(t, x) + " gets local offset m=" + off + " on rank " + rank
                            + " (offsets must lie in [0, 2^31))");
                }
                perRank.get(rank).add(new long[] {off, x});
            }
            // odometer: last digit fastest
            for (int k = n - 1; k >= 0; k--) {
                digit[k]++;
                for (int a = 0; a < axisCount; a++) {
                    coord[a] += step[k][a];
                }
                if (digit[k] < ext[k]) {
                    break;
                }
                for (int a = 0; a < axisCount; a++) {
                    coord[a] -= step[k][a] * ext[k];
                }
                digit[k] = 0;
            }
        }
        int[][] local = new int[ranks.size][];
        int[][] where = new int[ranks.size][];
        for (int r = 0; r < ranks.size; r++) {
            long span = 0;
            for (long[] e : perRank.get(r)) {
                span = Math.max(span, e[0] + 1);
            }
            int[] loc = new int[(int) span];
            Arrays.fill(loc, -1);
            int[] wh = new int[(int) logicalTotal];
            Arrays.fill(wh, -1);
            for (long[] e : perRank.get(r)) {
                int o = (int) e[0];
                int x = (int) e[1];
                if (loc[o] != -1 && loc[o] != x) {
                    throw new AxeException(AxeException.Kind.INVALID, "distributed tensor " + t + ": rank " + r
                            + " (mesh " + Arrays.toString(ranks.coord(r)) + ") local offset " + o + " holds both element "
                            + coordText(t, loc[o]) + " and element " + coordText(t, x) + " (overlapping data)");
                }
                loc[o] = x;
                if (wh[x] == -1 || o < wh[x]) {
                    wh[x] = o;
                }
            }
            local[r] = loc;
            where[r] = wh;
        }
        Holdings h = new Holdings(t, ranks, local, where);
        h.checkPartialGroups();
        return h;
    }

    /** The logical flat index of padded index xp, or -1 for padding. */
    private static long logicalIndex(DistTensor t, long xp) {
        if (!t.isPadded()) {
            return xp;
        }
        long[] c = t.paddedShape().unflatten(xp);
        for (int d = 0; d < c.length; d++) {
            if (c[d] >= t.globalShape().dim(d)) {
                return -1;
            }
        }
        return t.globalShape().flatten(c);
    }

    /** Every rank of a partial group must hold the same elements (each holds one summand of each). */
    private void checkPartialGroups() {
        if (!tensor.isPartial()) {
            return;
        }
        for (int r = 0; r < ranks.size; r++) {
            for (int other : ranks.group(r, tensor.partialDims())) {
                for (int x = 0; x < where[r].length; x++) {
                    if ((where[r][x] < 0) != (where[other][x] < 0)) {
                        throw new AxeException(AxeException.Kind.INVALID, "distributed tensor " + tensor + ": ranks "
                                + r + " and " + other + " are one partial group (mesh dims " + tensor.partialDims()
                                + ") but only one of them holds element " + coordText(tensor, x)
                                + "; a partial layout must replicate over its partial dimensions");
                    }
                }
            }
        }
    }

    /** The per-axis step of one iter: index 0 is m, index 1+a is device axis a. */
    private static long[] unit(Iter it, MeshRanks ranks, int axisCount, DistTensor t) {
        long[] u = new long[axisCount];
        u[Refinement.axisIndex(it.axis(), ranks, t)] = it.stride();
        return u;
    }

    static String coordText(DistTensor t, long x) {
        return Arrays.toString(t.globalShape().unflatten(x));
    }
}
