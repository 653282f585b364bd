package org.axe4j.passes.transform;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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
            Layout canon = b.constantShape() ? canonicalFor(tl.layout(), b.shape()) : Canonicalize.canonicalize(tl.layout());
            if (!canon.equals(tl.layout())) {
                changed.put(b, TirxLayouts.write(tl.withLayout(canon)));
            }
        }
        return LayoutRewrite.apply(func, changed);
    }

    /**
     * The canonical layout grouped by the buffer's shape, so each dimension keeps its own iters (dispatch rules and
     * messages read layouts per dimension); a function of the canonical form alone, hence unique and idempotent.
     * Where the layout does not group by the shape (VerifyLayouts reports it), the plain canonical form.
     */
    public static Layout canonicalFor(Layout layout, Long[] shape) {
        Layout canon = Canonicalize.canonicalize(layout);
        Shape s = new Shape(List.of(shape));
        if (canon.size() != s.size()) {
            return canon;
        }
        return Group.tryGroup(canon, s).map(g -> dropUnitIters(g.layout(), s)).orElse(canon);
    }

    /** Grouping may leave extent-1 iters beside a dimension's real ones; a dimension of extent 1 keeps one. */
    private static Layout dropUnitIters(Layout grouped, Shape shape) {
        Grouped g = Group.group(grouped, shape);
        List<Iter> kept = new ArrayList<>();
        for (int d = 0; d < shape.rank(); d++) {
            List<Iter> dim = new ArrayList<>(g.layout().shard().subList(g.seps().get(d), g.seps().get(d + 1)));
            List<Iter> real = dim.stream().filter(it -> it.extent() > 1).toList();
            kept.addAll(real.isEmpty() ? List.of(Iter.of(1, 1)) : real);
        }
        return g.layout().withShard(kept);
    }
}
