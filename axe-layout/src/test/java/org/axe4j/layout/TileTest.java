package org.axe4j.layout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Random;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

class TileTest {
    @Test
    void tileMapsEveryCoordinateToTheScaledOuterPlusTheInner() {
        Property.forAll("tile(A,B)(z) == { a ⊙ span(B) + b : a in A(x), b in B(y) }", r -> {
            int rank = 1 + r.nextInt(3);
            Shape ta = TileOracle.shape(r, rank, 12);
            Shape tb = TileOracle.shape(r, rank, 12);
            Layout a = TileOracle.grouped(r, ta);
            Layout b = TileOracle.grouped(r, tb);
            Layout l = Tile.tile(a, ta, b, tb);
            Shape t = Tile.tiledShape(ta, tb);
            assertTrue(l.admits(t), l + " by " + t);
            List<TreeSet<Point>> expected = TileOracle.expected(a, ta, b, tb, true);
            assertEquals(expected, Oracle.table(l), a + " (x) " + b + " = " + l);
            // The public forward map agrees at every coordinate.
            for (long z = 0; z < t.size(); z++) {
                assertEquals(List.copyOf(expected.get((int) z)), l.apply(t, t.unflatten(z)));
            }
            assertTrue(Group.tryGroup(l, Tile.interleavedShape(ta, tb)).isPresent(), l + " is grouped by the interleaving");
        });
    }

    @Test
    void tileFailsExactlyWhenAFactorCannotBeGrouped() {
        int[] built = {0};
        Property.forAll("tile(A,B) exists iff A and B are separable over their shapes", r -> {
            Layout a = small(r);
            Layout b = small(r);
            int rank = 1 + r.nextInt(3);
            Shape ta = shapeOfRank(r, a.size(), rank);
            Shape tb = shapeOfRank(r, b.size(), rank);
            boolean groupable = GroupTest.separable(a, ta) && GroupTest.separable(b, tb);
            if (!groupable) {
                AxeException e = assertThrows(AxeException.class, () -> Tile.tile(a, ta, b, tb));
                assertEquals(AxeException.Kind.NOT_REPRESENTABLE, e.kind());
                assertTrue(e.getMessage().startsWith("tile: "), e.getMessage());
                return;
            }
            built[0]++;
            assertEquals(TileOracle.expected(a, ta, b, tb, true), Oracle.table(Tile.tile(a, ta, b, tb)));
        });
        assertTrue(built[0] > Property.CASES / 10 && built[0] < Property.CASES, "built " + built[0]);
    }

    /** A general random layout (up to 3 shard iters, replicas, offset), at most 128 points, so tiles stay enumerable. */
    static Layout small(Random r) {
        while (true) {
            Layout l = new Layout(RandomLayouts.shard(r, 3), r.nextBoolean() ? List.of() : RandomLayouts.replica(r),
                    RandomLayouts.offset(r));
            if (l.size() * l.replicaCount() <= 128) {
                return l;
            }
        }
    }

    /** A factorisation of {@code size} of exactly {@code rank} dimensions (trailing ones allowed). */
    static Shape shapeOfRank(Random r, long size, int rank) {
        Shape s = RandomLayouts.shapeOf(r, size, rank);
        long[] dims = new long[rank];
        java.util.Arrays.fill(dims, 1);
        for (int k = 0; k < s.rank(); k++) {
            dims[k] = s.dim(k);
        }
        return Shape.of(dims);
    }

    @Test
    void blockLayoutOfA2x2GridOf3x4Tiles() {
        // span(B) = 1 + 2*4 + 3*1 = 12, so the grid's strides (2,1) become (24,12).
        Layout l = Tile.tile(Layout.parse("S[(2,2):(2,1)]"), Shape.of(2, 2), Layout.parse("S[(3,4):(4,1)]"), Shape.of(3, 4));
        assertEquals(Layout.parse("S[(2,3,2,4):(24,4,12,1)]"), l);
        // Element (4,5) is in tile (1,1) at (1,1): 24 + 12 + 4 + 1 = 41.
        assertEquals(List.of(Point.of("m", 41)), l.apply(Shape.of(6, 8), 4, 5));
    }

    @Test
    void tensorCoreTileIsTwoWarpsOfTheWarpAtom() {
        // The warp atom: 8 rows on lanes (stride 4), 8 columns as 4 lanes x 2 registers.
        Layout atom = Layout.parse("S[(8,4,2):(4@laneid,1@laneid,1@reg)]");
        Layout warps = Layout.parse("S[2:1@warpid] + R[2:4@warpid] + 5@warpid");
        Layout l = Tile.tile(warps, Shape.of(1, 2), atom, Shape.of(8, 8));
        // span(atom) = 32 on laneid, 2 on reg, 1 on warpid: the warp digits are not stretched.
        assertEquals(Layout.parse(PaperExamplesTest.TENSOR_CORE), l);
        assertEquals(List.of(Point.of("laneid", 8, "reg", 1, "warpid", 6), Point.of("laneid", 8, "reg", 1, "warpid", 10)),
                l.apply(Shape.of(8, 16), 2, 9));
    }

    @Test
    void innerSpanScalesOuterReplicasAndOffset() {
        // span(B) on m is 1 + 3*2 + 1*5 = 12 (shard and replica both count); A's replica 3 and offset 1 scale to 36 and 12.
        Layout b = Layout.parse("S[4:2] + R[2:5] + 7");
        Layout a = Layout.parse("S[2:1@laneid] + R[2:3] + 1");
        Layout l = Tile.tile(a, Shape.of(2), b, Shape.of(4));
        assertEquals(Layout.parse("S[(2,4):(1@laneid,2)] + R[(2,2):(36,5)] + 19"), l);
    }

    @Test
    void errorsNameTheOperationTheOperandsAndTheRule() {
        Layout a = Layout.parse("S[(2,2):(2,1)]");
        Layout b = Layout.parse("S[(3,4):(4,1)]");
        AxeException rank = assertThrows(AxeException.class, () -> Tile.tile(a, Shape.of(4), b, Shape.of(3, 4)));
        assertEquals(AxeException.Kind.INVALID, rank.kind());
        assertEquals("tile: outer shape (4) has rank 1 but inner shape (3,4) has rank 2 (outer S[(2,2):(2,1)],"
                + " inner S[(3,4):(4,1)]); the ranks must be equal", rank.getMessage());
        AxeException admitted = assertThrows(AxeException.class, () -> Tile.tile(a, Shape.of(2, 3), b, Shape.of(3, 4)));
        assertEquals("tile: outer layout S[(2,2):(2,1)] (size 4) does not admit shape (2,3) (size 6)", admitted.getMessage());
        AxeException grouping = assertThrows(AxeException.class,
                () -> Tile.tile(Layout.parse("S[(3,2):(1,3)]"), Shape.of(2, 3), b, Shape.of(3, 4)));
        assertEquals(AxeException.Kind.NOT_REPRESENTABLE, grouping.kind());
        assertEquals("tile: outer layout cannot be grouped: layout S[(3,2):(1,3)] cannot be grouped by shape (2,3):"
                + " dimension 0 (extent 2) would end inside iter (3,1), whose extent 3 is neither a divisor nor a"
                + " multiple of the 2 still needed", grouping.getMessage());
    }
}
