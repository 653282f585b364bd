package org.axe4j.passes;

import org.axe4j.layout.AxeException;
import org.axe4j.mesh.MeshRequest;
import org.axe4j.mesh.Plan;
import org.axe4j.mesh.PlanJson;
import org.axe4j.tvm.GlobalsProvider;
import org.axe4j.tvm.PackedFunction;
import org.axe4j.tvm.Tvm;

/**
 * Distributed tensors and redistribution plans ({@code org.axe4j.mesh}) as TVM globals. Every argument is a
 * JSON request (format in {@link MeshRequest}, docs/mesh.md):
 * <ul>
 *   <li>{@code plan(request)}: the JSON plan ({@code src} to {@code dst}) that every rank executes</li>
 *   <li>{@code explain(request)}: the plan as text, with bytes per rank and the minimum</li>
 *   <li>{@code local_shards(request)}: JSON list, per rank, of the local shape, local layout, region of
 *       {@code tensor}</li>
 *   <li>{@code layout(request)}: the Axe layout text of {@code tensor}</li>
 * </ul>
 * A call that runs the JVM out of memory is refused with a ValueError saying {@code too large} (out of stack:
 * {@code internal error}).
 * Errors are TVM {@code ValueError}s whose message starts with the global's name.
 */
public final class MeshGlobals implements GlobalsProvider {
    public static final String PREFIX = "axe4j.mesh.";

    @Override
    public String name() {
        return "axe4j.mesh";
    }

    @Override
    public void register() {
        def("plan", a -> PlanJson.write(MeshRequest.plan(text(a))));
        def("explain", a -> {
            Plan p = MeshRequest.plan(text(a));
            return p.explain();
        });
        def("local_shards", a -> MeshRequest.localShards(text(a)));
        def("layout", a -> MeshRequest.layoutText(text(a)));
    }

    private static String text(Object[] a) {
        if (a.length != 1 || !(a[0] instanceof String s)) {
            throw new IllegalArgumentException("takes one JSON request string, got " + a.length + " arguments");
        }
        return s;
    }

    /**
     * Registers {@code axe4j.mesh.<name>}. Plans work cell by cell (the element-wise fallback enumerates up to
     * {@link org.axe4j.mesh.Holdings#ELEMENT_LIMIT} elements), so the layout globals' point cap does not apply;
     * running out of memory or stack is still the call's ValueError.
     */
    private static void def(String name, PackedFunction body) {
        String full = PREFIX + name;
        Tvm.register(full, args -> {
            try {
                return body.apply(args);
            } catch (AxeException | IllegalArgumentException | IllegalStateException | ClassCastException e) {
                throw new IllegalArgumentException(full + ": " + e.getMessage(), e);
            } catch (OutOfMemoryError e) {
                throw new IllegalArgumentException(full + ": too large: the call ran out of memory (the JVM's heap "
                        + "holds " + Runtime.getRuntime().maxMemory() / (1 << 20) + " MiB)");
            } catch (StackOverflowError e) {
                throw new IllegalArgumentException(full + ": internal error: the call ran out of stack");
            }
        }, true);
    }
}
