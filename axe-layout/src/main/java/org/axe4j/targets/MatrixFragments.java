package org.axe4j.targets;

import org.axe4j.layout.Layout;
import org.axe4j.layout.Shape;
import org.axe4j.layout.Swizzle;
import org.axe4j.layout.SwizzledLayout;

/**
 * The CUDA matrix instructions' operand fragments and shared-memory tiles as Axe layouts, written once: which lane
 * ({@code laneid}), warp of the warpgroup ({@code wid_in_wg}) and register slot ({@code m}, in elements) hold each
 * element of the instruction's tile. Lane l is {@code 4 g + t} (PTX's groupID g = l / 4, threadID_in_group t = l % 4).
 *
 * <ul>
 *   <li>{@code mma.m16n8k16} (16-bit A/B, f32 C/D), PTX ISA "Matrix Fragments for mma.m16n8k16":
 *   A (16x16) element i of a lane is at row {@code g + 8 (i / 2 % 2)}, column {@code 2 t + i % 2 + 8 (i / 4)};
 *   B (16x8, K x N) element i at row {@code 2 t + i % 2 + 8 (i / 2)}, column g; C/D (16x8) element i at row
 *   {@code g + 8 (i / 2)}, column {@code 2 t + i % 2}. A transposed operand (A stored K x M, B stored N x K) is the
 *   same fragment with the coordinates swapped.</li>
 *   <li>{@code wgmma.m64nNk16} accumulator (64xN, f32): warp w of the warpgroup holds rows 16w..16w+15 as N/8
 *   side-by-side copies of the mma C fragment: element i at row {@code 16 w + g + 8 (i / 2 % 2)}, column
 *   {@code 8 (i / 4) + 2 t + i % 2}.</li>
 *   <li>Shared operands of wgmma, tcgen05 and TMA boxes: K-major 16-bit tiles, rows of W = 16, 32, 64 elements (32,
 *   64, 128 bytes) under {@code Swizzle<mode,3,3>} (mode 1, 2, 3), K blocks of W outermost; without a swizzle
 *   (mode 0), 8x8 core matrices (K-adjacent ones next, then 8-row groups).</li>
 * </ul>
 * The CUDA rules ({@code schedules}), the layout inference and fragment check ({@code axe-passes}) read them here.
 */
public final class MatrixFragments {
    private MatrixFragments() {}

    /** Threads of a warp. */
    public static final long LANES = 32;

    /** mma.m16n8k16 A fragment over (16, 16): 8 elements per lane. */
    public static final Layout MMA_A = Layout.parse("S[(2,8,2,4,2):(2,4@laneid,4,1@laneid,1)]");
    public static final Shape MMA_A_SHAPE = Shape.of(16, 16);

    /** The A fragment of a transposed operand, over (K, M) = (16, 16): {@code MMA_A_T(k, m) = MMA_A(m, k)}. */
    public static final Layout MMA_A_T = Layout.parse("S[(2,4,2,2,8):(4,1@laneid,1,2,4@laneid)]");

    /** mma.m16n8k16 B fragment over (16, 8), rows K, columns N: 4 elements per lane. */
    public static final Layout MMA_B = Layout.parse("S[(2,4,2,8):(2,1@laneid,1,4@laneid)]");
    public static final Shape MMA_B_SHAPE = Shape.of(16, 8);

    /** The B fragment of a transposed operand, over (N, K) = (8, 16): {@code MMA_B_T(n, k) = MMA_B(k, n)}. */
    public static final Layout MMA_B_T = Layout.parse("S[(8,2,4,2):(4@laneid,2,1@laneid,1)]");
    public static final Shape MMA_B_T_SHAPE = Shape.of(8, 16);

    /** mma.m16n8k* C/D fragment over (16, 8): 4 elements per lane. */
    public static final Layout MMA_C = Layout.parse("S[(2,8,4,2):(2,4@laneid,1@laneid,1)]");
    public static final Shape MMA_C_SHAPE = Shape.of(16, 8);

    /** wgmma.m64nNk16 accumulator over (64, n), n a multiple of 8 from 8 to 256: n / 2 elements per thread. */
    public static Layout wgmmaAccumulator(long n) {
        if (n < 8 || n > 256 || n % 8 != 0) {
            throw new IllegalArgumentException("wgmma accumulator: N = " + n + " is not a multiple of 8 in [8, 256]");
        }
        return Layout.parse("S[(4,2,8," + n / 8 + ",4,2):(1@wid_in_wg,2,4@laneid,4,1@laneid,1)]");
    }

    public static Shape wgmmaAccumulatorShape(long n) {
        return Shape.of(64, n);
    }

    /** The widest wgmma N (a multiple of 8, at most 256) that divides n; 0 when none. */
    public static long wgmmaWidth(long n) {
        for (long w = Math.min(256, n - n % 8); w >= 8; w -= 8) {
            if (n % w == 0) {
                return w;
            }
        }
        return 0;
    }

    /**
     * The swizzle mode (3, 2, 1: 128, 64, 32-byte rows) of the widest swizzle row that divides {@code k} elements of
     * {@code elementBytes} bytes, or 0 (no swizzle) when none does.
     */
    public static int widestSwizzle(long k, int elementBytes) {
        for (int mode = 3; mode >= 1; mode--) {
            long w = (16L << mode) / elementBytes;
            if (k % w == 0) {
                return mode;
            }
        }
        return 0;
    }

    /**
     * A K-major (rows x k) 16-bit operand tile in shared memory as wgmma and tcgen05 read it: {@code mode} 0 is
     * 8x8 core matrices (64 contiguous elements, K-adjacent ones next, then 8-row groups); modes 1, 2, 3 are rows
     * of W = 16, 32, 64 elements (32, 64, 128 bytes) under {@code Swizzle<mode,3,3>}, K blocks of W outermost.
     */
    public static SwizzledLayout sharedTileKMajor(long rows, long k, int mode) {
        if (rows % 8 != 0 || k % 8 != 0 || mode < 0 || mode > 3) {
            throw new IllegalArgumentException("shared K-major tile: rows " + rows + " and k " + k
                    + " must be multiples of 8 and the mode 0..3, not " + mode);
        }
        if (mode == 0) {
            return new SwizzledLayout(Swizzle.IDENTITY, Layout.parse(
                    "S[(" + rows / 8 + ",8," + k / 8 + ",8):(" + 8 * k + ",8,64,1)]"));
        }
        long w = 8L << mode;
        if (k % w != 0 && k > w) {
            throw new IllegalArgumentException("shared K-major tile: k " + k + " is not a multiple of the " + 2 * w
                    + "-byte swizzle row (" + w + " elements)");
        }
        Layout tile = k <= w ? Layout.parse("S[(" + rows + "," + k + "):(" + w + ",1)]")
                : Layout.parse("S[(" + rows + "," + k / w + "," + w + "):(" + w + "," + rows * w + ",1)]");
        return new SwizzledLayout(new Swizzle(mode, 3, 3), tile);
    }
}
