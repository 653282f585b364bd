package org.axe4j.mesh;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import org.axe4j.layout.AxeException;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Iter;

/**
 * The common refinement of two layouts' shard radices: one mixed radix of the padded row-major index whose digits
 * each map, in both layouts, to a single axis with a single stride.
 *
 * <p>Each layout's shard iters are a mixed radix of its index (last iter fastest); iter {@code (e, s@a)} at weight
 * W covers the index range {@code [W, W*e)}. Merging the suffix-product boundaries of both radices (and of the
 * tensor dimensions) gives the refined digits; a refinement exists when the merged boundaries form a divisibility
 * chain. A digit of extent {@code e'} at weight {@code w} inside iter {@code (e, s@a)} at weight W maps to
 * {@code s * (w / W) @ a}. Where the boundaries do not chain (radices {@code [6, 4]} against {@code [4, 6]}), the
 * boundaries that both layouts can split at are kept and the ranges between the others become composite digits,
 * enumerated value by value (at most {@link #COMPOSITE_LIMIT} values in all).
 *
 * <p>Uneven (padded) layouts: each layout's padded shape is split per tensor dimension, and the outermost iter of
 * every dimension is stretched to a common padded extent (a multiple of both layouts' inner blocks). Indices past
 * a layout's own padded extent, like its own padding, lie outside the logical shape and are clipped away.
 */
final class Refinement {
    /** Axis index: 0 is m, {@code 1 + a} is device axis a of {@link MeshRanks#axes}. */
    final int axisCount;
    final long[] extent;
    /** The refinement dimension of each digit (a tensor dimension, or 0 when the index is taken flat). */
    final int[] dim;
    /** The digit's step within its dimension's coordinate. */
    final long[] dimWeight;
    /** The digit's step of the logical row-major flat index. */
    final long[] globalStride;
    /**
     * {@code axis[l][k]}, {@code stride[l][k]}: where digit k goes in layout l (0 = source, 1 = destination); axis
     * -1 marks a <b>composite</b> digit, whose range the layouts split differently (no common refinement there):
     * {@code composite[l][k]} lists layout l's iters inside it as {extent, stride, axis} triples, outermost first,
     * and each value of the digit is decomposed by them (the outermost unbounded: padding past a layout's own
     * padded extent). Composite digits are enumerated, value by value, as cell digits.
     */
    final int[][] axis;
    final long[][] stride;
    final long[][][] composite;
    /**
     * A segmented composite digit (a whole dimension whose blocks do not nest): its value i stands for the
     * segment {@code [segStart[k][i], segStart[k][i] + segLength[k][i])} of the dimension; the free digit right
     * after it ranges over the segment (its extent: the longest segment, clipped per cell).
     */
    final long[][] segStart;
    final long[][] segLength;
    /** The logical extent of each refinement dimension. */
    final long[] logicalDims;

    /** Above this many values of composite digits (product), no refinement is offered. */
    static final long COMPOSITE_LIMIT = 1L << 16;

    private Refinement(int axisCount, long[] extent, int[] dim, long[] dimWeight, long[] globalStride, int[][] axis,
            long[][] stride, long[][][] composite, long[][] segStart, long[][] segLength, long[] logicalDims) {
        this.segStart = segStart;
        this.segLength = segLength;
        this.axisCount = axisCount;
        this.extent = extent;
        this.dim = dim;
        this.dimWeight = dimWeight;
        this.globalStride = globalStride;
        this.axis = axis;
        this.stride = stride;
        this.composite = composite;
        this.logicalDims = logicalDims;
    }

    int digits() {
        return extent.length;
    }

    boolean isComposite(int k) {
        return axis[0][k] < 0;
    }

    boolean isSegmented(int k) {
        return segStart[k] != null;
    }

    /** The index value digit k's cell value v stands for (a segment's start for a segmented digit). */
    long valueOf(int k, long v) {
        return segStart[k] != null ? segStart[k][(int) v] : v;
    }

    /** Adds layout l's per-axis contribution of (cell) value v of digit k to {@code coord}. */
    void place(int l, int k, long v, long[] coord) {
        v = valueOf(k, v);
        if (axis[l][k] >= 0) {
            coord[axis[l][k]] += v * stride[l][k];
            return;
        }
        long[] sub = composite[l][k];
        for (int j = sub.length / 3 - 1; j >= 0; j--) {
            long d = j == 0 ? v : v % sub[3 * j];
            v = j == 0 ? 0 : v / sub[3 * j];
            coord[(int) sub[3 * j + 2]] += d * sub[3 * j + 1];
        }
    }

    /**
     * The refinement of {@code a} and {@code b}'s radices, or null when none exists. Tried per tensor dimension
     * first (needed for padded shapes); for unpadded tensors then over the flat index.
     */
    static Refinement of(DistTensor a, DistTensor b, MeshRanks ranks) {
        List<List<long[]>> iters = List.of(iters(a, ranks), iters(b, ranks));
        Refinement r = attempt(iters, List.of(a.paddedShape().toArray(), b.paddedShape().toArray()),
                a.globalShape().toArray(), ranks);
        if (r == null && !a.isPadded() && !b.isPadded()) {
            long[] flat = {a.globalShape().size()};
            r = attempt(iters, List.of(flat, flat), flat, ranks);
        }
        return r;
    }

    /** A layout's shard iters as {extent, stride, axis index}, outermost first. */
    private static List<long[]> iters(DistTensor t, MeshRanks ranks) {
        List<long[]> out = new ArrayList<>();
        for (Iter it : t.layout().shard()) {
            out.add(new long[] {it.extent(), it.stride(), axisIndex(it.axis(), ranks, t)});
        }
        return out;
    }

    static int axisIndex(Axis a, MeshRanks ranks, DistTensor t) {
        if (a.isMemory()) {
            return 0;
        }
        int i = ranks.axes.indexOf(a);
        if (i < 0) {
            throw new AxeException(AxeException.Kind.INVALID, "distributed tensor " + t + ": layout uses axis " + a
                    + ", which is neither the memory axis m nor a device axis of mesh " + t.mesh());
        }
        return i + 1;
    }

    private static Refinement attempt(List<List<long[]>> layouts, List<long[]> padded, long[] logical, MeshRanks ranks) {
        int rank = logical.length;
        List<List<List<long[]>>> perDim = new ArrayList<>();
        for (int l = 0; l < 2; l++) {
            List<List<long[]>> d = byDimension(layouts.get(l), padded.get(l));
            if (d == null) {
                return null;
            }
            perDim.add(d);
        }
        long[] common = new long[rank];
        boolean[] nested = new boolean[rank];
        for (int d = 0; d < rank; d++) {
            long pa = padded.get(0)[d];
            long pb = padded.get(1)[d];
            long innerA = inner(perDim.get(0).get(d));
            long innerB = inner(perDim.get(1).get(d));
            long big = Math.max(innerA, innerB);
            nested[d] = pa == pb || big % Math.min(innerA, innerB) == 0;
            if (!nested[d]) {
                // blocks that do not nest (9 rows in blocks of 3 against 5): the dimension is one enumerated digit
                common[d] = Math.max(pa, pb);
                continue;
            }
            common[d] = pa == pb ? pa : Math.multiplyExact((Math.max(pa, pb) + big - 1) / big, big);
            for (List<List<long[]>> dims : perDim) {
                long[] top = dims.get(d).get(0);
                top[0] = common[d] / inner(dims.get(d));
            }
        }
        long[] globalLow = new long[rank];
        long g = 1;
        for (int d = rank - 1; d >= 0; d--) {
            globalLow[d] = g;
            g *= logical[d];
        }
        // rows: {extent, dim, dimWeight, globalStride}; subs: per layout the digit's iters {extent, stride, axis}
        List<long[]> rows = new ArrayList<>();
        List<List<List<long[]>>> subs = new ArrayList<>();
        for (int d = 0; d < rank; d++) {
            List<long[]> a = perDim.get(0).get(d);
            List<long[]> b = perDim.get(1).get(d);
            TreeSet<Long> kept = new TreeSet<>();
            if (nested[d]) {
                TreeSet<Long> union = boundaries(a);
                union.addAll(boundaries(b));
                long last = 1;
                for (long x : union) {
                    if (x % last == 0 && splittable(a, x) && splittable(b, x)) {
                        kept.add(x);
                        last = x;
                    }
                }
            }
            kept.add(common[d]);
            List<List<long[]>> groupsA = nested[d] ? group(splitAt(a, kept), kept) : List.of(a);
            List<List<long[]>> groupsB = nested[d] ? group(splitAt(b, kept), kept) : List.of(b);
            // kept ranges innermost first; groups are outermost first: walk them from the end
            long low = 1;
            int k = groupsA.size() - 1;
            int at = rows.size();
            for (long hi : kept) {
                if (hi == low) {
                    continue;
                }
                List<long[]> sa = groupsA.get(k);
                List<long[]> sb = groupsB.get(k);
                k--;
                rows.add(at, new long[] {hi / low, d, low, low * globalLow[d]});
                subs.add(at, List.of(sa, sb));
                low = hi;
            }
        }
        // merge adjacent simple digits of one dimension that are one iter in both layouts
        for (int k = rows.size() - 1; k > 0; k--) {
            long[] inner = rows.get(k);
            long[] outer = rows.get(k - 1);
            if (outer[1] != inner[1] || !simple(subs.get(k)) || !simple(subs.get(k - 1))) {
                continue;
            }
            boolean joins = true;
            for (int l = 0; l < 2; l++) {
                long[] o = subs.get(k - 1).get(l).get(0);
                long[] i = subs.get(k).get(l).get(0);
                joins &= o[2] == i[2] && o[1] == i[1] * inner[0];
            }
            if (joins) {
                rows.set(k - 1, new long[] {outer[0] * inner[0], inner[1], inner[2], inner[3]});
                List<List<long[]>> merged = new ArrayList<>();
                for (int l = 0; l < 2; l++) {
                    long[] i = subs.get(k).get(l).get(0);
                    merged.add(List.of(new long[] {outer[0] * inner[0], i[1], i[2]}));
                }
                subs.set(k - 1, merged);
                rows.remove(k);
                subs.remove(k);
            }
        }
        // a composite digit alone in its dimension whose layouts each end in an m iter (blocks that do not nest) is
        // cut into segments between the layouts' block boundaries (multiples of the inner extents): within a
        // segment both maps are affine, so a segment is one cell value and its length one free digit (m strides:
        // the layouts' inner iters)
        List<long[][]> segments = new ArrayList<>();
        for (int k = 0; k < rows.size(); k++) {
            segments.add(null);
        }
        for (int k = rows.size() - 1; k >= 0; k--) {
            long[] row = rows.get(k);
            List<List<long[]>> sub = subs.get(k);
            long d = row[1];
            boolean alone = rows.stream().filter(r -> r[1] == d).count() == 1;
            if (simple(sub) || !alone || !segmentable(sub)) {
                continue;
            }
            if (sub.stream().anyMatch(it -> it.size() > 1 && row[0] / it.get(it.size() - 1)[0] > COMPOSITE_LIMIT)) {
                continue;
            }
            TreeSet<Long> cuts = new TreeSet<>(List.of(0L));
            long[] inner = new long[2];
            for (int l = 0; l < 2; l++) {
                List<long[]> it = sub.get(l);
                inner[l] = it.get(it.size() - 1)[1];
                if (it.size() > 1) {
                    long block = it.get(it.size() - 1)[0];
                    for (long c = block; c < row[0]; c += block) {
                        cuts.add(c);
                    }
                }
            }
            long[] start = cuts.stream().mapToLong(Long::longValue).toArray();
            long[] length = new long[start.length];
            long longest = 0;
            for (int i = 0; i < start.length; i++) {
                length[i] = (i + 1 < start.length ? start[i + 1] : row[0]) - start[i];
                longest = Math.max(longest, length[i]);
            }
            rows.set(k, new long[] {start.length, row[1], row[2], row[3]});
            segments.set(k, new long[][] {start, length});
            rows.add(k + 1, new long[] {longest, row[1], row[2], row[3]});
            subs.add(k + 1, List.of(List.of(new long[] {longest, inner[0], 0}), List.of(new long[] {longest, inner[1], 0})));
            segments.add(k + 1, null);
        }
        long enumerated = 1;
        for (int k = 0; k < rows.size(); k++) {
            if (!simple(subs.get(k))) {
                enumerated = Math.multiplyExact(enumerated, rows.get(k)[0]);
                if (enumerated > COMPOSITE_LIMIT) {
                    return null;
                }
            }
        }
        int m = rows.size();
        long[][] segStart = new long[m][];
        long[][] segLength = new long[m][];
        for (int k = 0; k < m; k++) {
            if (segments.get(k) != null) {
                segStart[k] = segments.get(k)[0];
                segLength[k] = segments.get(k)[1];
            }
        }
        long[] extent = new long[m];
        int[] dim = new int[m];
        long[] dimWeight = new long[m];
        long[] globalStride = new long[m];
        int[][] axis = new int[2][m];
        long[][] stride = new long[2][m];
        long[][][] composite = new long[2][m][];
        for (int k = 0; k < m; k++) {
            long[] r = rows.get(k);
            extent[k] = r[0];
            dim[k] = (int) r[1];
            dimWeight[k] = r[2];
            globalStride[k] = r[3];
            boolean isSimple = simple(subs.get(k));
            for (int l = 0; l < 2; l++) {
                List<long[]> sub = subs.get(k).get(l);
                if (isSimple) {
                    axis[l][k] = (int) sub.get(0)[2];
                    stride[l][k] = sub.get(0)[1];
                } else {
                    axis[l][k] = -1;
                    composite[l][k] = new long[3 * sub.size()];
                    for (int j = 0; j < sub.size(); j++) {
                        System.arraycopy(sub.get(j), 0, composite[l][k], 3 * j, 3);
                    }
                }
            }
        }
        return new Refinement(ranks.axes.size() + 1, extent, dim, dimWeight, globalStride, axis, stride, composite,
                segStart, segLength, logical.clone());
    }

    /** Each layout's iters end in an m iter: between multiples of its extent the outer iters are fixed. */
    private static boolean segmentable(List<List<long[]>> sub) {
        for (List<long[]> it : sub) {
            if (it.get(it.size() - 1)[2] != 0) {
                return false;
            }
        }
        return true;
    }

    private static boolean simple(List<List<long[]>> sub) {
        return sub.get(0).size() == 1 && sub.get(1).size() == 1;
    }

    /** True when splitting the iters at index boundary b cuts no iter unevenly. */
    private static boolean splittable(List<long[]> iters, long b) {
        long w = 1;
        for (int k = iters.size() - 1; k >= 0; k--) {
            long hi = w * iters.get(k)[0];
            if (w < b && b < hi) {
                return b % w == 0 && hi % b == 0;
            }
            w = hi;
        }
        return true;
    }

    /** Iters (already split at {@code kept}) grouped by the kept boundary ranges, innermost range last. */
    private static List<List<long[]>> group(List<long[]> iters, TreeSet<Long> kept) {
        List<List<long[]>> out = new ArrayList<>();
        for (int i = 0; i < kept.size(); i++) {
            out.add(new ArrayList<>());
        }
        List<Long> bounds = new ArrayList<>(kept);
        long w = 1;
        for (int k = iters.size() - 1; k >= 0; k--) {
            int range = 0;
            while (w >= bounds.get(range)) {
                range++;
            }
            out.get(range).add(0, iters.get(k));
            w *= iters.get(k)[0];
        }
        // ranges are innermost first here; digits are listed outermost first
        java.util.Collections.reverse(out);
        out.removeIf(List::isEmpty);
        return out;
    }

    /** The iters split at the tensor dimension boundaries of {@code shape}, grouped per dimension (outermost first). */
    private static List<List<long[]>> byDimension(List<long[]> iters, long[] shape) {
        TreeSet<Long> bounds = new TreeSet<>();
        long w = 1;
        for (int d = shape.length - 1; d >= 0; d--) {
            w = Math.multiplyExact(w, shape[d]);
            bounds.add(w);
        }
        List<long[]> split = splitAt(iters, bounds);
        if (split == null) {
            return null;
        }
        List<List<long[]>> out = new ArrayList<>();
        for (int d = 0; d < shape.length; d++) {
            out.add(new ArrayList<>());
        }
        long weight = 1;
        long low = 1;
        int d = shape.length - 1;
        for (int k = split.size() - 1; k >= 0; k--) {
            while (d > 0 && weight >= low * shape[d]) {
                low *= shape[d];
                d--;
            }
            out.get(d).add(0, split.get(k).clone());
            weight *= split.get(k)[0];
        }
        for (List<long[]> dimIters : out) {
            if (dimIters.isEmpty()) {
                dimIters.add(new long[] {1, 0, 0});
            }
        }
        return out;
    }

    /** Product of a dimension's iter extents below its outermost one. */
    private static long inner(List<long[]> dimIters) {
        long p = 1;
        for (int k = 1; k < dimIters.size(); k++) {
            p *= dimIters.get(k)[0];
        }
        return p;
    }

    private static TreeSet<Long> boundaries(List<long[]> iters) {
        TreeSet<Long> out = new TreeSet<>();
        long w = 1;
        for (int k = iters.size() - 1; k >= 0; k--) {
            w = Math.multiplyExact(w, iters.get(k)[0]);
            out.add(w);
        }
        return out;
    }

    /**
     * Splits every iter at the boundaries strictly inside its index range; null when a boundary does not divide
     * the iter evenly. Extent-1 iters are dropped (they move nothing).
     */
    static List<long[]> splitAt(List<long[]> iters, TreeSet<Long> bounds) {
        List<long[]> out = new ArrayList<>();
        long w = 1;
        for (int k = iters.size() - 1; k >= 0; k--) {
            long[] it = iters.get(k);
            if (it[0] == 1) {
                continue;
            }
            long hi = Math.multiplyExact(w, it[0]);
            long prev = w;
            for (long b : bounds.subSet(w, false, hi, false)) {
                if (b % prev != 0) {
                    return null;
                }
                out.add(0, new long[] {b / prev, it[1] * (prev / w), it[2]});
                prev = b;
            }
            if (hi % prev != 0) {
                return null;
            }
            out.add(0, new long[] {hi / prev, it[1] * (prev / w), it[2]});
            w = hi;
        }
        return out;
    }
}
