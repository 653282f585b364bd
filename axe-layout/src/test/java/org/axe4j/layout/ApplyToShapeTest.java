package org.axe4j.layout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** apply_to_shape against its definition at every coordinate of random layouts and shapes. */
class ApplyToShapeTest {
    private static final int CASES = 500;

    /**
     * At every coordinate c of S: the values lie in their iters' extents, read row-major they are flatten(c, S),
     * the layout they index has L's map, and the point they give is L(c)'s base point.
     */
    @Test
    void valuesAreTheDigitsOfTheFlatIndexAndGiveTheLayoutsPoint() {
        Property.forAll("apply_to_shape = digits of flatten(c, S)", CASES, r -> {
            Layout l = RandomLayouts.layout(r);
            if (l.size() > 2048 || l.replicaCount() > 64) {
                return;
            }
            Shape s = RandomLayouts.shapeOf(r, l.size(), 3);
            assertTrue(Oracle.sameMap(ApplyToShape.applyToShape(l, s, new long[s.rank()]).layout(), l), l + " by " + s);
            for (long x = 0; x < l.size(); x++) {
                long[] c = s.unflatten(x);
                ApplyToShape.Values v = ApplyToShape.applyToShape(l, s, c);
                List<Iter> shard = v.layout().shard();
                assertEquals(shard.size(), v.values().size());
                long flat = 0;
                java.util.TreeMap<Axis, Long> point = new java.util.TreeMap<>(l.offset());
                for (int i = 0; i < shard.size(); i++) {
                    long d = v.values().get(i);
                    assertTrue(d >= 0 && d < shard.get(i).extent(), l + " " + s + " at " + x + ": " + v);
                    flat = flat * shard.get(i).extent() + d;
                    point.merge(shard.get(i).axis(), d * shard.get(i).stride(), Long::sum);
                }
                assertEquals(x, flat, l + " " + s + " at " + x + ": " + v);
                assertEquals(l.apply(s, c).get(0).minus(l.replicaSet().get(0)), new Point(point),
                        l + " " + s + " at " + x);
            }
        });
    }

    @Test
    void aGroupableShapeSplitsEachCoordinateWithinItsOwnIters() {
        Layout l = Layout.parse("S[(4,6):(6,1)]");
        ApplyToShape.Values v = ApplyToShape.applyToShape(l, Shape.of(8, 3), 1, 2);
        assertEquals(Layout.parse("S[(4,2,3):(6,3,1)]"), v.layout());
        assertEquals(List.of(0L, 1L, 2L), v.values());
        // (3,8) cuts the 4 in the middle: L's own shard, flat index 11 split over (4,6).
        ApplyToShape.Values flat = ApplyToShape.applyToShape(l, Shape.of(3, 8), 1, 3);
        assertEquals(l, flat.layout());
        assertEquals(List.of(1L, 5L), flat.values());
        assertEquals(List.of(0L, 5L), ApplyToShape.applyToShape(Layout.parse("S[(8,1):(2,1)]"), Shape.of(1, 8), 0, 5)
                .values());
        assertEquals(List.of(1L, 3L), ApplyToShape.applyToShape(Layout.parse("S[(2,1,6):(6,5,1)]"), Shape.of(2, 6), 1, 3)
                .values());
    }

    @Test
    void badCoordinatesAndShapesAreRefused() {
        Layout l = Layout.parse("S[(4,6):(6,1)]");
        AxeException out = assertThrows(AxeException.class, () -> ApplyToShape.applyToShape(l, Shape.of(4, 6), 1, 6));
        assertTrue(out.getMessage().contains("coordinate [1, 6] is outside shape (4,6)"), out.getMessage());
        AxeException rank = assertThrows(AxeException.class, () -> ApplyToShape.applyToShape(l, Shape.of(4, 6), 1));
        assertTrue(rank.getMessage().contains("coord [1] has rank 1 but input_shape (4,6) has rank 2"), rank.getMessage());
        AxeException size = assertThrows(AxeException.class, () -> ApplyToShape.applyToShape(l, Shape.of(4, 4), 1, 1));
        assertTrue(size.getMessage().contains("does not admit input_shape (4,4)"), size.getMessage());
    }
}
