package org.axe4j.layout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

class DirectSumTest {
    @Test
    void directSumMapsEveryCoordinateToTheOuterPlusTheInner() {
        Property.forAll("directSum(A,B)(z) == { a + b : a in A(x), b in B(y) }", r -> {
            int rank = 1 + r.nextInt(3);
            Shape ta = TileOracle.shape(r, rank, 12);
            Shape tb = TileOracle.shape(r, rank, 12);
            Layout a = TileOracle.grouped(r, ta);
            Layout b = TileOracle.grouped(r, tb);
            Layout l = DirectSum.directSum(a, ta, b, tb);
            assertTrue(l.admits(Tile.tiledShape(ta, tb)));
            List<TreeSet<Point>> expected = TileOracle.expected(a, ta, b, tb, false);
            assertEquals(expected, Oracle.table(l), a + " (+) " + b + " = " + l);
        });
    }

    /** Appendix F.4: the quadrant origins (+) a 2x2 block of a width-4 matrix is the contiguous 4x4 matrix. */
    @Test
    void appendixF4DirectSumBuildsWhatNoTileCan() {
        Layout origins = Layout.parse("S[(2,2):(8,2)]"); // 0, 2, 8, 10
        Layout block = Layout.parse("S[(2,2):(4,1)]");   // 0, 1, 4, 5; span 1 + 4 + 1 = 6
        Shape two = Shape.of(2, 2);
        Shape t = Shape.of(4, 4);
        Layout sum = DirectSum.directSum(origins, two, block, two);
        assertEquals(Layout.parse("S[(2,2,2,2):(8,4,2,1)]"), sum);
        Layout contiguous = Layout.parse("S[(4,4):(4,1)]");
        assertTrue(Oracle.sameMap(sum, contiguous), "enumerates 0..15 in order");
        for (long x = 0; x < 16; x++) {
            assertEquals(List.of(Point.of("m", x)), sum.apply(x));
        }
        // No outer tiles the block into it: the recognizer and the enumeration say so.
        assertTrue(TileOf.outer(contiguous, t, block, two).isEmpty());
        assertEquals(TileOracle.Verdict.NONE, TileOracle.outerExists(contiguous, t, block, two));
        // The paper's argument, checked over every outer S[(2,2):(u,v)] + o with |u|,|v|,|o| <= 16:
        // every image of A' (x) B is congruent mod 6 to 0, 1, 4 or 5, while the contiguous layout reaches 2 and 3.
        for (long u = -16; u <= 16; u++) {
            for (long v = -16; v <= 16; v++) {
                for (long o = -16; o <= 16; o += 4) {
                    Layout outer = Layout.parse("S[(2,2):(" + u + "," + v + ")] + " + o);
                    Layout tiled = Tile.tile(outer, two, block, two);
                    for (TreeSet<Point> set : Oracle.table(tiled)) {
                        long residue = Math.floorMod(set.first().get(Axis.M), 6);
                        assertTrue(residue == 0 || residue == 1 || residue == 4 || residue == 5);
                    }
                    assertFalse(Oracle.sameMap(tiled, contiguous), outer.toString());
                }
            }
        }
    }

    @Test
    void directSumErrorsNameTheOperation() {
        AxeException rank = assertThrows(AxeException.class,
                () -> DirectSum.directSum(Layout.parse("S[4:1]"), Shape.of(4), Layout.parse("S[4:1]"), Shape.of(2, 2)));
        assertEquals(AxeException.Kind.INVALID, rank.kind());
        assertTrue(rank.getMessage().startsWith("directSum: outer shape (4) has rank 1 but inner shape (2,2) has rank 2"),
                rank.getMessage());
        AxeException grouping = assertThrows(AxeException.class, () -> DirectSum.directSum(
                Layout.parse("S[6:1]"), Shape.of(2, 3), Layout.parse("S[(3,2):(1,3)]"), Shape.of(2, 3)));
        assertEquals(AxeException.Kind.NOT_REPRESENTABLE, grouping.kind());
        assertTrue(grouping.getMessage().startsWith("directSum: inner layout cannot be grouped: "), grouping.getMessage());
    }
}
