package org.axe4j.passes.transform;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Canonicalize;
import org.axe4j.layout.Group;
import org.axe4j.layout.Grouped;
import org.axe4j.layout.Iter;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Shape;
import org.axe4j.passes.TirxLayout;
import org.axe4j.passes.TirxLayouts;
import org.axe4j.passes.transform.TirFunction.Buffer;
import org.axe4j.tvm.TvmObject;

/**
 * Rewrites every buffer layout of a function to axe4j's canonical form ({@link Canonicalize}: unit iters
 * dropped, mergeable neighbours fused, replicas sorted), grouped by the buffer's shape ({@link #canonicalFor});
 * symbolic offsets and swizzles are kept. The result induces the same map, and canonicalizing twice changes nothing,
 * so the pass is idempotent.
 * Buffers already canonical keep their very layout objects.
 *
 * <p>The canonical form never names an axis the original layout did not use: a unit iter kept for a dimension of
 * extent 1, or a stride-0 iter, does not change the map whatever its axis, so it takes one the layout already uses
 * ({@link #axisFreeIters}). A target whose lowering wants every iter on its own axes (Trainium: P, F, Bank) then
 * still gets such a layout.
 */
public final class CanonicalizeLayouts {
    private CanonicalizeLayouts() {}

    public static TvmObject run(TvmObject func) {
        TirFunction f = TirFunction.read("func", func);
        Map<Buffer, TvmObject> changed = new LinkedHashMap<>();
        for (Buffer b : f.buffers()) {
            TirxLayout tl = VerifyLayouts.layoutOf(b);
            if (tl == null) {
                continue;
            }
            Layout canon = b.constantShape() ? canonicalFor(tl.layout(), b.shape())
                    : axisFreeIters(tl.layout(), Canonicalize.canonicalize(tl.layout()), null);
            if (!canon.equals(tl.layout())) {
                changed.put(b, TirxLayouts.write(tl.withLayout(canon)));
            }
        }
        return LayoutRewrite.apply(func, changed);
    }

    /**
     * The canonical layout grouped by the buffer's shape, so each dimension keeps its own iters (dispatch rules and
     * messages read layouts per dimension); unique per (map, shape) up to the axes of iters that do not move the
     * map (unit dims, stride 0), which keep the original's, hence also idempotent.
     * Where the layout does not group by the shape (VerifyLayouts reports it), the plain canonical form.
     */
    public static Layout canonicalFor(Layout layout, Long[] shape) {
        Layout canon = Canonicalize.canonicalize(layout);
        Shape s = new Shape(List.of(shape));
        if (canon.size() != s.size()) {
            return axisFreeIters(layout, canon, null);
        }
        return Group.tryGroup(canon, s).map(g -> axisFreeIters(layout, oneIterPerUnitDim(g.layout(), s), shape))
                .orElse(axisFreeIters(layout, canon, null));
    }

    /** Grouping may leave extent-1 iters beside a dimension's real ones; a dimension of extent 1 keeps one. */
    private static Layout oneIterPerUnitDim(Layout grouped, Shape shape) {
        Grouped g = Group.group(grouped, shape);
        List<Iter> kept = new ArrayList<>();
        for (int d = 0; d < shape.rank(); d++) {
            List<Iter> dim = new ArrayList<>(g.layout().shard().subList(g.seps().get(d), g.seps().get(d + 1)));
            List<Iter> real = dim.stream().filter(it -> it.extent() > 1).toList();
            kept.addAll(real.isEmpty() ? List.of(Iter.of(1, 1)) : real);
        }
        return g.layout().withShard(kept);
    }

    /**
     * Gives the iters of {@code canon} whose axis does not move the map an axis {@code original} uses:
     * <ul>
     *   <li>the unit iter of dimension d (extent 1): the axis of the original's unit iter at that dimension
     *       ({@link #unitAxes}); else {@code m} if the original uses it; else the axis of the nearest real iter of
     *       the result (next dims first); else the original's first axis;</li>
     *   <li>a stride-0 iter (put on {@code m} by the canonical form): the axis of the original's first stride-0 iter
     *       when {@code m} is not among the original's axes.</li>
     * </ul>
     * {@code shape} is null when the result is not grouped by the buffer's shape (no unit dims to place).
     */
    static Layout axisFreeIters(Layout original, Layout canon, Long[] shape) {
        java.util.Set<Axis> used = original.axes();
        Axis zeroAxis = original.shard().stream().filter(it -> it.stride() == 0 && it.extent() > 1)
                .map(Iter::axis).findFirst().orElse(Axis.M);
        Axis[] units = shape == null ? new Axis[0] : unitAxes(original.shard(), shape);
        List<Iter> out = new ArrayList<>();
        List<Iter> shard = canon.shard();
        int unitIndex = 0;
        for (int k = 0; k < shard.size(); k++) {
            Iter it = shard.get(k);
            if (shape != null && it.extent() == 1) {
                // the canonical grouped form has exactly one iter per unit dim: the k-th unit iter is dim d's
                int d = unitDim(shape, unitIndex++);
                Axis a = units[d] != null ? units[d] : used.contains(Axis.M) || used.isEmpty() ? Axis.M
                        : nearestRealAxis(shard, k).orElse(used.iterator().next());
                out.add(new Iter(1, it.stride(), a));
            } else if (it.stride() == 0 && !used.contains(it.axis())) {
                out.add(new Iter(it.extent(), 0, zeroAxis));
            } else {
                out.add(it);
            }
        }
        return canon.withShard(out);
    }

    private static int unitDim(Long[] shape, int n) {
        for (int d = 0, seen = 0; d < shape.length; d++) {
            if (shape[d] == 1 && seen++ == n) {
                return d;
            }
        }
        throw new IllegalStateException("no unit dim #" + n + " in " + java.util.Arrays.toString(shape));
    }

    private static java.util.Optional<Axis> nearestRealAxis(List<Iter> shard, int k) {
        for (int j = k + 1; j < shard.size(); j++) {
            if (shard.get(j).extent() > 1 && shard.get(j).stride() != 0) {
                return java.util.Optional.of(shard.get(j).axis());
            }
        }
        for (int j = k - 1; j >= 0; j--) {
            if (shard.get(j).extent() > 1 && shard.get(j).stride() != 0) {
                return java.util.Optional.of(shard.get(j).axis());
            }
        }
        return java.util.Optional.empty();
    }

    /**
     * For each dim of extent 1, the axis of the original's extent-1 iter standing at that dim's place in the shard
     * (after the iters of the dims before it are complete), or null. Walks the shard consuming extents dim by dim.
     */
    static Axis[] unitAxes(List<Iter> shard, Long[] shape) {
        int rank = shape.length;
        Axis[] out = new Axis[rank];
        int k = 0;
        long rem = rank > 0 ? shape[0] : 1;
        for (Iter it : shard) {
            long e = it.extent();
            if (e == 1) {
                for (int j = k; j < rank && (j == k ? rem : shape[j]) == 1; j++) {
                    if (shape[j] == 1 && out[j] == null) {
                        out[j] = it.axis();
                        break;
                    }
                }
                continue;
            }
            while (e > 1 && k < rank) {
                if (rem == 1) {
                    k++;
                    rem = k < rank ? shape[k] : 1;
                    continue;
                }
                long g = gcd(e, rem);
                if (g == 1) {
                    return new Axis[rank]; // the shard does not split along the shape: no positions to read
                }
                e /= g;
                rem /= g;
            }
        }
        return out;
    }

    private static long gcd(long a, long b) {
        return b == 0 ? a : gcd(b, a % b);
    }
}
