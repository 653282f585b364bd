package org.axe4j.mesh;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.axe4j.layout.AxeException;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Iter;
import org.axe4j.layout.Layout;
import org.axe4j.layout.interop.Placement;
import org.axe4j.layout.interop.ShardingSpec;

/** Layouts beyond DTensor placements, built from a placement layout by editing its Axe iters. */
public final class Variants {
    private Variants() {}

    /**
     * The same sharding with the local buffer stored in another dimension order: the m iters (one per tensor
     * dimension, in dimension order) get compact strides {@code w_d = product of extents after d in order}.
     */
    public static Layout localOrder(Layout l, List<Integer> order) {
        List<Integer> memIndex = new ArrayList<>();
        for (int i = 0; i < l.shard().size(); i++) {
            if (l.shard().get(i).axis().isMemory()) {
                memIndex.add(i);
            }
        }
        if (order.size() != memIndex.size() || !order.stream().sorted().toList().equals(
                java.util.stream.IntStream.range(0, memIndex.size()).boxed().toList())) {
            throw new AxeException(AxeException.Kind.INVALID, "local_order " + order + " is not a permutation of the "
                    + memIndex.size() + " memory iters of " + l);
        }
        List<Iter> shard = new ArrayList<>(l.shard());
        long w = 1;
        for (int k = order.size() - 1; k >= 0; k--) {
            Iter it = shard.get(memIndex.get(order.get(k)));
            shard.set(memIndex.get(order.get(k)), it.withStride(w));
            w *= it.extent();
        }
        return l.withShard(shard);
    }

    /**
     * Mesh dimension j, placed {@code Replicate()}, holds its copy only at coordinate c: its replica iter
     * {@code (n_j, meshStride_j @ axis_j)} becomes the offset {@code c * meshStride_j @ axis_j}.
     */
    public static Layout heldAt(Layout l, ShardingSpec spec, int j, long c) {
        if (j < 0 || j >= spec.mesh().rank() || !(spec.placements().get(j) instanceof Placement.Replicate)) {
            throw new AxeException(AxeException.Kind.INVALID, "held_at: mesh dimension " + j + " of " + spec
                    + " is not placed Replicate()");
        }
        if (c < 0 || c >= spec.mesh().dim(j)) {
            throw new AxeException(AxeException.Kind.INVALID, "held_at: coordinate " + c + " outside mesh dimension " + j
                    + " of size " + spec.mesh().dim(j));
        }
        Iter target = new Iter(spec.mesh().dim(j), spec.mesh().stride(j), spec.mesh().axis(j));
        List<Iter> replica = new ArrayList<>(l.replica());
        if (!replica.remove(target)) {
            throw new AxeException(AxeException.Kind.INVALID, "held_at: layout " + l + " has no replica iter " + target);
        }
        Map<Axis, Long> off = new TreeMap<>(l.offset());
        off.merge(spec.mesh().axis(j), c * spec.mesh().stride(j), Long::sum);
        return Layout.of(l.shard(), replica, off);
    }
}
