package org.axe4j.schedules;

import org.axe4j.layout.Layout;
import org.axe4j.layout.Shape;

/**
 * Operand fragments of the CUDA matrix instructions as Axe layouts: which lane ({@code laneid}), warp of the
 * warpgroup ({@code wid_in_wg}) and register slot ({@code m}, in elements) hold each element of the instruction's
 * tile. Lane l is {@code 4 g + t} (PTX's groupID g = l / 4 and threadID_in_group t = l % 4).
 *
 * <ul>
 *   <li>{@code mma.m16n8k16} (16-bit A/B, f32 C/D), PTX ISA "Matrix Fragments for mma.m16n8k16":
 *   A (16x16) element i of a lane is at row {@code g + 8 * (i / 2 % 2)}, column {@code 2 t + i % 2 + 8 * (i / 4)};
 *   B (16x8, K x N) element i at row {@code 2 t + i % 2 + 8 * (i / 2)}, column g; C/D (16x8) element i at row
 *   {@code g + 8 * (i / 2)}, column {@code 2 t + i % 2}.</li>
 *   <li>{@code wgmma.m64nNk16} accumulator (64xN, f32): warp w of the warpgroup holds rows 16w..16w+15 as N/8
 *   side-by-side copies of the mma C fragment: element i at row {@code 16 w + g + 8 * (i / 2 % 2)}, column
 *   {@code 8 (i / 4) + 2 t + i % 2}.</li>
 * </ul>
 *
 * A (2x2 blocks, column blocks outer) and C (2x1) are tiles of the {@code ldmatrix} 8x8 fragment
 * {@link CudaMatrixRules#ATOM}, which is what lets the copy rules feed them with ldmatrix; B, with lanes along N,
 * is the transposed fragment ({@code ldmatrix .trans}).
 */
public final class MmaAtoms {
    private MmaAtoms() {}

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

    /**
     * A K-major (rows x k) 16-bit operand tile in shared memory as wgmma and tcgen05 read it: {@code mode} 0 is
     * 8x8 core matrices (64 contiguous elements, K-adjacent ones next, then 8-row groups); modes 1, 2, 3 are rows
     * of W = 16, 32, 64 elements (32, 64, 128 bytes) under {@code Swizzle<mode,3,3>}, K blocks of W outermost.
     */
    public static org.axe4j.layout.SwizzledLayout sharedTileKMajor(long rows, long k, int mode) {
        if (rows % 8 != 0 || k % 8 != 0 || mode < 0 || mode > 3) {
            throw new IllegalArgumentException("shared K-major tile: rows " + rows + " and k " + k
                    + " must be multiples of 8 and the mode 0..3, not " + mode);
        }
        if (mode == 0) {
            return new org.axe4j.layout.SwizzledLayout(org.axe4j.layout.Swizzle.IDENTITY, Layout.parse(
                    "S[(" + rows / 8 + ",8," + k / 8 + ",8):(" + 8 * k + ",8,64,1)]"));
        }
        long w = 8L << mode;
        if (k % w != 0 && k > w) {
            throw new IllegalArgumentException("shared K-major tile: k " + k + " is not a multiple of the " + 2 * w
                    + "-byte swizzle row (" + w + " elements)");
        }
        Layout tile = k <= w ? Layout.parse("S[(" + rows + "," + k + "):(" + w + ",1)]")
                : Layout.parse("S[(" + rows + "," + k / w + "," + w + "):(" + w + "," + rows * w + ",1)]");
        return new org.axe4j.layout.SwizzledLayout(new org.axe4j.layout.Swizzle(mode, 3, 3), tile);
    }
}
