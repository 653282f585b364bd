package org.axe4j.passes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.axe4j.layout.AxeException;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Point;
import org.axe4j.layout.Property;
import org.axe4j.layout.RandomLayouts;
import org.axe4j.tvm.Tvm;
import org.axe4j.tvm.TvmObject;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Conversion to and from {@code tirx.TileLayout}, and TIRx's apply against {@link Layout#base}. */
class TirxLayoutsTest {
    @BeforeAll
    static void load() {
        Tvm.load();
    }

    @Test
    void knownLayoutReadsFieldByField() {
        Layout l = Layout.parse(TirxLayoutsTest.knownText());
        try (TvmObject t = TirxLayouts.toTvm(l)) {
            assertEquals(TirxLayouts.TILE_LAYOUT, t.typeKey());
            assertEquals(2, ((List<?>) t.get("shard")).size());
            assertEquals(1, ((List<?>) t.get("replica")).size());
            assertEquals(l, TirxLayouts.fromTvm(t));
            // TIRx's size agrees: the product of the shard extents.
            assertEquals(l.size(), TirxLayouts.integer(Tvm.call("tirx.LayoutGetSize", t, null), t, "size"));
        }
    }

    static String knownText() {
        return Layout.of(List.of(org.axe4j.layout.Iter.of(4, 2, "m"), org.axe4j.layout.Iter.of(2, -1, "laneid")),
                List.of(org.axe4j.layout.Iter.of(2, 3, "warpid")), Map.of(org.axe4j.layout.Axis.M, 5L)).toString();
    }

    /** toTvm then fromTvm is the identity, and TIRx's apply(x) is axe4j's base point D(x) + O. */
    @Test
    void roundTripAndApplyAgree() {
        Property.forAll("tirx round trip and apply", r -> {
            Layout l = RandomLayouts.layout(r);
            try (TvmObject t = TirxLayouts.toTvm(l)) {
                assertEquals(l, TirxLayouts.fromTvm(t), () -> "round trip of " + l + " via " + t.repr());
                for (long x = 0; x < l.size(); x++) {
                    Point tirx = TirxLayouts.pointOf((Map<?, ?>) Tvm.call("tirx.LayoutApplyLinear", t, x));
                    assertEquals(l.base(x), tirx, "apply(" + x + ") of " + l);
                }
            }
        });
    }

    @Test
    void symbolicAndComposeLayoutsAreRefused() {
        TvmObject n = (TvmObject) Tvm.call("ir.Var", "n", Tvm.call("ir.PrimType", org.axe4j.tvm.DataType.INT32), null);
        TvmObject m = TirxLayouts.tvmAxis(org.axe4j.layout.Axis.M);
        TvmObject symbolic = (TvmObject) Tvm.call(TirxLayouts.TILE_LAYOUT,
                List.of(Tvm.call("tirx.Iter", n, 1L, m)), List.of(), Map.of());
        AxeException e = assertThrows(AxeException.class, () -> TirxLayouts.fromTvm(symbolic));
        assertEquals(AxeException.Kind.NOT_REPRESENTABLE, e.kind());
        assertTrue(e.getMessage().contains("symbolic") && e.getMessage().contains("extent"), e.getMessage());
        TvmObject offsetSymbolic = (TvmObject) Tvm.call(TirxLayouts.TILE_LAYOUT,
                List.of(Tvm.call("tirx.Iter", 4L, 1L, m)), List.of(), Map.of(m, n));
        AxeException o = assertThrows(AxeException.class, () -> TirxLayouts.fromTvm(offsetSymbolic));
        assertTrue(o.getMessage().contains("offset"), o.getMessage());
        TvmObject compose = (TvmObject) Tvm.call("tirx.ComposeLayout", 3L, 3L, 3L,
                TirxLayouts.toTvm(Layout.parse("S[(8,64):(64,1)]")), true);
        AxeException swizzled = assertThrows(AxeException.class, () -> TirxLayouts.fromTvm(compose));
        assertEquals(AxeException.Kind.NOT_REPRESENTABLE, swizzled.kind());
        assertTrue(swizzled.getMessage().contains("tirx.ComposeLayout"), swizzled.getMessage());
    }

    private static TvmObject var(String name) {
        return (TvmObject) Tvm.call("ir.Var", name, Tvm.call("ir.PrimType", org.axe4j.tvm.DataType.INT32), null);
    }

    /** {@code 2*n + 3 - n} on m and {@code n} on laneid read as integer offset 3 plus {@code n@m + n@laneid}. */
    @Test
    void symbolicAffineOffsetsKeepTheirVariables() {
        TvmObject n = var("n");
        TvmObject m = TirxLayouts.tvmAxis(org.axe4j.layout.Axis.M);
        TvmObject lane = TirxLayouts.tvmAxis(org.axe4j.layout.Axis.of("laneid"));
        Object twoNPlus3MinusN = Tvm.call("prim.Sub", Tvm.call("prim.Add", Tvm.call("prim.Mul", n, 2L, null), 3L, null), n,
                null);
        TvmObject t = (TvmObject) Tvm.call(TirxLayouts.TILE_LAYOUT, List.of(Tvm.call("tirx.Iter", 4L, 1L, m)), List.of(),
                Map.of(m, twoNPlus3MinusN, lane, n));
        TirxLayout read = TirxLayouts.read(t);
        assertEquals(Layout.parse("S[4:1] + 3"), read.layout());
        assertEquals(1, read.symbolic().on(org.axe4j.layout.Axis.M).size());
        assertEquals(1L, read.symbolic().on(org.axe4j.layout.Axis.M).get(0).coefficient());
        assertTrue(read.symbolic().on(org.axe4j.layout.Axis.M).get(0).var().sameObject(n));
        assertEquals("S[4:1] + 3 + (n)@laneid + (n)", read.toString());
        // Written back and read again: the same variables, the same integer part; TIRx's apply agrees.
        try (TvmObject back = TirxLayouts.write(read)) {
            assertEquals(read, TirxLayouts.read(back));
            Map<?, ?> at2 = (Map<?, ?>) Tvm.call("tirx.LayoutApplyLinear", back, 2L);
            Map<Object, Object> asOffset = new java.util.LinkedHashMap<>();
            at2.forEach((k, v) -> asOffset.put(TirxLayouts.tvmAxis(org.axe4j.layout.Axis.of((String) k)), v));
            TirxLayout point = TirxLayouts.read((TvmObject) Tvm.call(TirxLayouts.TILE_LAYOUT, List.of(), List.of(), asOffset));
            assertEquals(Layout.parse("S[1:1] + 5"), point.layout(), "apply(2) = 2 + 3 + n");
            assertEquals(read.symbolic(), point.symbolic());
        }
        TvmObject divided = (TvmObject) Tvm.call(TirxLayouts.TILE_LAYOUT, List.of(Tvm.call("tirx.Iter", 4L, 1L, m)),
                List.of(), Map.of(m, Tvm.call("prim.FloorDiv", n, 2L, null)));
        // A term that is not affine (n // 2) is kept whole, and reads back as itself.
        TirxLayout halved = TirxLayouts.read(divided);
        assertEquals("S[4:1] + ((n // 2))", halved.toString());
        try (TvmObject back = TirxLayouts.write(halved)) {
            assertEquals(halved, TirxLayouts.read(back));
        }
        TvmObject real = (TvmObject) Tvm.call(TirxLayouts.TILE_LAYOUT, List.of(Tvm.call("tirx.Iter", 4L, 1L, m)),
                List.of(), Map.of(m, Tvm.call("ir.FloatImm", org.axe4j.tvm.DataType.parse("float32"), 0.5, null)));
        AxeException e = assertThrows(AxeException.class, () -> TirxLayouts.read(real));
        assertTrue(e.getMessage().contains("not an integer expression") && e.getMessage().contains("offset on axis m"),
                e.getMessage());
    }

    /** ComposeLayout: read/write round trip, and TIRx's apply is axe4j's swizzled base point on every x. */
    @Test
    void swizzledLayoutsAgreeWithTirxApply() {
        Property.forAll("tirx compose layout", Math.max(1, Property.CASES / 10), r -> {
            int bits = r.nextInt(4);
            int atom = bits + r.nextInt(3);
            org.axe4j.layout.Swizzle s = new org.axe4j.layout.Swizzle(bits, r.nextInt(3), r.nextBoolean() ? atom : -atom);
            List<org.axe4j.layout.Iter> shard = new java.util.ArrayList<>();
            for (org.axe4j.layout.Iter it : RandomLayouts.shard(r, 3)) {
                shard.add(new org.axe4j.layout.Iter(it.extent(), Math.abs(it.stride()), org.axe4j.layout.Axis.M));
            }
            shard.add(new org.axe4j.layout.Iter(2 + r.nextInt(3), 1, org.axe4j.layout.Axis.M)); // TIRx needs an m in every point
            Layout inner = Layout.of(shard, List.of(), r.nextBoolean() ? Map.of(org.axe4j.layout.Axis.M, (long) r.nextInt(9))
                    : Map.of());
            org.axe4j.layout.SwizzledLayout sl = new org.axe4j.layout.SwizzledLayout(s, inner);
            try (TvmObject t = TirxLayouts.toTvm(sl)) {
                assertEquals(TirxLayouts.COMPOSE_LAYOUT, t.typeKey());
                assertEquals(TirxLayout.of(sl), TirxLayouts.read(t), () -> "round trip of " + sl);
                for (long x = 0; x < sl.size(); x++) {
                    Point tirx = TirxLayouts.pointOf((Map<?, ?>) Tvm.call("tirx.LayoutApplyLinear", t, x));
                    assertEquals(sl.base(x), tirx, "apply(" + x + ") of " + sl);
                }
            }
        });
    }

    /**
     * read() caches by object address: across more layouts than the cache holds, each created and closed
     * at once (so TVM could reuse addresses), every read still returns its own layout.
     */
    @Test
    void readCacheNeverAnswersForAnotherObject() {
        java.util.Random r = new java.util.Random(7);
        for (int i = 0; i < 3000; i++) {
            Layout l = RandomLayouts.layout(r);
            try (TvmObject t = TirxLayouts.toTvm(l)) {
                assertEquals(TirxLayout.of(l), TirxLayouts.read(t));
                assertEquals(TirxLayout.of(l), TirxLayouts.read(t), "second read of " + l);
            }
        }
    }
}
