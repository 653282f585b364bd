package org.axe4j.passes.transform;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.List;
import java.util.Random;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Point;
import org.axe4j.layout.Shape;
import org.axe4j.layout.SwizzledLayout;
import org.axe4j.passes.transform.CudaFragments.MmaRole;
import org.junit.jupiter.api.Test;

/**
 * The inferred register and shared layouts, checked element by element against the PTX formulas: for every element
 * of a tiled operand, (lane, register slot) must be where the instruction's fragment puts it inside its block, and
 * the block's registers the row-major block number times the fragment's register count.
 */
class CudaFragmentsTest {
    /** (lane, slot) of element (r, c) of a 16-bit mma fragment, from the PTX ISA's formulas (inverse form). */
    private static long[] mmaHolder(MmaRole role, long r, long c) {
        switch (role) {
            case A: { // row g + 8 (i/2 % 2), column 2t + i%2 + 8 (i/4)
                long g = r % 8;
                long t = (c % 8) / 2;
                long i = c % 2 + 2 * (r / 8) + 4 * (c / 8);
                return new long[] {4 * g + t, i};
            }
            case A_T:
                return mmaHolder(MmaRole.A, c, r);
            case B: { // row 2t + i%2 + 8 (i/2), column g
                long t = (r % 8) / 2;
                long i = r % 2 + 2 * (r / 8);
                return new long[] {4 * c + t, i};
            }
            case B_T:
                return mmaHolder(MmaRole.B, c, r);
            default: { // row g + 8 (i/2), column 2t + i%2
                long g = r % 8;
                long t = c / 2;
                return new long[] {4 * g + t, c % 2 + 2 * (r / 8)};
            }
        }
    }

    private static void assertOneHolder(List<Point> at, long lane, long slot, long warp, String what) {
        assertEquals(1, at.size(), what);
        Point p = at.get(0);
        assertEquals(lane, p.get("laneid"), what + " lane");
        assertEquals(slot, p.get("m"), what + " register");
        assertEquals(warp, p.get("wid_in_wg"), what + " warp");
    }

    @Test
    void mmaOperandsAreTheFragmentTiledRowMajorOverBlocks() {
        Random rng = new Random(7);
        for (int trial = 0; trial < 40; trial++) {
            MmaRole role = MmaRole.values()[trial % MmaRole.values().length];
            long br = 1 + rng.nextInt(4);
            long bc = 1 + rng.nextInt(4);
            long rows = br * role.rows;
            long cols = bc * role.cols;
            Layout l = CudaFragments.mma(role, rows, cols);
            long per = role.rows * role.cols / 32;
            for (long r = 0; r < rows; r++) {
                for (long c = 0; c < cols; c++) {
                    long[] h = mmaHolder(role, r % role.rows, c % role.cols);
                    long block = (r / role.rows) * bc + c / role.cols;
                    assertOneHolder(l.apply(Shape.of(rows, cols), r, c), h[0], block * per + h[1], 0,
                            role + " " + rows + "x" + cols + " element (" + r + ", " + c + ") of " + l);
                }
            }
        }
        assertNull(CudaFragments.mma(MmaRole.C, 24, 8), "24 rows are not a whole number of 16-row blocks");
    }

    @Test
    void wgmmaAccumulatorIsTheFragmentOfTheWidestInstructionTiledRowMajor() {
        for (long[] mn : new long[][] {{64, 8}, {64, 128}, {128, 64}, {192, 96}, {64, 512}, {128, 24}}) {
            long m = mn[0];
            long n = mn[1];
            long w = CudaFragments.wgmmaWidth(n);
            assertEquals(Math.min(n, 256), w, "widest width dividing " + n);
            Layout l = CudaFragments.wgmmaAccumulator(m, n);
            for (long r = 0; r < m; r++) {
                for (long c = 0; c < n; c++) {
                    long rr = r % 64;
                    long cc = c % w; // row 16 w + g + 8 (i/2 % 2), column 8 (i/4) + 2t + i%2
                    long warp = rr / 16;
                    long g = rr % 8;
                    long t = (cc % 8) / 2;
                    long i = cc % 2 + 2 * ((rr % 16) / 8) + 4 * (cc / 8);
                    long block = (r / 64) * (n / w) + c / w;
                    assertOneHolder(l.apply(Shape.of(m, n), r, c), 4 * g + t, block * (w / 2) + i, warp,
                            m + "x" + n + " element (" + r + ", " + c + ") of " + l);
                }
            }
        }
        assertEquals(200, CudaFragments.wgmmaWidth(600));
        assertEquals(0, CudaFragments.wgmmaWidth(4));
        assertNull(CudaFragments.wgmmaAccumulator(32, 64), "32 rows are not a 64-row wgmma block");
    }

    @Test
    void sharedTilesUseTheWidestSwizzleWhoseRowDividesK() {
        assertEquals(3, CudaFragments.widestSwizzle(128, 2));
        assertEquals(2, CudaFragments.widestSwizzle(96, 2));
        assertEquals(1, CudaFragments.widestSwizzle(48, 2));
        assertEquals(0, CudaFragments.widestSwizzle(24, 2));
        for (long[] rk : new long[][] {{64, 64}, {128, 128}, {64, 32}, {32, 16}, {64, 24}}) {
            long rows = rk[0];
            long k = rk[1];
            int mode = CudaFragments.widestSwizzle(k, 2);
            SwizzledLayout s = CudaFragments.sharedKMajor(rows, k, mode);
            long w = 8L << mode;
            long[] seen = new long[(int) (rows * k)];
            for (long r = 0; r < rows; r++) {
                for (long c = 0; c < k; c++) {
                    // unswizzled address: K blocks of w columns outermost, rows of w elements; core matrices for mode 0
                    long want = mode == 0 ? (r / 8) * 8 * k + (c / 8) * 64 + (r % 8) * 8 + c % 8
                            : (c / w) * rows * w + r * w + c % w;
                    long got = s.layout().apply(Shape.of(rows, k), r, c).get(0).get("m");
                    assertEquals(want, got, rows + "x" + k + " mode " + mode + " element (" + r + ", " + c + ")");
                    seen[(int) s.swizzle().apply(got)]++;
                }
            }
            for (long n : seen) {
                assertEquals(1, n, "the swizzled tile is a permutation of its " + rows * k + " elements");
            }
        }
    }

    @Test
    void stackedTilesPutEachStageOnWholeSwizzlePeriods() {
        SwizzledLayout tile = CudaFragments.sharedKMajor(64, 128, 3);
        SwizzledLayout stack = CudaFragments.stacked(new Long[] {3L, 2L}, tile, 64 * 128);
        assertEquals(tile.swizzle(), stack.swizzle());
        assertEquals(0, 64 * 128 % stack.swizzle().period(), "a stage is a whole number of swizzle periods");
        for (long s0 = 0; s0 < 3; s0++) {
            for (long s1 = 0; s1 < 2; s1++) {
                for (long r = 0; r < 64; r += 7) {
                    for (long c = 0; c < 128; c += 5) {
                        long want = (s0 * 2 + s1) * 64 * 128 + tile.layout().apply(Shape.of(64, 128), r, c).get(0).get("m");
                        assertEquals(want, stack.layout().apply(Shape.of(3, 2, 64, 128), s0, s1, r, c).get(0).get("m"));
                    }
                }
            }
        }
    }
}
