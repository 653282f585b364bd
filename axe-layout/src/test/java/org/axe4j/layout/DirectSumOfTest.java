package org.axe4j.layout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Random;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** is_direct_sum_right and is_direct_sum_left against the definition {@code L(z) = {a + b}}, point by point. */
class DirectSumOfTest {
    private static final int CASES = 500;

    private record Sum(Layout a, Shape ta, Layout b, Shape tb, Layout l, Shape interleaved) {}

    private static Sum randomSum(Random r) {
        int rank = 1 + r.nextInt(2);
        Shape ta = TileOracle.shape(r, rank, 8);
        Shape tb = TileOracle.shape(r, rank, 8);
        Layout a = TileOracle.grouped(r, ta);
        Layout b = TileOracle.grouped(r, tb);
        Layout l = DirectSum.directSum(a, ta, b, tb);
        // The same map written differently: what the recogniser is given is not the constructed text.
        l = switch (r.nextInt(3)) {
            case 0 -> l;
            case 1 -> Canonicalize.canonicalize(l);
            default -> TileOracle.rewrite(r, l);
        };
        return new Sum(a, ta, b, tb, l, Tile.interleavedShape(ta, tb));
    }

    /** Every direct sum is recognised from either addend, and the recovered addend rebuilds L at every point. */
    @Test
    void everyDirectSumIsRecognisedAndTheAddendRebuildsItPointByPoint() {
        Property.forAll("is_direct_sum_right/left find the other addend", CASES, r -> {
            Sum s = randomSum(r);
            List<TreeSet<Point>> want = Oracle.table(s.l());
            Result<Layout> left = DirectSumOf.left(s.l(), s.interleaved(), s.b(), s.tb());
            assertTrue(left.isPresent(), s + ": " + (left.isPresent() ? "" : left.reason()));
            assertEquals(want, TileOracle.expected(left.get(), s.ta(), s.b(), s.tb(), false), s + " left " + left.get());
            Result<Layout> right = DirectSumOf.right(s.l(), s.interleaved(), s.a(), s.ta());
            assertTrue(right.isPresent(), s + ": " + (right.isPresent() ? "" : right.reason()));
            assertEquals(want, TileOracle.expected(s.a(), s.ta(), right.get(), s.tb(), false), s + " right " + right.get());
        });
    }

    /** On unrelated layouts every answer given is right by enumeration; an absent one says why. */
    @Test
    void answersOnUnrelatedLayoutsAreRightPointByPoint() {
        int[] found = {0};
        Property.forAll("is_direct_sum_right on random pairs", CASES, r -> {
            int rank = 1 + r.nextInt(2);
            Shape ta = TileOracle.shape(r, rank, 8);
            Shape tb = TileOracle.shape(r, rank, 8);
            Shape interleaved = Tile.interleavedShape(ta, tb);
            Layout l = TileOracle.grouped(r, interleaved);
            Layout b = r.nextBoolean() ? TileOracle.grouped(r, tb) : blocksOf(l, interleaved, 1);
            Result<Layout> left = DirectSumOf.left(l, interleaved, b, tb);
            if (left.isPresent()) {
                found[0]++;
                assertEquals(Oracle.table(l), TileOracle.expected(left.get(), ta, b, tb, false), l + " " + b);
            } else {
                assertTrue(!left.reason().isEmpty());
            }
            Layout a = r.nextBoolean() ? TileOracle.grouped(r, ta) : blocksOf(l, interleaved, 0);
            Result<Layout> right = DirectSumOf.right(l, interleaved, a, ta);
            if (right.isPresent()) {
                found[0]++;
                assertEquals(Oracle.table(l), TileOracle.expected(a, ta, right.get(), tb, false), l + " " + a);
            }
        });
        assertTrue(found[0] > CASES / 4, "answers found: " + found[0]);
    }

    /** L's blocks of one parity as a layout (no replicas or offset). */
    private static Layout blocksOf(Layout l, Shape interleaved, int parity) {
        Grouped g = Group.group(l, interleaved);
        List<Iter> shard = new java.util.ArrayList<>();
        for (int k = parity; k < interleaved.rank(); k += 2) {
            shard.addAll(g.block(k));
        }
        return Layout.of(shard, List.of(), java.util.Map.of());
    }

    /** Two different replica sets are both right addends: {0,1} + {0,2} = {0,1} + {0,1,2} = {0,1,2,3}. */
    @Test
    void theMissingReplicaSetNeedNotBeUnique() {
        Layout l = Layout.parse("S[4:1] + R[4:1@warpid]");
        Layout b = Layout.parse("S[2:1] + R[2:1@warpid]");
        Layout a = DirectSumOf.left(l, Shape.of(2, 2), b, Shape.of(2)).orElseThrow();
        assertTrue(Oracle.sameMap(DirectSum.directSum(a, Shape.of(2), b, Shape.of(2)), l), a.toString());
        assertEquals(Layout.parse("S[2:2] + R[3:1@warpid]"), a);
        Layout other = Layout.parse("S[2:2] + R[2:2@warpid]");
        assertTrue(Oracle.sameMap(DirectSum.directSum(other, Shape.of(2), b, Shape.of(2)), l), "{0,2} + {0,1} too");
        Layout b3 = Layout.parse("S[2:1] + R[3:1@warpid]");
        Layout a3 = DirectSumOf.left(l, Shape.of(2, 2), b3, Shape.of(2)).orElseThrow();
        assertTrue(Oracle.sameMap(DirectSum.directSum(a3, Shape.of(2), b3, Shape.of(2)), l), a3.toString());
    }

    @Test
    void appendixF4QuadrantOriginsAreTheLeftAddendOfTheContiguousMatrix() {
        Layout a = DirectSumOf.left(Layout.parse("S[16:1]"), Shape.of(2, 2, 2, 2), Layout.parse("S[(2,2):(4,1)]"),
                Shape.of(2, 2)).orElseThrow();
        assertTrue(Oracle.sameMap(a, Layout.parse("S[(2,2):(8,2)]")), a.toString());
        // A replica of B that L does not have: no left addend (TIRx ignores it and answers S[2:2]).
        Result<Layout> none = DirectSumOf.left(Layout.parse("S[4:1]"), Shape.of(2, 2), Layout.parse("S[2:1] + R[2:4@warpid]"),
                Shape.of(2));
        assertTrue(none.isEmpty());
    }

    @Test
    void badShapesAreRefusedNamingTheArgument() {
        Layout l = Layout.parse("S[16:1]");
        AxeException rank = assertThrows(AxeException.class,
                () -> DirectSumOf.left(l, Shape.of(4, 4), Layout.parse("S[4:1]"), Shape.of(2, 2)));
        assertTrue(rank.getMessage().contains("interleaved_shape (4,4) has rank 2, not twice the rank 2 of right_shape"),
                rank.getMessage());
        AxeException entry = assertThrows(AxeException.class,
                () -> DirectSumOf.right(l, Shape.of(4, 4), Layout.parse("S[2:1]"), Shape.of(2)));
        assertTrue(entry.getMessage().contains("entry 0 of interleaved_shape (4,4) is 4, but left_shape (2) has 2"),
                entry.getMessage());
        AxeException admit = assertThrows(AxeException.class,
                () -> DirectSumOf.left(l, Shape.of(4, 2), Layout.parse("S[2:1]"), Shape.of(2)));
        assertTrue(admit.getMessage().contains("sum layout S[16:1] (size 16) does not admit shape (4,2)"),
                admit.getMessage());
    }
}
