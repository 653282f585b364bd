package org.axe4j.tvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Reading IR nodes built by TVM's own constructors through reflected field getters. */
class ReflectionTest {
    @BeforeAll
    static void load() {
        Tvm.load();
    }

    private static long intImmValue(Object node) {
        TvmObject imm = (TvmObject) node;
        assertEquals("ir.IntImm", imm.typeKey());
        return (Long) imm.get("value");
    }

    @Test
    void intImm() {
        try (TvmObject imm = (TvmObject) Tvm.call("ir.IntImm", DataType.INT64, 42L, null)) {
            assertEquals("ir.IntImm", imm.typeKey());
            assertEquals(List.of("span", "ty", "value"), imm.fieldNames());
            assertEquals(42L, imm.get("value"));
            assertEquals(null, imm.get("span"));
            try (TvmObject type = (TvmObject) imm.get("ty")) {
                assertEquals("ir.PrimType", type.typeKey());
                assertEquals(DataType.INT64, type.get("dtype"));
            }
            assertEquals(List.of("ffi.Object", "ir.Expr", "ir.Constant"), imm.typeAncestors());
            assertTrue(imm.isInstance("ir.Expr"));
            assertTrue(imm.isInstance("ir.IntImm"));
            assertTrue(!imm.isInstance("ir.Range"));
            assertTrue(imm.typeIndex() >= 128);
        }
        try (TvmObject imm = (TvmObject) Tvm.call("ir.IntImm", DataType.INT32, -7L, null)) {
            assertEquals(-7L, imm.get("value"));
            assertEquals(DataType.INT32, ((TvmObject) imm.get("ty")).get("dtype"));
        }
    }

    @Test
    void range() {
        try (TvmObject range = (TvmObject) Tvm.call("ir.Range", 2L, 10L, null)) {
            assertEquals("ir.Range", range.typeKey());
            assertTrue(range.fieldNames().containsAll(List.of("min", "extent")), range.fieldNames().toString());
            assertEquals(2L, intImmValue(range.get("min")));
            assertEquals(8L, intImmValue(range.get("extent")));
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> range.get("nope"));
            assertTrue(e.getMessage().contains("ir.Range") && e.getMessage().contains("nope"), e.getMessage());
        }
    }

    @Test
    void tileLayoutOfIters() {
        TvmObject m = (TvmObject) Tvm.call("tirx.AxisGet", "m");
        assertEquals("m", m.get("name"));
        TvmObject outer = (TvmObject) Tvm.call("tirx.Iter", 8L, 4L, m);
        TvmObject inner = (TvmObject) Tvm.call("tirx.Iter", 4L, 1L, m);
        assertEquals(8L, intImmValue(outer.get("extent")));
        assertEquals(4L, intImmValue(outer.get("stride")));
        assertTrue(m.sameObject((TvmObject) outer.get("axis")));
        try (TvmObject layout = (TvmObject) Tvm.call("tirx.TileLayout", List.of(outer, inner), List.of(), Map.of())) {
            assertEquals("tirx.TileLayout", layout.typeKey());
            List<?> shard = (List<?>) layout.get("shard");
            assertEquals(2, shard.size());
            TvmObject first = (TvmObject) shard.get(0);
            assertEquals("tirx.Iter", first.typeKey());
            assertEquals(8L, intImmValue(first.get("extent")));
            assertEquals(1L, intImmValue(((TvmObject) shard.get(1)).get("stride")));
            assertInstanceOf(List.class, layout.get("replica"));
            assertEquals(List.of(), layout.get("replica"));
            assertEquals(32L, intImmValue(Tvm.call("tirx.LayoutGetSize", layout, null)));
        }
    }
}
