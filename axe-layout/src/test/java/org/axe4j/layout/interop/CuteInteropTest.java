package org.axe4j.layout.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Canonicalize;
import org.axe4j.layout.Iter;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Oracle;
import org.axe4j.layout.Point;
import org.axe4j.layout.Property;
import org.axe4j.layout.RandomLayouts;
import org.axe4j.layout.Result;
import org.axe4j.layout.Shape;
import org.junit.jupiter.api.Test;

/** CuTe and Axe agree as maps of coordinates (top-level shape) and of flat indices; fromAxe inverts toAxe. */
class CuteInteropTest {

    private static TreeSet<Point> single(Axis axis, long v) {
        return new TreeSet<>(List.of(Point.single(axis, v)));
    }

    @Test
    void cuteApplyMatchesTheLeafReference() {
        Property.forAll("cute apply = colexicographic leaf reference", random -> {
            CuteLayout c = CuteGen.layout(random);
            for (long i = 0; i < c.size(); i++) {
                assertEquals(CuteGen.referenceFlat(c, i), c.applyFlat(i), c + " at " + i);
            }
            for (long[] x : CuteGen.coordinates(c.topShape().toArray())) {
                long expected = 0;
                for (int k = 0; k < x.length; k++) {
                    expected += CuteGen.referenceFlat(c.mode(k), x[k]);
                }
                assertEquals(expected, c.apply(x), c + " at " + java.util.Arrays.toString(x));
            }
        });
    }

    @Test
    void toAxeAgreesOnEveryCoordinateOfTheTopLevelShape() {
        Property.forAll("cute toAxe agrees per coordinate", random -> {
            CuteLayout c = CuteGen.layout(random);
            Axis axis = random.nextBoolean() ? Axis.M : Axis.of("laneid");
            Layout l = CuteInterop.toAxe(c, axis);
            long[] shape = c.topShape().toArray();
            assertTrue(l.admits(c.topShape()));
            List<TreeSet<Point>> table = Oracle.table(l);
            for (long[] x : CuteGen.coordinates(shape)) {
                assertEquals(single(axis, c.apply(x)), table.get((int) Oracle.flat(shape, x)), c + " vs " + l);
            }
        });
    }

    @Test
    void toAxeFlatAgreesOnEveryFlatIndex() {
        Property.forAll("cute toAxeFlat agrees per flat index", random -> {
            CuteLayout c = CuteGen.layout(random);
            Layout l = CuteInterop.toAxeFlat(c);
            List<TreeSet<Point>> table = Oracle.table(l);
            assertEquals(c.size(), table.size());
            for (int i = 0; i < table.size(); i++) {
                assertEquals(single(Axis.M, c.applyFlat(i)), table.get(i), c + " vs " + l);
            }
        });
    }

    @Test
    void fromAxeOfToAxeInducesTheSameMap() {
        Property.forAll("cute fromAxe(toAxe(c)) = c as a map", random -> {
            CuteLayout c = CuteGen.layout(random);
            Shape shape = c.topShape();
            CuteLayout back = CuteInterop.tryFromAxe(CuteInterop.toAxe(c), shape).orElseThrow();
            assertEquals(shape, back.topShape());
            for (long[] x : CuteGen.coordinates(shape.toArray())) {
                assertEquals(c.apply(x), back.apply(x), c + " -> " + back);
            }
        });
    }

    @Test
    void fromAxeAcceptsExactlyTheGroupableSingleAxisLayoutsAndAgrees() {
        int[] accepted = {0};
        Property.forAll("cute fromAxe on random Axe layouts", random -> {
            Layout l = RandomLayouts.bare(random, 5);
            if (random.nextInt(3) == 0) {
                List<Iter> d = new ArrayList<>();
                l.shard().forEach(it -> d.add(new Iter(it.extent(), it.stride(), Axis.M)));
                l = l.withShard(d); // one axis more often
            }
            Shape shape = RandomLayouts.shapeOf(random, l.size(), 3);
            Optional<CuteLayout> c = CuteInterop.fromAxe(l, shape);
            boolean oneAxis = l.shard().stream().filter(it -> it.extent() > 1 && it.stride() != 0)
                    .map(Iter::axis).distinct().count() <= 1;
            boolean cuts = cutsAtEveryBoundary(Canonicalize.canonicalShard(l.shard()), shape);
            assertEquals(oneAxis && cuts, c.isPresent(), l + " by " + shape);
            if (c.isPresent()) {
                accepted[0]++;
                Axis axis = l.shard().stream().filter(it -> it.extent() > 1 && it.stride() != 0).map(Iter::axis)
                        .findFirst().orElse(Axis.M);
                List<TreeSet<Point>> table = Oracle.table(l);
                for (long[] x : CuteGen.coordinates(shape.toArray())) {
                    assertEquals(single(axis, c.get().apply(x)), table.get((int) Oracle.flat(shape.toArray(), x)));
                }
            }
        });
        assertTrue(accepted[0] > Property.CASES / 10, "too few accepted cases: " + accepted[0]);
    }

    /**
     * Groupability by cut points: the prefix products P_k = S_0 ... S_k must each fall in an iter i
     * (outer first, A_i = product of the extents before it) with A_i | P_k and (P_k / A_i) | e_i.
     */
    private static boolean cutsAtEveryBoundary(List<Iter> shard, Shape shape) {
        long p = 1;
        for (int k = 0; k < shape.rank(); k++) {
            p *= shape.dim(k);
            long a = 1;
            boolean ok = p == 1;
            for (Iter it : shard) {
                if (a <= p && p <= a * it.extent()) {
                    ok |= p % a == 0 && it.extent() % (p / a) == 0;
                }
                a *= it.extent();
            }
            if (!ok && !(shard.isEmpty() && p == 1)) {
                return false;
            }
        }
        return true;
    }

    @Test
    void normalShardKeepsTheMap() {
        Property.forAll("normal shard keeps the map", random -> {
            Layout l = RandomLayouts.bare(random, 5);
            assertTrue(Oracle.sameMap(l, l.withShard(Canonicalize.canonicalShard(l.shard()))), l.toString());
        });
    }

    @Test
    void fromAxeRefusesWithReasons() {
        Shape s8 = Shape.of(8);
        assertReason(Layout.parse("S[8:1] + R[2:8]"), s8, "replicas");
        assertReason(Layout.parse("S[8:1] + 3"), s8, "offset");
        assertReason(Layout.parse("S[(2,4):(1@laneid,1)]"), s8, "several axes");
        assertReason(Layout.parse("S[(4,6):(1,5)]"), Shape.of(6, 4), "neither a divisor nor a multiple");
        assertReason(Layout.parse("S[1:1]"), Shape.of(), "rank 0");
    }

    private static void assertReason(Layout l, Shape s, String fragment) {
        Result<CuteLayout> c = CuteInterop.tryFromAxe(l, s);
        assertFalse(c.isPresent());
        assertTrue(c.reason().contains(fragment), c.reason());
    }

    @Test
    void nestedModeReversesIntoAnAxeBlock() {
        // (2,(3,4)):(1,(2,6)) -> block 0 = (2,1), block 1 = (4,6),(3,2): the nested mode's leaves reversed.
        CuteLayout c = CuteLayout.parse("(2,(3,4)):(1,(2,6))");
        Layout l = CuteInterop.toAxe(c);
        assertEquals("S[(2,4,3):(1,6,2)]", l.toString());
        // CuTe (1,5): 5 = 2 + 3*1 -> 1 + 2*2 + 1*6 = 11; Axe x = 17 -> digits (1,1,2) -> 1 + 6 + 4 = 11.
        assertEquals(11, c.apply(1, 5));
        assertEquals(List.of(Point.of("m", 11)), l.apply(Shape.of(2, 12), 1, 5));
        // The flat reading reverses everything: 6 = 2*3 -> (6,4,3,2) order (4,3,2) of leaves (2,3,4).
        assertEquals("S[(4,3,2):(6,2,1)]", CuteInterop.toAxeFlat(c).toString());
        // Back from Axe: the nested mode is contiguous (6 = 3*2), so the normal shard merges it to 12:2.
        assertEquals("(2,12):(1,2)", CuteInterop.fromAxe(l, Shape.of(2, 12)).orElseThrow().toString());
        // With a gap (7 != 3*2) the nesting survives the round trip.
        CuteLayout gapped = CuteLayout.parse("(2,(3,4)):(1,(2,7))");
        assertEquals(gapped, CuteInterop.fromAxe(CuteInterop.toAxe(gapped), Shape.of(2, 12)).orElseThrow());
    }

    @Test
    void rowMajorAndColumnMajorFromTheCuteSeed() {
        // Layout(shape=[2,3], stride=[1,2]) (column-major, "layout left"): 0 2 4 / 1 3 5.
        CuteLayout left = CuteLayout.parse("(2,3):(1,2)");
        // Layout(shape=[2,3], stride=[3,1]) (row-major, "layout right"): 0 1 2 / 3 4 5.
        CuteLayout right = CuteLayout.parse("(2,3):(3,1)");
        long[][] leftTable = {{0, 2, 4}, {1, 3, 5}};
        long[][] rightTable = {{0, 1, 2}, {3, 4, 5}};
        Layout axeLeft = CuteInterop.toAxe(left);
        Layout axeRight = CuteInterop.toAxe(right);
        for (int i = 0; i < 2; i++) {
            for (int j = 0; j < 3; j++) {
                assertEquals(leftTable[i][j], left.apply(i, j));
                assertEquals(rightTable[i][j], right.apply(i, j));
                assertEquals(List.of(Point.of("m", leftTable[i][j])), axeLeft.apply(Shape.of(2, 3), i, j));
                assertEquals(List.of(Point.of("m", rightTable[i][j])), axeRight.apply(Shape.of(2, 3), i, j));
            }
        }
        // Flat: CuTe's left layout is the identity on 0..5; Axe's flat identity is the reversed S[(3,2):(2,1)].
        assertEquals("S[(3,2):(2,1)]", CuteInterop.toAxeFlat(left).toString());
        for (long i = 0; i < 6; i++) {
            assertEquals(i, left.applyFlat(i));
        }
    }

    @Test
    void threadValueCompositionTablesFromTheCuteSeed() {
        // TV2MN = (4,2,2):(2,1,8): thread t, value v = v0 + 2 v1 -> 2t + v0 + 8 v1; row t = 0 is 0 1 8 9.
        CuteLayout tv2mn = CuteLayout.parse("(4,(2,2)):(2,(1,8))");
        long[][] tv2mnTable = {{0, 1, 8, 9}, {2, 3, 10, 11}, {4, 5, 12, 13}, {6, 7, 14, 15}};
        // TV2Memory = ((2,2),2,2):((8,1),4,2) printed with thread rows and value columns: 0 4 2 6 / 8 12 10 14 / ...
        CuteLayout tv2mem = CuteLayout.parse("((2,2),(2,2)):((8,1),(4,2))");
        long[][] tv2memTable = {{0, 4, 2, 6}, {8, 12, 10, 14}, {1, 5, 3, 7}, {9, 13, 11, 15}};
        Layout axeMn = CuteInterop.toAxe(tv2mn);
        Layout axeMem = CuteInterop.toAxe(tv2mem);
        assertEquals("S[(4,2,2):(2,8,1)]", axeMn.toString());
        assertEquals("S[(2,2,2,2):(1,8,2,4)]", axeMem.toString());
        for (int t = 0; t < 4; t++) {
            for (int v = 0; v < 4; v++) {
                assertEquals(tv2mnTable[t][v], tv2mn.apply(t, v));
                assertEquals(tv2memTable[t][v], tv2mem.apply(t, v));
                assertEquals(List.of(Point.of("m", tv2mnTable[t][v])), axeMn.apply(Shape.of(4, 4), t, v));
                assertEquals(List.of(Point.of("m", tv2memTable[t][v])), axeMem.apply(Shape.of(4, 4), t, v));
            }
        }
        // The composition's fact: thread 0 reads memory 0, 4, 2, 6 (row-major MN (0,0), (1,0), (0,2), (1,2)).
        CuteLayout mn2mem = CuteLayout.parse("(4,4):(4,1)");
        for (int t = 0; t < 4; t++) {
            for (int v = 0; v < 4; v++) {
                long mn = tv2mn.apply(t, v); // a column-major MN index of the natural (4,4):(1,4) layout
                assertEquals(tv2mem.apply(t, v), mn2mem.apply(mn % 4, mn / 4));
            }
        }
    }

    @Test
    void productOrderExamplesFromTheCuteSeedRoundTrip() {
        String[] printed = {"((_4,_1),(_3,_2)):((_4,_0),(_1,_16))",
            "(((_4,_1),_2),((_3,_2),_1)):(((_4,_0),_32),((_1,_16),_0))", "((_4,_2),(_3,_2)):((_4,_16),(_1,_32))"};
        for (String text : printed) {
            CuteLayout c = CuteLayout.parse(text);
            assertEquals(text.replace("_", ""), c.toString());
            Shape shape = c.topShape();
            CuteLayout back = CuteInterop.fromAxe(CuteInterop.toAxe(c), shape).orElseThrow();
            for (long[] x : CuteGen.coordinates(shape.toArray())) {
                assertEquals(c.apply(x), back.apply(x));
            }
        }
        // The blocked product of (4,3):(4,1) by (2,2): the base has holes (values 4a + c, c < 3, up to 14),
        // so the 48 coordinates take 48 distinct values 4a + 16b + c + 32d, the largest 12 + 16 + 2 + 32 = 62.
        CuteLayout x4 = CuteLayout.parse(printed[2]);
        TreeSet<Long> image = new TreeSet<>();
        for (long i = 0; i < x4.size(); i++) {
            image.add(x4.applyFlat(i));
        }
        assertEquals(48, image.size());
        assertEquals(62L, image.last());
    }
}
