package org.axe4j.layout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

class LayoutMapTest {
    @Test
    void applyEqualsEnumeratedMap() {
        Property.forAll("apply(x) == oracle(x)", r -> {
            Layout l = RandomLayouts.layout(r);
            List<TreeSet<Point>> table = Oracle.table(l);
            for (long x = 0; x < l.size(); x++) {
                assertEquals(new ArrayList<>(table.get((int) x)), l.apply(x), l + " at " + x);
            }
        });
    }

    @Test
    void applyOnCoordinatesFlattensRowMajor() {
        Property.forAll("apply(S, c) == oracle(flat(c))", r -> {
            Layout l = RandomLayouts.layout(r);
            Shape s = RandomLayouts.shapeOf(r, l.size(), 3);
            long[] c = new long[s.rank()];
            for (int k = 0; k < c.length; k++) {
                c[k] = r.nextInt((int) s.dim(k));
            }
            assertEquals(new ArrayList<>(Oracle.table(l).get((int) Oracle.flat(s.toArray(), c))), l.apply(s, c));
        });
    }

    @Test
    void injectivityMatchesEnumeration() {
        Property.forAll("isShardInjective == oracle", r -> {
            Layout l = RandomLayouts.layout(r);
            assertEquals(Oracle.shardInjective(l), l.isShardInjective(), l.toString());
        });
    }

    @Test
    void preimagesMatchEnumeration() {
        Property.forAll("preimages(p) == oracle", r -> {
            Layout l = RandomLayouts.layout(r);
            List<TreeSet<Point>> table = Oracle.table(l);
            // Probe image points and points next to them (often outside the image).
            Point p = table.get(r.nextInt(table.size())).first();
            if (r.nextBoolean()) {
                p = p.plus(RandomLayouts.axis(r), r.nextInt(3) - 1);
            }
            assertEquals(Oracle.preimages(l, p), l.preimages(p), l + " at " + p);
        });
    }

    @Test
    void inverseUndoesApplyForInjectiveShards() {
        Property.forAll("inverse(apply(x)) == x", r -> {
            Layout l = RandomLayouts.layout(r);
            if (!Oracle.shardInjective(l)) {
                assertThrows(AxeException.class, () -> l.inverse(Point.ZERO));
                return;
            }
            long x = r.nextInt((int) l.size());
            for (Point p : l.apply(x)) {
                List<Long> pre = Oracle.preimages(l, p);
                if (pre.size() == 1) {
                    assertEquals(OptionalLong.of(x), l.inverse(p));
                } else {
                    AxeException e = assertThrows(AxeException.class, () -> l.inverse(p));
                    assertTrue(e.getMessage().contains("several preimages"), e.getMessage());
                }
            }
        });
    }

    @Test
    void sizeAndSpanFollowTheirFormulas() {
        Property.forAll("size/span", r -> {
            Layout l = RandomLayouts.layout(r);
            for (Axis a : RandomLayouts.AXES) {
                long size = 1;
                long span = 1;
                for (Iter it : l.shard()) {
                    if (it.axis().equals(a)) {
                        size *= it.extent();
                        span += (it.extent() - 1) * Math.abs(it.stride());
                    }
                }
                for (Iter it : l.replica()) {
                    if (it.axis().equals(a)) {
                        span += (it.extent() - 1) * Math.abs(it.stride());
                    }
                }
                assertEquals(size, l.sizeOn(a));
                assertEquals(span, l.spanOn(a));
                // The span bounds the image on a: max - min + 1 <= span.
                long lo = Long.MAX_VALUE;
                long hi = Long.MIN_VALUE;
                for (TreeSet<Point> set : Oracle.table(l)) {
                    for (Point p : set) {
                        lo = Math.min(lo, p.get(a));
                        hi = Math.max(hi, p.get(a));
                    }
                }
                assertTrue(hi - lo + 1 <= span, l + " on " + a);
            }
        });
    }

    @Test
    void shapesMustBeAdmitted() {
        Layout l = Layout.parse("S[(4,8):(8,1)]");
        AxeException e = assertThrows(AxeException.class, () -> l.apply(Shape.of(4, 4), 0, 0));
        assertEquals("shape (4,4) (size 16) is not admitted by layout S[(4,8):(8,1)] (size 32)", e.getMessage());
        AxeException outside = assertThrows(AxeException.class, () -> l.apply(Shape.of(4, 8), 4, 0));
        assertTrue(outside.getMessage().contains("coordinate [4, 0] is outside shape (4,8)"), outside.getMessage());
        AxeException zero = assertThrows(AxeException.class, () -> Shape.of(4, 0));
        assertTrue(zero.getMessage().contains("dimension 1 (0) must be >= 1"), zero.getMessage());
        AxeException big = assertThrows(AxeException.class, () -> Shape.of(1L << 40, 1L << 40));
        assertTrue(big.getMessage().contains("size of shape"), big.getMessage());
    }
}
