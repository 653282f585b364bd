package org.axe4j.passes;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.TreeMap;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Canonicalize;
import org.axe4j.layout.Iter;
import org.axe4j.layout.Layout;

/**
 * Names why two answers that induce the same map (checked by enumeration before this is asked) are written
 * differently, and why TIRx refuses a question axe4j answers. Each reason is tested in order on the pair,
 * after undoing the differences named before it:
 * <ol>
 *   <li>extent-1 iters (they add nothing to the map): TIRx keeps them, axe4j drops them;</li>
 *   <li>zero-stride iters: the axis of one in the shard is irrelevant (axe4j writes it on {@code m}), one in
 *       the replicas adds nothing (axe4j drops it);</li>
 *   <li>the order of the replica iters (the replica set is a Minkowski sum, so order is free);</li>
 *   <li>a replica of negative stride {@code (e, -t)} written as {@code (e, t)} with {@code -(e-1)t} moved into
 *       the offset (the same set), as axe4j's canonical form does;</li>
 *   <li>iters fused differently: one of the answers has iters the other fuses
 *       ({@code (e1, e2*s), (e2, s) = (e1*e2, s)}): both have the same canonical form.</li>
 * </ol>
 */
final class FormDifferences {
    private FormDifferences() {}

    static String[] reason(Layout ours, Layout theirs) {
        Layout a = withoutUnitIters(ours);
        Layout b = withoutUnitIters(theirs);
        if (a.equals(b)) {
            return new String[] {"TIRx keeps extent-1 iters", "Both answers induce the required map and are equal "
                    + "once iters of extent 1, which contribute nothing, are dropped: TIRx keeps them (in the shard and "
                    + "the replicas), axe4j drops them. An empty axe4j shard prints as S[1:1]."};
        }
        a = zeroStridesOnM(a);
        b = zeroStridesOnM(b);
        if (a.equals(b)) {
            return new String[] {"zero-stride iters", "Both answers induce the required map; an iter of stride 0 "
                    + "moves along no axis: in the shard its axis is irrelevant, and axe4j writes it on m (0) where "
                    + "TIRx keeps the axis it came with (0@axis); in the replicas it adds nothing, and axe4j drops it "
                    + "where TIRx keeps it. Extent-1 iters may differ too."};
        }
        a = replicasSorted(a);
        b = replicasSorted(b);
        if (a.equals(b)) {
            return new String[] {"replica iters in another order", "Both answers induce the required map; the "
                    + "replica set is a sum of progressions, so the order of the replica iters is free: TIRx and "
                    + "axe4j list them in different orders (and may differ as above)."};
        }
        if (replicasSorted(positiveReplicas(a)).equals(replicasSorted(positiveReplicas(b)))) {
            return new String[] {"canonical form of replicas: negative stride",
                "Both answers induce the required map; a replica iter (e, -t) spans the same set as (e, t) moved "
                        + "by -(e-1)t: axe4j's canonical form writes replicas with non-negative strides and moves the "
                        + "difference into the offset, TIRx keeps the negative stride."};
        }
        if (Canonicalize.canonicalize(ours).equals(Canonicalize.canonicalize(theirs))) {
            int ourIters = ours.shard().size() + ours.replica().size();
            int theirIters = theirs.shard().size() + theirs.replica().size();
            if (ourIters == theirIters) {
                return new String[] {"same canonical form, iters split differently", "Both answers induce the "
                        + "required map, have the same canonical form and as many iters, split at other places."};
            }
            return ourIters < theirIters
                    ? new String[] {"axe4j fuses iters TIRx keeps apart", "Both answers induce the required map and "
                    + "have the same canonical form; axe4j's has fewer iters: it fuses what TIRx leaves apart (in "
                    + "the shard, chained iters (e1, e2*s), (e2, s) = (e1*e2, s); in the replicas, progressions "
                    + "whose sum is one progression, e.g. R[(3,2):(1,-2)] = R[5:1] - 2)."}
                    : new String[] {"TIRx fuses iters axe4j keeps apart", "Both answers induce the required map and "
                    + "have the same canonical form; TIRx's has fewer iters: it fuses chained iters of the two "
                    + "operands, while axe4j keeps the blocks of its grouping apart (the result stays grouped by "
                    + "the interleaved shape, which tile-of reads back)."};
        }
        return new String[] {"other form of the same map", "Both answers induce the required map (checked by "
                + "enumeration) but are written with different iters that none of the rules above relates."};
    }

    /** Why TIRx does not answer, from the stable key of its refusal. */
    static String refusal(String key) {
        if (key.contains("shape_idx == shape.size()")) {
            return "TIRx cannot group a layout by a shape with a dimension of extent 1 when no iter is left to "
                    + "stand for it (its grouping consumes iters; an empty shard has none); axe4j gives such a "
                    + "dimension an empty block. Slice and tile-of group first, so they refuse too.";
        }
        if (key.contains("floormod(extent_i, c)")) {
            return "TIRx's grouping splits the iters as they are given and refuses when a dimension would end inside "
                    + "an iter; axe4j fuses chained iters first ((2,5):(5,1) is 10:1, which splits as (5,2)), so "
                    + "the grouping exists. Slice groups first, so it refuses too.";
        }
        if (key.contains("Divide by zero")) {
            return "TIRx divides by its span of the inner layout, 1 + sum (e-1)*s + O_a, which is 0 when signed "
                    + "strides and the offset cancel (e.g. S[2:5] - 6: 1 + 5 - 6); the extent of the inner image is "
                    + "never 0, and axe4j finds the factor.";
        }
        if (key.equals("returns None")) {
            return "TIRx returns None where an answer exists: axe4j's answer is checked by enumeration to induce "
                    + "the required map.";
        }
        return "TIRx raises where an answer exists: axe4j's answer is checked by enumeration to induce the "
                + "required map.";
    }

    static Layout withoutUnitIters(Layout l) {
        return new Layout(l.shard().stream().filter(it -> it.extent() != 1).toList(),
                l.replica().stream().filter(it -> it.extent() != 1).toList(), l.offset());
    }

    private static Layout zeroStridesOnM(Layout l) {
        return new Layout(zeroOnM(l.shard()), l.replica().stream().filter(it -> it.stride() != 0).toList(),
                l.offset());
    }

    private static List<Iter> zeroOnM(List<Iter> iters) {
        return iters.stream().map(it -> it.stride() == 0 ? new Iter(it.extent(), 0, Axis.M) : it).toList();
    }

    private static Layout replicasSorted(Layout l) {
        List<Iter> replica = new ArrayList<>(l.replica());
        replica.sort(Comparator.comparing(Iter::axis).thenComparingLong(Iter::stride).thenComparingLong(Iter::extent));
        return new Layout(l.shard(), replica, l.offset());
    }

    private static Layout positiveReplicas(Layout l) {
        TreeMap<Axis, Long> offset = new TreeMap<>(l.offset());
        List<Iter> replica = new ArrayList<>();
        for (Iter it : l.replica()) {
            if (it.stride() < 0) {
                offset.merge(it.axis(), (it.extent() - 1) * it.stride(), Long::sum);
                replica.add(new Iter(it.extent(), -it.stride(), it.axis()));
            } else {
                replica.add(it);
            }
        }
        offset.values().removeIf(v -> v == 0);
        return new Layout(l.shard(), replica, offset);
    }
}
