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
                TirxLayouts.toTvm(Layout.parse(knownText())), true);
        AxeException swizzled = assertThrows(AxeException.class, () -> TirxLayouts.fromTvm(compose));
        assertEquals(AxeException.Kind.NOT_REPRESENTABLE, swizzled.kind());
        assertTrue(swizzled.getMessage().contains("tirx.ComposeLayout"), swizzled.getMessage());
    }
}
