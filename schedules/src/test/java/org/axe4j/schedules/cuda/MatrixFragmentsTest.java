package org.axe4j.schedules.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Point;
import org.axe4j.layout.Result;
import org.axe4j.layout.Shape;
import org.axe4j.layout.TileOf;
import org.axe4j.targets.MatrixFragments;
import org.junit.jupiter.api.Test;

/**
 * The fragment layouts against the PTX ISA's fragment tables: for every thread and register slot the table gives
 * (row, column); enumerating the layout over its whole tile must give back exactly that table, one holder per
 * element.
 */
class MatrixFragmentsTest {
    private static final Axis LANE = Axis.of("laneid");
    private static final Axis WARP = Axis.of("wid_in_wg");

    /** (row, column) of element i of lane l, as the PTX ISA tables state them. */
    interface Table {
        long[] at(long warp, long lane, long i);
    }

    @Test
    void mmaAFragmentIsThePtxTable() {
        check(MatrixFragments.MMA_A, MatrixFragments.MMA_A_SHAPE, 1, 8, (w, l, i) -> {
            long g = l / 4;
            long t = l % 4;
            long row = (i == 0 || i == 1 || i == 4 || i == 5) ? g : g + 8;
            long col = i < 4 ? t * 2 + (i & 1) : t * 2 + (i & 1) + 8;
            return new long[] {row, col};
        });
    }

    @Test
    void mmaBFragmentIsThePtxTable() {
        check(MatrixFragments.MMA_B, MatrixFragments.MMA_B_SHAPE, 1, 4, (w, l, i) -> {
            long row = i < 2 ? (l % 4) * 2 + (i & 1) : (l % 4) * 2 + (i & 1) + 8;
            return new long[] {row, l / 4};
        });
    }

    @Test
    void transposedFragmentsAreTheTransposes() {
        for (long r = 0; r < 16; r++) {
            for (long c = 0; c < 16; c++) {
                assertEquals(MatrixFragments.MMA_A.apply(MatrixFragments.MMA_A_SHAPE, r, c),
                        MatrixFragments.MMA_A_T.apply(MatrixFragments.MMA_A_SHAPE, c, r));
                if (c < 8) {
                    assertEquals(MatrixFragments.MMA_B.apply(MatrixFragments.MMA_B_SHAPE, r, c),
                            MatrixFragments.MMA_B_T.apply(MatrixFragments.MMA_B_T_SHAPE, c, r));
                }
            }
        }
    }

    @Test
    void mmaCFragmentIsThePtxTable() {
        check(MatrixFragments.MMA_C, MatrixFragments.MMA_C_SHAPE, 1, 4, (w, l, i) -> {
            long row = i < 2 ? l / 4 : l / 4 + 8;
            return new long[] {row, (l % 4) * 2 + (i & 1)};
        });
    }

    @Test
    void wgmmaAccumulatorIsThePtxTableForEveryN() {
        for (long n = 8; n <= 256; n += 8) {
            check(MatrixFragments.wgmmaAccumulator(n), MatrixFragments.wgmmaAccumulatorShape(n), 4, n / 2, (w, l, i) -> {
                long row = 16 * w + l / 4 + 8 * ((i % 4) / 2);
                long col = (i / 4) * 8 + (l % 4) * 2 + (i & 1);
                return new long[] {row, col};
            });
        }
        assertThrows(IllegalArgumentException.class, () -> MatrixFragments.wgmmaAccumulator(12));
        assertThrows(IllegalArgumentException.class, () -> MatrixFragments.wgmmaAccumulator(264));
    }

    /**
     * A and C are tiles of the ldmatrix 8x8 fragment, with outer layouts on registers only (in units of the atom's
     * span, 2 registers), and so is B stored N x K; B as K x N is the transposed fragment (ldmatrix .trans).
     */
    @Test
    void fragmentsAreTilesOfTheLdmatrixAtom() {
        for (Object[] c : List.of(new Object[] {MatrixFragments.MMA_A, MatrixFragments.MMA_A_SHAPE, "S[(2,2):(1,2)]"},
                new Object[] {MatrixFragments.MMA_C, MatrixFragments.MMA_C_SHAPE, "S[(2,1):(1,1)]"},
                new Object[] {MatrixFragments.MMA_B_T, MatrixFragments.MMA_B_T_SHAPE, "S[(1,2):(1,1)]"})) {
            Layout layout = (Layout) c[0];
            Shape shape = (Shape) c[1];
            Result<Layout> m = TileOf.outer(layout, shape, CudaMatrixRules.ATOM, CudaMatrixRules.ATOM_SHAPE);
            assertTrue(m.isPresent(), layout + ": " + m.reason());
            Shape outerShape = Shape.of(shape.dim(0) / 8, shape.dim(1) / 8);
            for (long i = 0; i < outerShape.dim(0); i++) {
                for (long j = 0; j < outerShape.dim(1); j++) {
                    assertEquals(Layout.parse((String) c[2]).apply(outerShape, i, j), m.get()
                            .apply(outerShape, i, j), layout + " block " + i + "," + j);
                }
            }
        }
    }

    /** Enumerates the layout over its tile: each element has one holder (warp, lane, slot) and the table agrees. */
    private static void check(Layout layout, Shape shape, long warps, long slots, Table table) {
        Map<String, long[]> held = new TreeMap<>();
        for (long r = 0; r < shape.dim(0); r++) {
            for (long c = 0; c < shape.dim(1); c++) {
                List<Point> points = layout.apply(shape, r, c);
                assertEquals(1, points.size(), layout + " at (" + r + "," + c + ")");
                Point p = points.get(0);
                long w = p.get(WARP);
                long l = p.get(LANE);
                long i = p.get(Axis.M);
                assertTrue(w < warps && l < 32 && i < slots, layout + " at (" + r + "," + c + ") -> " + p);
                long[] expected = table.at(w, l, i);
                assertEquals(List.of(r, c), List.of(expected[0], expected[1]),
                        layout + ": warp " + w + " lane " + l + " slot " + i);
                held.put(w + "/" + l + "/" + i, new long[] {r, c});
            }
        }
        assertEquals(warps * 32 * slots, held.size(), layout + ": every (warp, lane, slot) holds one element");
    }
}
