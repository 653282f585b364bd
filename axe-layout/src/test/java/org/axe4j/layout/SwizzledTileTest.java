package org.axe4j.layout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Tile, tile-of, group, slice and apply of swizzled layouts, against the maps they induce, enumerated from the
 * definitions: {@code (A (x) (swz o B))(z) = { a * span(B) + swz(b) }} and {@code (swz o L)(x) = swz(L(x))}.
 */
class SwizzledTileTest {
    static final int CASES = 300;

    /** Mostly TIRx's atoms (positive shift); the swizzle's period is at most 2^9. */
    static Swizzle swizzle(Random r) {
        int bits = 1 + r.nextInt(3);
        int base = r.nextInt(3);
        int shift = bits + r.nextInt(2);
        return new Swizzle(bits, base, r.nextInt(5) == 0 ? -shift : shift);
    }

    /** A memory layout grouped by {@code shape}: random (TileOracle's, moved to m) or the compact row-major atom. */
    static Layout memory(Random r, Shape shape) {
        if (r.nextBoolean()) {
            long[] dims = shape.toArray();
            List<Iter> shard = new ArrayList<>();
            long stride = 1;
            for (int k = dims.length - 1; k >= 0; k--) {
                shard.add(0, new Iter(dims[k], stride, Axis.M));
                stride *= dims[k];
            }
            return Layout.of(shard, List.of(), Map.of());
        }
        Layout l = TileOracle.grouped(r, shape);
        List<Iter> shard = new ArrayList<>();
        l.shard().forEach(it -> shard.add(new Iter(it.extent(), it.stride(), Axis.M)));
        List<Iter> replica = new ArrayList<>();
        l.replica().forEach(it -> replica.add(new Iter(it.extent(), it.stride(), Axis.M)));
        TreeMap<Axis, Long> offset = new TreeMap<>();
        l.offset().values().forEach(v -> offset.merge(Axis.M, v, Long::sum));
        return new Layout(shard, replica, offset);
    }

    /** An inner shape of 2 dimensions with power-of-two sizes near the swizzle periods (up to 1024 elements). */
    static Shape innerShape(Random r) {
        return Shape.of(1L << r.nextInt(4), 1L << (1 + r.nextInt(6)));
    }

    static TreeSet<Long> m(List<Point> points) {
        TreeSet<Long> out = new TreeSet<>();
        points.forEach(p -> out.add(p.get(Axis.M)));
        return out;
    }

    /** {@code { a * s + swz(b) }} for every z of the tiled shape, from the enumerated tables of A and B. */
    static List<TreeSet<Long>> kronecker(Layout a, Shape ta, Swizzle swz, Layout b, Shape tb) {
        List<TreeSet<Point>> tableA = Oracle.table(a);
        List<TreeSet<Point>> tableB = Oracle.table(b);
        long s = TileOracle.span(b).getOrDefault(Axis.M, 1L);
        long[] t = {ta.dim(0) * tb.dim(0), ta.dim(1) * tb.dim(1)};
        List<TreeSet<Long>> out = new ArrayList<>();
        for (long flat = 0; flat < t[0] * t[1]; flat++) {
            long[] z = TileOracle.unflatten(t, flat);
            long[] x = {z[0] / tb.dim(0), z[1] / tb.dim(1)};
            long[] y = {z[0] % tb.dim(0), z[1] % tb.dim(1)};
            TreeSet<Long> set = new TreeSet<>();
            for (Point p : tableA.get((int) Oracle.flat(ta.toArray(), x))) {
                for (Point q : tableB.get((int) Oracle.flat(tb.toArray(), y))) {
                    set.add(p.get(Axis.M) * s + swz.apply(q.get(Axis.M)));
                }
            }
            out.add(set);
        }
        return out;
    }

    static List<TreeSet<Long>> table(SwizzledLayout l) {
        List<TreeSet<Long>> out = new ArrayList<>();
        for (long x = 0; x < l.size(); x++) {
            out.add(m(l.apply(x)));
        }
        return out;
    }

    /**
     * Random outer A (memory only, grouped by a shape of rank 2) and swizzled inner atoms (a quarter of them bare):
     * the tile is the Kronecker product of the maps, or refused NOT_REPRESENTABLE; a refusal is never where
     * TIRx's {@code swz o (A (x) B)} is the product. Tile-of recovers both factors from every tile built.
     */
    @Test
    void tileIsTheKroneckerProductAndTileOfRecoversBothFactors() {
        AtomicInteger built = new AtomicInteger();
        AtomicInteger restricted = new AtomicInteger();
        AtomicInteger refused = new AtomicInteger();
        Property.forAll("swizzled tile", CASES, r -> {
            Swizzle swz = swizzle(r);
            Shape tb = innerShape(r);
            Layout b = memory(r, tb);
            boolean bare = r.nextInt(4) == 0;
            SwizzledLayout inner = new SwizzledLayout(swz, bare ? Layout.parse("S[1:1]") : b);
            Layout bOver = inner.over(tb).layout();
            Shape ta = TileOracle.shape(r, 2, 6);
            Layout a = memory(r, ta);
            List<TreeSet<Long>> expected = kronecker(a, ta, swz, bOver, tb);
            Shape t = Tile.tiledShape(ta, tb);
            SwizzledLayout tirx = new SwizzledLayout(swz, Tile.tile(a, ta, bOver, tb));
            SwizzledLayout tiled;
            try {
                tiled = SwizzledTile.tile(a, ta, inner, tb);
            } catch (AxeException e) {
                assertEquals(AxeException.Kind.NOT_REPRESENTABLE, e.kind(), e.getMessage());
                assertTrue(e.getMessage().contains(a.toString()) && e.getMessage().contains("period"), e.getMessage());
                assertFalse(table(tirx).equals(expected), "refused, yet " + tirx + " is the product");
                refused.incrementAndGet();
                return;
            }
            assertEquals(expected, table(tiled), a + " (x) " + inner);
            built.incrementAndGet();
            if (!tiled.swizzle().equals(swz)) {
                restricted.incrementAndGet();
            }
            Layout outer = SwizzledTile.outer(tiled, t, inner, tb).orElseThrow();
            assertEquals(expected, table(SwizzledTile.tile(outer, ta, inner, tb)), "outer " + outer + " of " + tiled);
            SwizzledLayout in = SwizzledTile.inner(tiled, t, a, ta).orElseThrow();
            assertEquals(expected, table(SwizzledTile.tile(a, ta, in, tb)), "inner " + in + " of " + tiled);
            // A factor is returned only when it tiles back: against another swizzle, any answer is checked.
            SwizzledLayout other = new SwizzledLayout(swizzle(r), tiled.layout());
            SwizzledTile.outer(other, t, inner, tb).ifPresent(o -> assertEquals(table(other),
                    table(SwizzledTile.tile(o, ta, inner, tb)), "outer " + o + " of " + other));
        });
        assertTrue(built.get() > CASES / 2 && refused.get() > 0 && restricted.get() > 0,
                "built " + built + ", restricted " + restricted + ", refused " + refused);
    }

    /** Group and slice keep the map; a bare swizzle reads as the identity over the shape given. */
    @Test
    void groupAndSliceKeepTheMap() {
        Property.forAll("swizzled group and slice", CASES, r -> {
            Swizzle swz = swizzle(r);
            Shape shape = innerShape(r);
            boolean bare = r.nextInt(4) == 0;
            SwizzledLayout l = new SwizzledLayout(swz, bare ? Layout.parse("S[1:1]") : memory(r, shape));
            SwizzledLayout full = l.over(shape);
            SwizzledLayout grouped = l.group(shape).orElseThrow();
            assertEquals(table(full), table(grouped), "group of " + l + " by " + shape);
            Region box = SliceTest.randomBox(r, shape);
            Result<SwizzledLayout> sliced = l.slice(shape, box);
            Result<Layout> plain = Slice.trySlice(full.layout(), shape, box);
            assertEquals(plain.isPresent(), sliced.isPresent(), l + " sliced by " + box);
            if (sliced.isPresent()) {
                long[] widths = new long[shape.rank()];
                for (int k = 0; k < widths.length; k++) {
                    widths[k] = box.width(k);
                }
                Shape boxShape = Shape.of(widths);
                for (long y = 0; y < boxShape.size(); y++) {
                    long[] c = boxShape.unflatten(y);
                    for (int k = 0; k < c.length; k++) {
                        c[k] += box.begin(k);
                    }
                    assertEquals(m(full.apply(shape.flatten(c))), m(sliced.get().apply(y)), l + " at " + y + " of " + box);
                }
            }
        });
    }

    /** A bare swizzle repeats: x past its period maps to swz(x) (TIRx's apply); any other layout stops at its size. */
    @Test
    void bareSwizzleApplyIsPeriodic() {
        Property.forAll("bare swizzle apply", CASES, r -> {
            Swizzle swz = swizzle(r);
            SwizzledLayout bare = new SwizzledLayout(swz, Layout.parse(r.nextBoolean() ? "S[1:1]" : "S[4:1]"));
            assertTrue(bare.isBare(), bare + " is bare");
            for (int i = 0; i < 16; i++) {
                long x = r.nextInt(1 << 12);
                long expected = SwizzledLayoutTest.oracleSwizzle(x, swz.bits(), swz.base(), swz.shift());
                assertEquals(List.of(expected), new ArrayList<>(m(bare.applyAny(x))), bare + " at " + x);
            }
        });
        // Rows of 64 padded to 128: not the identity, so indices stop at its 512 elements.
        SwizzledLayout atom = SwizzledLayout.parse("Swizzle<3,4,3> o S[(8,64):(128,1)]");
        assertFalse(atom.isBare());
        assertThrows(AxeException.class, () -> atom.applyAny(512));
        // The identity written in two iters is bare too (canonically S[512:1]).
        assertTrue(SwizzledLayout.parse("Swizzle<3,4,3> o S[(8,64):(64,1)]").isBare());
    }

    /** TIRx's example atoms, and the refusals. */
    @Test
    void examples() {
        // 2x2 tiles of the 128-byte swizzle of fp16 rows (8x64 elements, period 2^(3+3+3) = 512 = span).
        SwizzledLayout atom = SwizzledLayout.parse("Swizzle<3,3,3> o S[(8,64):(64,1)]");
        SwizzledLayout t = SwizzledTile.tile(Layout.parse("S[(2,2):(2,1)]"), Shape.of(2, 2), atom, Shape.of(8, 64));
        assertEquals("Swizzle<3,3,3> o S[(2,8,2,64):(1024,64,512,1)]", t.toString());
        SwizzledLayout bare = SwizzledLayout.parse("Swizzle<3,3,3> o S[1:1]");
        assertEquals(t, SwizzledTile.tile(Layout.parse("S[(2,2):(2,1)]"), Shape.of(2, 2), bare, Shape.of(8, 64)));
        // Rows of 32 fp16 under Swizzle<3,4,3> (period 512, span 256): bit 8 of the second tile would flip bit 5,
        // so the product restricts the swizzle to the atom's 8 bits, Swizzle<1,4,3>.
        SwizzledLayout half = SwizzledLayout.parse("Swizzle<3,4,3> o S[(8,32):(32,1)]");
        assertEquals("Swizzle<1,4,3> o S[(2,8,32):(256,32,1)]",
                SwizzledTile.tile(Layout.parse("S[2:1]"), Shape.of(2, 1), half, Shape.of(8, 32)).toString());
        AxeException thread = assertThrows(AxeException.class, () -> SwizzledTile.tile(
                Layout.parse("S[(2,2):(1@warpid,1)]"), Shape.of(2, 2), atom, Shape.of(8, 64)));
        assertTrue(thread.getMessage().contains("warpid") && thread.getMessage().contains("memory"), thread.getMessage());
        // Negative shift: bits [2,4) flip bits [6,8). Tiles 16 apart leave those bits alone (same map as TIRx's
        // answer, found by enumeration); tiles 64 apart set bit 6, which swz(64 + 4) = 4 clears, 64 + swz(4) = 132 not.
        assertEquals("Swizzle<2,2,-4> o S[(2,16):(16,1)]", SwizzledTile.tile(Layout.parse("S[2:1]"), Shape.of(2),
                SwizzledLayout.parse("Swizzle<2,2,-4> o S[16:1]"), Shape.of(16)).toString());
        AxeException period = assertThrows(AxeException.class, () -> SwizzledTile.tile(Layout.parse("S[2:4]"),
                Shape.of(2), SwizzledLayout.parse("Swizzle<2,2,-4> o S[16:1]"), Shape.of(16)));
        assertEquals(AxeException.Kind.NOT_REPRESENTABLE, period.kind());
        assertTrue(period.getMessage().contains("period 256"), period.getMessage());
    }
}
