package org.axe4j.passes.transform;

import org.axe4j.layout.Layout;
import org.axe4j.layout.Shape;
import org.axe4j.layout.Swizzle;
import org.axe4j.layout.SwizzledLayout;
import org.axe4j.layout.Tile;

/**
 * The register and shared layouts the CUDA matrix rules accept, built for whole operand tiles.
 *
 * <p>Fragments (PTX ISA, lane l = 4 g + t, register slot i, in elements):
 * <ul>
 *   <li>{@code mma.m16n8k16} A (16x16): element i at row {@code g + 8 (i / 2 % 2)}, column {@code 2t + i % 2 + 8 (i / 4)};
 *   B (16x8, K x N): row {@code 2t + i % 2 + 8 (i / 2)}, column g; C/D (16x8): row {@code g + 8 (i / 2)}, column
 *   {@code 2t + i % 2}. A transposed operand (A stored K x M, B stored N x K) uses the same fragment with the
 *   coordinates swapped.</li>
 *   <li>{@code wgmma.m64nNk16} accumulator (64 x N): warp w of the warpgroup holds rows 16w..16w+15, element i at row
 *   {@code 16 w + g + 8 (i / 2 % 2)}, column {@code 8 (i / 4) + 2t + i % 2}.</li>
 * </ul>
 * A whole operand is {@code O (x) F} ({@link Tile#tile}): F tiled by the row-major register layout O over the
 * blocks, so block (i, j) holds its {@code span(F)} registers from slot {@code O(i, j) span(F)} on.
 *
 * <p>Shared operands of wgmma (and TMA boxes) are K-major 16-bit tiles: rows of W = 16, 32, 64 elements (32, 64,
 * 128 bytes) under {@code Swizzle<mode,3,3>} (mode 1, 2, 3), K blocks of W outermost; without a swizzle, 8x8 core
 * matrices (K-adjacent ones next, then 8-row groups).
 */
final class CudaFragments {
    private CudaFragments() {}

    static final Layout MMA_A = Layout.parse("S[(2,8,2,4,2):(2,4@laneid,4,1@laneid,1)]");
    static final Layout MMA_A_T = Layout.parse("S[(2,4,2,2,8):(4,1@laneid,1,2,4@laneid)]");
    static final Layout MMA_B = Layout.parse("S[(2,4,2,8):(2,1@laneid,1,4@laneid)]");
    static final Layout MMA_B_T = Layout.parse("S[(8,2,4,2):(4@laneid,2,1@laneid,1)]");
    static final Layout MMA_C = Layout.parse("S[(2,8,4,2):(2,4@laneid,1@laneid,1)]");

    /** The operand of a warp {@code gemm} in one role. */
    enum MmaRole {
        A(MMA_A, 16, 16), A_T(MMA_A_T, 16, 16), B(MMA_B, 16, 8), B_T(MMA_B_T, 8, 16), C(MMA_C, 16, 8);

        final Layout fragment;
        final long rows;
        final long cols;

        MmaRole(Layout fragment, long rows, long cols) {
            this.fragment = fragment;
            this.rows = rows;
            this.cols = cols;
        }
    }

    /** The fragment of {@code role} tiled row-major over a (rows x cols) register tile; null when it does not divide. */
    static Layout mma(MmaRole role, long rows, long cols) {
        return tiled(role.fragment, role.rows, role.cols, rows, cols);
    }

    /** The wgmma m64nNk16 accumulator fragment over (64, n), n a multiple of 8 in [8, 256]. */
    static Layout wgmmaAtom(long n) {
        return Layout.parse("S[(4,2,8," + n / 8 + ",4,2):(1@wid_in_wg,2,4@laneid,4,1@laneid,1)]");
    }

    /** The widest instruction width (multiple of 8, at most 256) that divides n; 0 when none. */
    static long wgmmaWidth(long n) {
        for (long w = Math.min(256, n - n % 8); w >= 8; w -= 8) {
            if (n % w == 0) {
                return w;
            }
        }
        return 0;
    }

    /** The wgmma accumulator over (m, n): the (64, width) fragment tiled row-major; null when m or n do not fit. */
    static Layout wgmmaAccumulator(long m, long n) {
        long w = wgmmaWidth(n);
        return m % 64 != 0 || w == 0 ? null : tiled(wgmmaAtom(w), 64, w, m, n);
    }

    private static Layout tiled(Layout atom, long ar, long ac, long rows, long cols) {
        if (rows % ar != 0 || cols % ac != 0) {
            return null;
        }
        long br = rows / ar;
        long bc = cols / ac;
        Layout outer = Layout.parse("S[(" + br + "," + bc + "):(" + bc + ",1)]");
        return Tile.tile(outer, Shape.of(br, bc), atom, Shape.of(ar, ac));
    }

    /**
     * The swizzle mode (3, 2, 1: 128, 64, 32-byte rows) of the widest swizzle row that divides {@code k} elements of
     * {@code elementBytes} bytes, or 0 (no swizzle) when none does.
     */
    static int widestSwizzle(long k, int elementBytes) {
        for (int mode = 3; mode >= 1; mode--) {
            long w = (16L << mode) / elementBytes;
            if (k % w == 0) {
                return mode;
            }
        }
        return 0;
    }

    /** A K-major (rows x k) 16-bit tile: swizzled rows for mode 1..3, core matrices for mode 0. */
    static SwizzledLayout sharedKMajor(long rows, long k, int mode) {
        if (mode == 0) {
            return new SwizzledLayout(Swizzle.IDENTITY, Layout.parse(
                    "S[(" + rows / 8 + ",8," + k / 8 + ",8):(" + 8 * k + ",8,64,1)]"));
        }
        long w = 8L << mode;
        Layout tile = k == w ? Layout.parse("S[(" + rows + "," + k + "):(" + w + ",1)]")
                : Layout.parse("S[(" + rows + "," + k / w + "," + w + "):(" + w + "," + rows * w + ",1)]");
        return new SwizzledLayout(new Swizzle(mode, 3, 3), tile);
    }

    /**
     * Tiles of {@code tileSize} elements stacked over {@code lead} (row-major, outermost): element
     * {@code (s..., r, c)} at {@code flat(s) * tileSize + tile(r, c)} before the swizzle. Each tile is a whole number
     * of swizzle periods (rows a multiple of 8, K of the row), so every tile keeps the swizzle pattern.
     */
    static SwizzledLayout stacked(Long[] lead, SwizzledLayout tile, long tileSize) {
        java.util.List<org.axe4j.layout.Iter> iters = new java.util.ArrayList<>();
        long stride = tileSize;
        for (int d = lead.length - 1; d >= 0; d--) {
            iters.add(0, org.axe4j.layout.Iter.of(lead[d], stride));
            stride *= lead[d];
        }
        iters.addAll(tile.layout().shard());
        return new SwizzledLayout(tile.swizzle(), Layout.shard(iters.toArray(new org.axe4j.layout.Iter[0])));
    }
}
