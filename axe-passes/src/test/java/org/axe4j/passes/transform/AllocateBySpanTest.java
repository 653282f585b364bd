package org.axe4j.passes.transform;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.axe4j.passes.transform.TirFunction.Buffer;
import org.axe4j.passes.transform.TirFunction.Origin;
import org.axe4j.tvm.Axe4jGlobals;
import org.axe4j.tvm.Tvm;
import org.axe4j.tvm.TvmObject;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** On-chip allocations sized by their layout's span, and VerifyLayouts' memory-span rule around them. */
class AllocateBySpanTest {
    private static final long[] TILE = {16, 48};
    private static final String PADDED = "S[(16,48):(56,1)]";

    @BeforeAll
    static void install() {
        Axe4jGlobals.install();
    }

    private static TvmObject func(TirBuilder b) {
        return (TvmObject) Tvm.call("ir.Module_Lookup_str", b.module("k"), "k");
    }

    /** A copy through an allocation {@code X} of {@code shape} with {@code layout} in {@code scope}. */
    private static TvmObject through(long[] shape, String layout, String scope) {
        TirBuilder b = new TirBuilder();
        TvmObject a = b.param("A", shape);
        TvmObject out = b.param("B", shape);
        TvmObject x = b.alloc("X", shape, layout, scope);
        b.call("copy", "thread", region(x, shape), region(a, shape));
        b.call("copy", "thread", region(out, shape), region(x, shape));
        return func(b);
    }

    private static Object region(TvmObject buffer, long[] shape) {
        long[] bounds = new long[2 * shape.length];
        for (int k = 0; k < shape.length; k++) {
            bounds[2 * k + 1] = shape[k];
        }
        return TirBuilder.region(buffer, bounds);
    }

    private static List<String> verify(TvmObject f) {
        return VerifyLayouts.check(TirFunction.read("k", f), TargetLimits.NONE).stream().map(Object::toString).toList();
    }

    private static Buffer named(TirFunction f, String name, Origin origin) {
        return f.buffers().stream().filter(b -> b.name().equals(name) && b.origin() == origin).findFirst().orElseThrow();
    }

    @Test
    void paddedSharedTileIsAllocatedByItsSpan() {
        TvmObject before = through(TILE, PADDED, "shared");
        assertEquals(List.of(), verify(before));
        TvmObject after = AllocateBySpan.run(before);
        TirFunction f = TirFunction.read("k", after);
        Buffer storage = named(f, "X", Origin.ALLOC);
        Buffer view = named(f, "X", Origin.DECL);
        assertEquals("(888,)", storage.shapeText());   // 15 * 56 + 47 + 1
        assertEquals("shared", storage.scope());
        assertEquals("float32", storage.dtype());
        assertSame(storage, view.aliasOf());
        assertEquals("(16, 48)", view.shapeText());
        assertEquals(PADDED, String.valueOf(Tvm.call("axe4j.layout.to_text", view.layout())));
        // the buffer the tile calls use is the very variable that was allocated: only its definition changed
        TvmObject x = named(TirFunction.read("k", before), "X", Origin.ALLOC).var();
        assertTrue(view.var().sameObject(x));
        assertTrue(f.calls().get(0).regions().get(0).buffer().var().sameObject(x));
        assertEquals(List.of(), verify(after));
        assertSame(after, AllocateBySpan.run(after), "a second run finds nothing to resize");
    }

    @Test
    void everyOnChipScopeIsResizedAndOthersAreNot() {
        for (String scope : List.of("shared", "shared.dyn", "local")) {
            Buffer storage = named(TirFunction.read("k", AllocateBySpan.run(through(TILE, PADDED, scope))), "X",
                    Origin.ALLOC);
            assertEquals("(888,)", storage.shapeText(), scope);
        }
        TvmObject compact = through(TILE, "S[(16,48):(48,1)]", "shared");
        assertSame(compact, AllocateBySpan.run(compact), "a compact tile keeps its allocation");
        TvmObject lanes = through(new long[] {32, 8}, "S[(32,2,4):(1@laneid,5,1)]", "local");
        assertSame(lanes, AllocateBySpan.run(lanes), "9 registers per lane fit the 256 elements of the shape");
        TvmObject global = through(TILE, PADDED, "global");
        assertSame(global, AllocateBySpan.run(global), "global memory is not on-chip memory");
    }

    @Test
    void aPaddedGlobalAllocationIsRefusedWithTheShapeToDeclare() {
        List<String> found = verify(through(TILE, PADDED, "global"));
        assertEquals(1, found.size(), String.join("\n", found));
        assertTrue(found.get(0).startsWith("[memory-span] k: buffer X (16, 48) float32 global: the layout reaches "
                + "element 887 (shard 887 + replicas 0 + offset 0), past the 768 elements TVM allocates of shape "
                + "(16, 48); it needs 888 elements: declare the buffer with shape (16, 56) and use its region "
                + "[0:16, 0:48]"), found.get(0));
    }

    @Test
    void aPaddedArgumentIsRefusedWithTheShapeToPass() {
        TirBuilder b = new TirBuilder();
        long[] shape = {16, 30};
        TvmObject a = b.param("A", shape, "S[(16,30):(32,1)]");
        TvmObject out = b.param("B", shape);
        b.call("copy", "thread", region(out, shape), region(a, shape));
        b.call("exp", "thread", region(out, shape), region(out, shape));
        TvmObject f = func(b);
        List<String> found = verify(f);
        assertEquals(1, found.size(), String.join("\n", found));
        assertTrue(found.get(0).contains("buffer A (16, 30) float32 global: the layout reaches element 509 (shard 509"
                + " + replicas 0 + offset 0), past the 480 elements of the argument of shape (16, 30); the caller's "
                + "memory must hold 510 elements: declare the parameter with shape (16, 32) and use its region "
                + "[0:16, 0:30]"), found.get(0));
        assertSame(f, AllocateBySpan.run(f), "a parameter is the caller's memory");
    }

    @Test
    void aShapeIsSuggestedOnlyWhereRowsOfTheLayoutFitIt() {
        // rows 40 apart but columns 2 apart: no pitched shape holds it, the flat one does
        List<String> found = verify(through(new long[] {8, 16}, "S[(8,16):(40,2)]", "global"));
        assertEquals(1, found.size(), String.join("\n", found));
        assertTrue(found.get(0).contains("it needs 311 elements: declare the buffer with shape (311,)"), found.get(0));
        assertNull(AllocateBySpan.storageElements(named(TirFunction.read("k", through(TILE, PADDED, "global")), "X",
                Origin.ALLOC)));
    }
}
