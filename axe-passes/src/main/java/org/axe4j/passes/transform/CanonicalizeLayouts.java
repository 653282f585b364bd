package org.axe4j.passes.transform;

import java.util.LinkedHashMap;
import java.util.Map;
import org.axe4j.layout.Canonicalize;
import org.axe4j.layout.Layout;
import org.axe4j.passes.TirxLayout;
import org.axe4j.passes.TirxLayouts;
import org.axe4j.passes.transform.TirFunction.Buffer;
import org.axe4j.tvm.TvmObject;

/**
 * Rewrites every buffer layout of a function to axe4j's canonical form ({@link Canonicalize}: unit iters
 * dropped, mergeable neighbours fused, replicas sorted); symbolic offsets and swizzles are kept. The canonical
 * form induces the same map, and canonicalizing twice changes nothing, so the pass is idempotent.
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
            Layout canon = Canonicalize.canonicalize(tl.layout());
            if (!canon.equals(tl.layout())) {
                changed.put(b, TirxLayouts.write(tl.withLayout(canon)));
            }
        }
        return LayoutRewrite.apply(func, changed);
    }
}
