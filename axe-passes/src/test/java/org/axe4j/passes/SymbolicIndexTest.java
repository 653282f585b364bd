package org.axe4j.passes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Iter;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Point;
import org.axe4j.layout.Property;
import org.axe4j.layout.RandomLayouts;
import org.axe4j.layout.Region;
import org.axe4j.layout.Shape;
import org.axe4j.tvm.Axe4jGlobals;
import org.axe4j.tvm.DataType;
import org.axe4j.tvm.Tvm;
import org.axe4j.tvm.TvmException;
import org.axe4j.tvm.TvmObject;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * axe4j.layout.apply at a symbolic index and axe4j.layout.slice at a symbolic start: the expressions they return,
 * evaluated at every value in range, against the integer algebra.
 */
class SymbolicIndexTest {
    private static final int CASES = 100;

    @BeforeAll
    static void install() {
        Axe4jGlobals.install();
    }

    @Test
    void applyAtAVariableIsTheIntegerApplyAtEveryValue() {
        TvmObject v = var("v", DataType.INT64);
        Property.forAll("symbolic apply", CASES, r -> {
            Layout l = RandomLayouts.layout(r);
            if (l.size() > 512 || l.replicaCount() > 8) {
                return;
            }
            try (TvmObject t = TirxLayouts.toTvm(l)) {
                List<Map<Axis, java.util.function.LongUnaryOperator>> points = new ArrayList<>();
                for (Object p : (List<?>) Tvm.call("axe4j.layout.apply", t, v)) {
                    Map<Axis, java.util.function.LongUnaryOperator> point = new TreeMap<>();
                    ((Map<?, ?>) p).forEach((k, e) -> point.put(Axis.of((String) k), compile(e, v)));
                    points.add(point);
                }
                for (long x = 0; x < l.size(); x++) {
                    List<Point> at = new ArrayList<>();
                    for (Map<Axis, java.util.function.LongUnaryOperator> p : points) {
                        TreeMap<Axis, Long> coords = new TreeMap<>();
                        for (Map.Entry<Axis, java.util.function.LongUnaryOperator> e : p.entrySet()) {
                            coords.put(e.getKey(), e.getValue().applyAsLong(x));
                        }
                        at.add(new Point(coords));
                    }
                    assertEquals(l.apply(x), at, l + " at v = " + x);
                }
            }
        });
    }

    /**
     * A begin {@code b + step * v} on one dimension of compact and random layouts: the answer, read back with its
     * symbolic offset and evaluated at every v that keeps the box inside, maps like the integer slice there.
     */
    @Test
    void sliceAtASymbolicStartIsTheIntegerSliceAtEveryValue() {
        TvmObject v = var("v", DataType.INT32);
        int[] answered = {0};
        Property.forAll("symbolic slice", CASES, r -> {
            Layout l = r.nextBoolean() ? RandomLayouts.layout(r) : compact(r);
            if (l.size() > 256 || l.replicaCount() > 8) {
                return;
            }
            Shape shape = RandomLayouts.shapeOf(r, l.size(), 3);
            int dim = r.nextInt(shape.rank());
            long d = shape.dims().get(dim);
            long width = 1 + r.nextInt((int) d);
            long step = 1 + r.nextInt(4);
            long base = r.nextInt((int) (d - width + 1));
            List<Object> region = new ArrayList<>();
            for (int i = 0; i < shape.rank(); i++) {
                if (i == dim) {
                    Object begin = Tvm.call("prim.Add", Tvm.call("prim.Mul", v, Tvm.call("ir.IntImm", DataType.INT32,
                            step, null), null), Tvm.call("ir.IntImm", DataType.INT32, base, null), null);
                    Object end = Tvm.call("prim.Add", begin, Tvm.call("ir.IntImm", DataType.INT32, width, null), null);
                    region.add(List.of(begin, end));
                } else {
                    region.add(List.of(0L, shape.dims().get(i)));
                }
            }
            TvmObject sliced;
            try (TvmObject t = TirxLayouts.toTvm(l)) {
                sliced = (TvmObject) Tvm.call("axe4j.layout.slice", t, shape.dims(), region);
            } catch (TvmException e) {
                assertTrue(e.getMessage().contains("does not read as a translation"), e.getMessage());
                return;
            }
            if (sliced == null) {
                return;
            }
            TirxLayout read = TirxLayouts.read(sliced);
            for (long t = -base / step - 1; t * step + base + width <= d; t++) {
                long begin = base + step * t;
                if (begin < 0) {
                    continue;
                }
                long[][] pairs = new long[shape.rank()][];
                for (int i = 0; i < shape.rank(); i++) {
                    pairs[i] = i == dim ? new long[] {begin, begin + width} : new long[] {0, shape.dims().get(i)};
                }
                Region box = Region.of(pairs);
                Layout at = withValue(read, v, t);
                assertEquals(box.extents().size(), at.size());
                for (long y = 0; y < at.size(); y++) { // L'(y) = L(begin + y), by enumeration
                    long[] c = box.extents().unflatten(y);
                    for (int i = 0; i < c.length; i++) {
                        c[i] += box.begin(i);
                    }
                    assertEquals(l.apply(shape, c), at.apply(y), l + " over " + shape + " at v = " + t + ": " + read);
                }
            }
            answered[0]++;
        });
        assertTrue(answered[0] > CASES / 4, answered[0] + " answered");
    }

    @Test
    void errorsNameTheIndexOrTheRegion() {
        TvmObject v = var("v", DataType.INT32);
        TvmException narrow = assertThrows(TvmException.class,
                () -> Tvm.call("axe4j.layout.apply", "Swizzle<3,5,3> o S[256:1]", var("i", new DataType(DataType.INT, 8, 1))));
        assertTrue(narrow.getMessage().contains("is int8 and Swizzle<3,5,3> needs the constant 224"),
                narrow.getMessage());
        TvmException wrap = assertThrows(TvmException.class,
                () -> Tvm.call("axe4j.layout.slice", "S[(4,4):(1,4)]", List.of(16L),
                        List.of(List.of(v, Tvm.call("prim.Add", v, Tvm.call("ir.IntImm", DataType.INT32, 2L, null),
                                null)))));
        assertTrue(wrap.getMessage().contains("region [v:v + 2] of shape (16)"), wrap.getMessage());
        TvmObject staged = (TvmObject) Tvm.call("axe4j.layout.slice", "S[(3,128,128):(16384,128,1)]",
                List.of(3L, 128L, 128L), List.of(Tvm.call("ir.Range", v, Tvm.call("prim.Add", v,
                        Tvm.call("ir.IntImm", DataType.INT32, 1L, null), null), null), List.of(0L, 128L),
                        List.of(0L, 128L)));
        assertNotNull(staged);
        assertEquals("S[(128,128):(128,1)] + (16384*v)", TirxLayouts.read(staged).toString());
    }

    @Test
    void aSwizzledLayoutAtASymbolicIndexIsTheSwizzleOfTheWholeAddress() {
        TvmObject v = var("v", DataType.INT32);
        org.axe4j.layout.SwizzledLayout l = org.axe4j.layout.SwizzledLayout.parse("Swizzle<3,3,3> o S[(8,64):(64,1)] + 5");
        Object m = ((Map<?, ?>) ((List<?>) Tvm.call("axe4j.layout.apply", l.toString(), v)).get(0)).get("m");
        java.util.function.LongUnaryOperator at = compile(m, v);
        for (long x = 0; x < l.size(); x++) {
            assertEquals(l.apply(x).get(0).get(Axis.M), at.applyAsLong(x), l + " at v = " + x + ": " + m);
        }
    }

    /** The integer layout at {@code v = value}: its symbolic offset (variables and expressions) evaluated. */
    private static Layout withValue(TirxLayout l, TvmObject v, long value) {
        TreeMap<Axis, Long> offset = new TreeMap<>(l.layout().offset());
        l.symbolic().terms().forEach((a, ts) -> ts.forEach(
                t -> offset.merge(a, t.coefficient() * compile(t.var(), v).applyAsLong(value), Long::sum)));
        return l.layout().withOffset(offset);
    }

    /**
     * Starts the layout does not translate: the offset is the digit formula at the start (written back to TVM and
     * read again), right at every start; a body that changes with the start is refused naming the region.
     */
    @Test
    void aStartTheLayoutDoesNotTranslateHasADigitOffset() {
        TvmObject v = var("v", DataType.INT32);
        Object twoV = Tvm.call("prim.Mul", v, Tvm.call("ir.IntImm", DataType.INT32, 2L, null), null);
        Object end = Tvm.call("prim.Add", twoV, Tvm.call("ir.IntImm", DataType.INT32, 2L, null), null);
        TvmObject sliced = (TvmObject) Tvm.call("axe4j.layout.slice", "S[(4,4):(1,4)]", List.of(16L),
                List.of(List.of(twoV, end)));
        TirxLayout read = TirxLayouts.read(sliced);
        assertEquals("S[2:4] + ((v // 2) + 8*(v % 2))", read.toString());
        try (TvmObject back = TirxLayouts.write(read)) {
            assertEquals(read, TirxLayouts.read(back), "the floordiv and floormod terms read back as themselves");
        }
        Layout l = Layout.parse("S[(4,4):(1,4)]");
        for (long t = 0; t < 8; t++) {
            assertEquals(org.axe4j.layout.Slice.slice(l, Shape.of(16), Region.of(new long[] {2 * t, 2 * t + 2})).image(),
                    withValue(read, v, t).image(), "v = " + t);
        }
        // The diagonal [v, v] of (4, 4): flat 5v with v in [0, 3] (both entries bound v), so 4 * (5v % 4) + 5v // 4
        // is 5v over that range.
        Object plus1 = Tvm.call("prim.Add", v, Tvm.call("ir.IntImm", DataType.INT32, 1L, null), null);
        TirxLayout diagonal = TirxLayouts.read((TvmObject) Tvm.call("axe4j.layout.slice", "S[(4,4):(1,4)]",
                List.of(4L, 4L), List.of(List.of(v, plus1), List.of(v, plus1))));
        assertEquals("S[1:1] + (5*v)", diagonal.toString());
        for (long t = 0; t < 4; t++) {
            assertEquals(l.apply(Shape.of(4, 4), t, t), withValue(diagonal, v, t).apply(0), "v = " + t);
        }
        // Width 2 from v: S[2:4] at start 0, S[2:-11] at start 3 (across the carry).
        Object plus2 = Tvm.call("prim.Add", v, Tvm.call("ir.IntImm", DataType.INT32, 2L, null), null);
        TvmException changes = assertThrows(TvmException.class, () -> Tvm.call("axe4j.layout.slice",
                "S[(4,4):(1,4)]", List.of(16L), List.of(List.of(v, plus2))));
        assertTrue(changes.getMessage().contains("region [v:v + 2] of shape (16) starts at a symbolic index")
                && changes.getMessage().contains("S[2:4] at the start [0], S[2:-11] at [3]")
                && changes.getMessage().contains("the slice's body changes with the start"), changes.getMessage());
    }

    /** A PrimExpr (or integer) as a function of {@code v}'s value, floor division as TIR's; read once. */
    private static java.util.function.LongUnaryOperator compile(Object e, TvmObject v) {
        if (e instanceof Long c) {
            return x -> c;
        }
        TvmObject o = (TvmObject) e;
        switch (o.typeKey()) {
            case "ir.IntImm": {
                long c = (Long) o.get("value");
                return x -> c;
            }
            case "ir.Var":
                assertTrue(o.sameObject(v), o.repr());
                return x -> x;
            default:
                break;
        }
        java.util.function.LongUnaryOperator a = compile(o.get("a"), v);
        java.util.function.LongUnaryOperator b = compile(o.get("b"), v);
        return switch (o.typeKey()) {
            case "prim.Add" -> x -> a.applyAsLong(x) + b.applyAsLong(x);
            case "prim.Mul" -> x -> a.applyAsLong(x) * b.applyAsLong(x);
            case "prim.FloorDiv" -> x -> Math.floorDiv(a.applyAsLong(x), b.applyAsLong(x));
            case "prim.FloorMod" -> x -> Math.floorMod(a.applyAsLong(x), b.applyAsLong(x));
            case "prim.BitwiseXor" -> x -> a.applyAsLong(x) ^ b.applyAsLong(x);
            case "prim.BitwiseAnd" -> x -> a.applyAsLong(x) & b.applyAsLong(x);
            case "prim.RShift" -> x -> a.applyAsLong(x) >> b.applyAsLong(x);
            case "prim.LShift" -> x -> a.applyAsLong(x) << b.applyAsLong(x);
            default -> throw new AssertionError("unexpected node " + o.typeKey() + " " + o.repr());
        };
    }

    private static Layout compact(java.util.Random r) {
        List<Iter> shard = new ArrayList<>();
        long stride = 1 + r.nextInt(2);
        for (int k = 0, n = 1 + r.nextInt(3); k < n; k++) {
            long e = 1 + r.nextInt(5);
            shard.add(0, new Iter(e, stride, Axis.M));
            stride *= e;
        }
        return new Layout(shard, List.of(), RandomLayouts.offset(r));
    }

    private static TvmObject var(String name, DataType type) {
        return (TvmObject) Tvm.call("ir.Var", name, Tvm.call("ir.PrimType", type), null);
    }
}
