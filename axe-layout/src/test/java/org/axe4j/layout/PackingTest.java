package org.axe4j.layout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** storage, unpack, pack and tile_to against their definitions, point by point (the enumerated maps). */
class PackingTest {
    private static final int CASES = 500;

    /** unpack(L, n)(x n + j) = {p + (n - 1) p_m + j on m : p in L(x)}: the m coordinate times n plus j. */
    @Test
    void unpackMultipliesTheMemoryCoordinateAndPackUndoesIt() {
        Property.forAll("unpack = n L_m + j, pack undoes it", CASES, r -> {
            Layout l = RandomLayouts.layout(r);
            if (l.size() * l.replicaCount() > 4096) {
                return;
            }
            long n = 1 + r.nextInt(4);
            Layout u = Packing.unpack(l, n);
            assertEquals(l.size() * n, u.size());
            for (long x = 0; x < l.size(); x++) {
                for (long j = 0; j < n; j++) {
                    TreeSet<Point> want = new TreeSet<>();
                    for (Point p : l.apply(x)) {
                        TreeMap<Axis, Long> c = new TreeMap<>(p.coords());
                        c.put(Axis.M, p.get(Axis.M) * n + j);
                        want.add(new Point(c));
                    }
                    assertEquals(want, new TreeSet<>(u.apply(x * n + j)), l + " unpack " + n + " at " + x + "," + j);
                }
            }
            assertTrue(Oracle.sameMap(Packing.pack(u, n), l), l + " unpack then pack " + n);
        });
    }

    /**
     * storage(L) is L over its non-thread iters: element x of L, whose digits on those iters form index y of
     * storage(L), has the points of storage(L)(y) as its points without their thread coordinates.
     */
    @Test
    void storageKeepsTheMemoryCoordinatesOfEveryPoint() {
        Property.forAll("storage = L without thread axes", CASES, r -> {
            Layout l = RandomLayouts.layout(r);
            if (l.size() * l.replicaCount() > 4096) {
                return;
            }
            Layout s = Packing.storage(l);
            for (long x = 0; x < l.size(); x++) {
                long[] digits = l.digits(x);
                long y = 0;
                for (int k = 0; k < digits.length; k++) {
                    Iter it = l.shard().get(k);
                    if (it.axis().kind() != AxisKind.THREAD) {
                        y = y * it.extent() + digits[k];
                    }
                }
                TreeSet<Point> want = new TreeSet<>();
                for (Point p : l.apply(x)) {
                    TreeMap<Axis, Long> c = new TreeMap<>();
                    p.coords().forEach((axis, v) -> {
                        if (axis.kind() != AxisKind.THREAD) {
                            c.put(axis, v);
                        }
                    });
                    want.add(new Point(c));
                }
                assertEquals(want, new TreeSet<>(s.apply(y)), l + " storage at " + x + " (index " + y + ")");
            }
        });
    }

    @Test
    void tileToRepeatsTheLayoutRowMajor() {
        Layout l = Layout.parse("S[(4,8):(1@laneid,1)] + 2");
        Layout t = Packing.tileTo(l, Shape.of(8, 24), Shape.of(4, 8));
        for (long i = 0; i < 8; i++) {
            for (long j = 0; j < 24; j++) {
                List<Point> inner = l.apply(Shape.of(4, 8), i % 4, j % 8);
                long block = (i / 4) * 3 + j / 8;   // row-major over the (2, 3) blocks, each span(L) = 8 apart on m
                TreeMap<Axis, Long> c = new TreeMap<>(inner.get(0).coords());
                c.put(Axis.M, inner.get(0).get(Axis.M) + block * 8);
                assertEquals(List.of(new Point(c)), t.apply(Shape.of(8, 24), i, j), "(" + i + ", " + j + ")");
            }
        }
        AxeException e = assertThrows(AxeException.class, () -> Packing.tileTo(l, Shape.of(8, 12), Shape.of(4, 8)));
        assertTrue(e.getMessage().contains("dim 1 of (8,12) is not a multiple of 8"), e.getMessage());
    }

    @Test
    void packNamesWhatStopsIt() {
        AxeException inner = assertThrows(AxeException.class, () -> Packing.pack(Layout.parse("S[(4,8):(1,4)]"), 2));
        assertTrue(inner.getMessage().contains("innermost iter"), inner.getMessage());
        AxeException stride = assertThrows(AxeException.class, () -> Packing.pack(Layout.parse("S[(3,8):(6,1)]"), 4));
        assertTrue(stride.getMessage().contains("not a multiple of 4"), stride.getMessage());
        AxeException offset = assertThrows(AxeException.class, () -> Packing.pack(Layout.parse("S[8:1] + 3"), 2));
        assertTrue(offset.getMessage().contains("the offset 3 on m is not a multiple of 2"), offset.getMessage());
    }

    /**
     * unpack(swz o L, n)(x n + j) = { n swz(a) + j : a in L(x) } and pack(swz o L, n)(y) = { (swz(a) - j) / n } for
     * a in L(y n + j), against the swizzle applied point by point; a power of two n only.
     */
    @Test
    void swizzledUnpackAndPackFollowTheSwizzledAddresses() {
        Property.forAll("unpack/pack of swz o L", CASES, r -> {
            Shape shape = SwizzledTileTest.innerShape(r);
            SwizzledLayout l = new SwizzledLayout(SwizzledTileTest.swizzle(r), SwizzledTileTest.memory(r, shape));
            long n = 1L << r.nextInt(3);
            SwizzledLayout u = Packing.unpack(l, n);
            for (long x = 0; x < l.size(); x++) {
                for (long j = 0; j < n; j++) {
                    TreeSet<Long> want = new TreeSet<>();
                    for (Point p : l.apply(x)) {
                        want.add(p.get(Axis.M) * n + j);
                    }
                    assertEquals(want, SwizzledTileTest.m(u.apply(x * n + j)), l + " unpack " + n + " at " + x + "," + j);
                }
            }
            SwizzledLayout back = Packing.pack(u, n);
            for (long x = 0; x < l.size(); x++) {
                assertEquals(SwizzledTileTest.m(l.apply(x)), SwizzledTileTest.m(back.apply(x)), l + " pack(unpack)");
            }
        });
    }

    @Test
    void swizzledPackRefusesANumTheSwizzleWouldSplitOrThatIsNotAPowerOfTwo() {
        SwizzledLayout l = SwizzledLayout.parse("Swizzle<3,1,3> o S[(8,64):(64,1)]");
        AxeException split = assertThrows(AxeException.class, () -> Packing.pack(l, 4));
        assertTrue(split.getMessage().contains("units of 2^1 elements"), split.getMessage());
        AxeException odd = assertThrows(AxeException.class, () -> Packing.unpack(l, 3));
        assertTrue(odd.getMessage().contains("power of two"), odd.getMessage());
        assertEquals("Swizzle<3,0,3> o S[(8,32):(32,1)]", Packing.pack(l, 2).toString());
    }
}
