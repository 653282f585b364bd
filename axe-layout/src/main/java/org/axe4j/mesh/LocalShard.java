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
public record LocalShard(int rank, int[] meshCoord, Shape localShape, Layout localLayout, int bufferSize, long elements,
        long[] lo, long[] hi, boolean box) {

    /** The local shard of every rank. */
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
