package org.axe4j.layout;

import java.util.Arrays;
import java.util.List;

/**
 * Group (paper Appendix B): refine the shard of {@code L} so that consecutive blocks have extent
 * products {@code S_0, S_1, ...}, without reordering and without changing the map.
 *
 * <pre>
 *   split (Lemma B.1):  (e, s@a)  ==  (e/c, s*c@a), (c, s@a)      for c | e
 *   fuse  (rule D1):    (e1, s1@a), (e2, s2@a)  ==  (e1*e2, s2@a)  when s1 = e2*s2
 *   zero strides:       (e, 0@a)                ==  (e, 0@m)       (the axis of a zero stride is irrelevant)
 * </pre>
 *
 * Algorithm: fuse the whole shard and drop extent-1 iters (fusing never removes a split point, since
 * a fused iter splits anywhere its factors did); then fill dimension 0, 1, ... from the front: an iter
 * whose extent divides what the dimension still needs is taken whole, an iter whose extent is a multiple
 * of it is split and its outer part taken; otherwise no refinement exists, because the dimension would
 * have to end strictly inside a digit. Finally fuse within each block. The result has the fewest iters:
 * every block is fully fused and no iter of extent 1 remains.
 *
 * Example: {@code S[(2,4):(4,1)]} grouped by (4,2) is {@code S[(4,2):(2,1)]} with seps [0,1,2].
 */
public final class Group {
    private Group() {}

    /** Groups {@code l} by {@code shape}; NOT_REPRESENTABLE with the reason if no refinement exists. */
    public static Grouped group(Layout l, Shape shape) {
        return tryGroup(l, shape).orElseThrow();
    }

    /** {@link #group}, or the reason no refinement exists (the shape must still be admitted). */
    public static Result<Grouped> tryGroup(Layout l, Shape shape) {
        l.requireAdmits(shape);
        long[] dims = new long[shape.rank()];
        for (int k = 0; k < dims.length; k++) {
            dims[k] = shape.dim(k);
        }
        Refinement r = refine(l.shard(), dims);
        if (r.failedIter() != null) {
            return Result.absent(
                    "layout %s cannot be grouped by shape %s: dimension %d (extent %d) would end inside iter %s,"
                            + " whose extent %d is neither a divisor nor a multiple of the %d still needed",
                    l, shape, r.failedDim(), shape.dim(r.failedDim()), r.failedIter(), r.failedIter().extent(),
                    r.need());
        }
        Integer[] seps = new Integer[r.seps().length];
        for (int k = 0; k < seps.length; k++) {
            seps[k] = r.seps()[k];
        }
        return Result.of(new Grouped(new Layout(r.iters(), l.replica(), l.offset()), shape, Arrays.asList(seps)));
    }

    /**
     * The refined shard and its block boundaries ({@code iters[seps[k] .. seps[k+1])} is dimension {@code k}), or,
     * when no refinement exists, the dimension, the iter it would end inside and what it still needed.
     */
    record Refinement(List<Iter> iters, int[] seps, int failedDim, Iter failedIter, long need) {
        /** Block {@code k} of a successful refinement. */
        List<Iter> block(int k) {
            return iters.subList(seps[k], seps[k + 1]);
        }
    }

    /**
     * The algorithm of the class comment on a shard whose extents multiply to the product of {@code dims}, without
     * building a layout: {@link #tryGroup} and tile-of share it.
     */
    static Refinement refine(List<Iter> shard, long[] dims) {
        List<Iter> fused = fuse(shard);
        int next = 0; // the next iter of fused to take
        Iter split = null; // the inner part of an iter split at the previous dimension's end, taken first
        Iter[] out = new Iter[fused.size() + dims.length];
        int n = 0;
        int[] seps = new int[dims.length + 1];
        for (int k = 0; k < dims.length; k++) {
            long need = dims[k];
            int blockStart = n;
            while (need > 1) {
                // sizes agree, so iters remain while a dimension needs more
                Iter it = split != null ? split : fused.get(next++);
                split = null;
                long e = it.extent();
                if (need % e == 0) {
                    out[n++] = it;
                    need /= e;
                } else if (e % need == 0) {
                    out[n++] = new Iter(need, it.stride() * (e / need), it.axis());
                    split = new Iter(e / need, it.stride(), it.axis());
                    need = 1;
                } else {
                    return new Refinement(List.of(), seps, k, it, need);
                }
            }
            // Fuse within the block: D1 by one stack pass, as in Canonicalize.canonicalShard (the iters have
            // extent >= 2 and stride-0 ones are already on m).
            int top = blockStart;
            for (int i = blockStart + 1; i < n; i++) {
                Iter merged = Canonicalize.mergedOrNull(out[top], out[i]);
                if (merged != null) {
                    out[top] = merged;
                } else {
                    out[++top] = out[i];
                }
            }
            n = Math.min(n, top + 1);
            seps[k + 1] = n;
        }
        return new Refinement(List.of(Arrays.copyOf(out, n)), seps, -1, null, 0);
    }

    /** Drops extent-1 iters, puts zero strides on m and fuses neighbours by D1 (the canonical shard). */
    static List<Iter> fuse(List<Iter> iters) {
        return Canonicalize.canonicalShard(iters);
    }
}
