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
 * {@code s * (w / W) @ a}.
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
    /** {@code axis[l][k]}, {@code stride[l][k]}: where digit k goes in layout l (0 = source, 1 = destination). */
    final int[][] axis;
    final long[][] stride;
    /** The logical extent of each refinement dimension. */
    final long[] logicalDims;

    private Refinement(int axisCount, long[] extent, int[] dim, long[] dimWeight, long[] globalStride, int[][] axis,
            long[][] stride, long[] logicalDims) {
        this.axisCount = axisCount;
        this.extent = extent;
        this.dim = dim;
        this.dimWeight = dimWeight;
        this.globalStride = globalStride;
        this.axis = axis;
        this.stride = stride;
        this.logicalDims = logicalDims;
    }

    int digits() {
        return extent.length;
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
        for (int d = 0; d < rank; d++) {
            long innerA = inner(perDim.get(0).get(d));
            long innerB = inner(perDim.get(1).get(d));
            long big = Math.max(innerA, innerB);
            if (big % Math.min(innerA, innerB) != 0) {
                return null;
            }
            long most = Math.max(padded.get(0)[d], padded.get(1)[d]);
            common[d] = Math.multiplyExact((most + big - 1) / big, big);
            for (List<List<long[]>> dims : perDim) {
                long[] top = dims.get(d).get(0);
                top[0] = common[d] / inner(dims.get(d));
            }
        }
        List<List<long[]>> flat = new ArrayList<>();
        TreeSet<Long> bounds = new TreeSet<>();
        for (List<List<long[]>> dims : perDim) {
            List<long[]> f = new ArrayList<>();
            dims.forEach(f::addAll);
            flat.add(f);
            bounds.addAll(boundaries(f));
        }
        long prev = 1;
        for (long b : bounds) {
            if (b % prev != 0) {
                return null;
            }
            prev = b;
        }
        List<List<long[]>> split = new ArrayList<>();
        for (List<long[]> f : flat) {
            List<long[]> s = splitAt(f, bounds);
            if (s == null) {
                return null;
            }
            split.add(s);
        }
        int n = split.get(0).size();
        if (split.get(1).size() != n) {
            return null;
        }
        long[] dimLow = new long[rank];
        long[] globalLow = new long[rank];
        long w = 1;
        long g = 1;
        for (int d = rank - 1; d >= 0; d--) {
            dimLow[d] = w;
            globalLow[d] = g;
            w = Math.multiplyExact(w, common[d]);
            g *= logical[d];
        }
        List<long[]> digits = new ArrayList<>(); // {extent, dim, dimWeight, globalStride, axis0, stride0, axis1, stride1}
        long weight = 1;
        long[][] rows = new long[n][];
        for (int k = n - 1; k >= 0; k--) {
            long[] a = split.get(0).get(k);
            long[] b = split.get(1).get(k);
            int d = rank - 1;
            while (d > 0 && weight >= dimLow[d] * common[d]) {
                d--;
            }
            long dw = weight / dimLow[d];
            rows[k] = new long[] {a[0], d, dw, dw * globalLow[d], a[2], a[1], b[2], b[1]};
            weight *= a[0];
        }
        for (long[] row : rows) {
            long[] last = digits.isEmpty() ? null : digits.get(digits.size() - 1);
            digits.add(row);
            if (last != null && last[1] == row[1] && last[4] == row[4] && last[6] == row[6]
                    && last[5] == row[5] * row[0] && last[7] == row[7] * row[0]) {
                digits.remove(digits.size() - 1);
                digits.set(digits.size() - 1, new long[] {last[0] * row[0], row[1], row[2], row[3], row[4], row[5],
                        row[6], row[7]});
            }
        }
        int m = digits.size();
        long[] extent = new long[m];
        int[] dim = new int[m];
        long[] dimWeight = new long[m];
        long[] globalStride = new long[m];
        int[][] axis = new int[2][m];
        long[][] stride = new long[2][m];
        for (int k = 0; k < m; k++) {
            long[] r = digits.get(k);
            extent[k] = r[0];
            dim[k] = (int) r[1];
            dimWeight[k] = r[2];
            globalStride[k] = r[3];
            axis[0][k] = (int) r[4];
            stride[0][k] = r[5];
            axis[1][k] = (int) r[6];
            stride[1][k] = r[7];
        }
        return new Refinement(ranks.axes.size() + 1, extent, dim, dimWeight, globalStride, axis, stride, logical.clone());
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
