package org.axe4j.mesh;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Iter;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Shape;

/**
 * What one rank holds. {@code localLayout} is the layout's memory iters (the shard iters on m, in order, plus the
 * m offset): the same local layout on every rank, the device iters having chosen the rank. {@code localShape} is
 * their extents. {@code lo}/{@code hi} bound the global coordinates held ({@code [lo_d, hi_d)} per dimension);
 * {@code box} says the held set is exactly that box.
 */
public record LocalShard(int rank, int[] meshCoord, Shape localShape, Layout localLayout, long bufferSize, long elements,
        long[] lo, long[] hi, boolean box) {

    /**
     * The local shard of every rank from the cells of a plan (layout {@code l}: 0 = source, 1 = destination):
     * elements and per-dimension bounds summed over the pieces the rank holds.
     */
    static List<LocalShard> of(DistTensor t, Cells cells, int l, MeshRanks ranks) {
        Shape g = t.globalShape();
        boolean perDimension = cells.ref.logicalDims.length == g.rank();
        if (!perDimension && !t.isPadded() && t.layout().size() <= Holdings.ELEMENT_LIMIT) {
            return of(t.holdings());
        }
        int n = ranks.size;
        long[][] lo = new long[n][g.rank()];
        long[][] hi = new long[n][g.rank()];
        long[] count = new long[n];
        long[] size = new long[n];
        for (long[] row : lo) {
            Arrays.fill(row, Long.MAX_VALUE);
        }
        for (Cells.Piece p : cells.pieces) {
            long[][] range = perDimension ? cells.coordinateRange(p) : new long[][] {new long[g.rank()], g.toArray()};
            for (Cells.Placement pl : p.cell().at[l]) {
                size[pl.rank()] = Math.max(size[pl.rank()], cells.box(p, l, pl.base()).max() + 1);
            }
            for (int r : p.cell().ranks(l)) {
                count[r] += p.size();
                for (int d = 0; d < g.rank(); d++) {
                    lo[r][d] = Math.min(lo[r][d], range[0][d]);
                    hi[r][d] = Math.max(hi[r][d], range[1][d]);
                }
            }
        }
        List<LocalShard> out = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            long volume = count[r] == 0 ? 0 : 1;
            for (int d = 0; d < g.rank() && count[r] > 0; d++) {
                volume *= hi[r][d] - lo[r][d];
            }
            if (count[r] == 0) {
                Arrays.fill(lo[r], 0);
            }
            out.add(new LocalShard(r, ranks.coord(r), localShape(t.layout()), localLayout(t.layout()), size[r],
                    count[r], lo[r], hi[r], volume == count[r]));
        }
        return out;
    }

    private static Shape localShape(Layout l) {
        List<Long> ext = l.shard().stream().filter(it -> it.axis().isMemory()).map(Iter::extent).toList();
        return ext.isEmpty() ? Shape.of(1) : new Shape(ext);
    }

    private static Layout localLayout(Layout l) {
        List<Iter> mem = l.shard().stream().filter(it -> it.axis().isMemory()).toList();
        Map<Axis, Long> off = new TreeMap<>();
        if (l.offsetOn(Axis.M) != 0) {
            off.put(Axis.M, l.offsetOn(Axis.M));
        }
        List<Iter> memReplica = l.replica().stream().filter(it -> it.axis().isMemory()).toList();
        return Layout.of(mem, memReplica, off);
    }

    /** The local shard of every rank, by enumeration. */
    public static List<LocalShard> of(Holdings h) {
        Layout l = h.tensor.layout();
        List<Iter> mem = new ArrayList<>();
        List<Long> ext = new ArrayList<>();
        for (Iter it : l.shard()) {
            if (it.axis().isMemory()) {
                mem.add(it);
                ext.add(it.extent());
            }
        }
        Map<Axis, Long> off = new TreeMap<>();
        if (l.offsetOn(Axis.M) != 0) {
            off.put(Axis.M, l.offsetOn(Axis.M));
        }
        List<Iter> memReplica = l.replica().stream().filter(it -> it.axis().isMemory()).toList();
        Layout localLayout = Layout.of(mem, memReplica, off);
        Shape localShape = ext.isEmpty() ? Shape.of(1) : new Shape(ext);
        Shape g = h.tensor.globalShape();
        List<LocalShard> out = new ArrayList<>();
        for (int r = 0; r < h.rankCount(); r++) {
            long[] lo = new long[g.rank()];
            long[] hi = new long[g.rank()];
            Arrays.fill(lo, Long.MAX_VALUE);
            long count = 0;
            for (int x = 0; x < h.where[r].length; x++) {
                if (h.where[r][x] < 0) {
                    continue;
                }
                count++;
                long[] c = g.unflatten(x);
                for (int d = 0; d < c.length; d++) {
                    lo[d] = Math.min(lo[d], c[d]);
                    hi[d] = Math.max(hi[d], c[d] + 1);
                }
            }
            long volume = count == 0 ? 0 : 1;
            for (int d = 0; d < g.rank() && count > 0; d++) {
                volume *= hi[d] - lo[d];
            }
            if (count == 0) {
                Arrays.fill(lo, 0);
            }
            out.add(new LocalShard(r, h.ranks.coord(r), localShape, localLayout, h.localSize(r), count, lo, hi,
                    volume == count));
        }
        return out;
    }

    /** {@code [0:32, 64:128]}, {@code strided within [0:32, 0:128], 1024 elements}, or {@code nothing}. */
    public String regionText() {
        if (elements == 0) {
            return "nothing";
        }
        StringBuilder b = new StringBuilder("[");
        for (int d = 0; d < lo.length; d++) {
            b.append(d > 0 ? ", " : "").append(lo[d]).append(':').append(hi[d]);
        }
        b.append(']');
        return box ? b.toString() : "strided within " + b + ", " + elements + " elements";
    }
}
