package org.axe4j.passes.transform;

import org.axe4j.layout.Layout;
import org.axe4j.layout.Shape;
import org.axe4j.layout.SwizzledLayout;
import org.axe4j.layout.Tile;
import org.axe4j.targets.MatrixFragments;

/**
 * The register and shared layouts the CUDA matrix rules accept, built for whole operand tiles from the instruction
 * fragments and shared tiles of {@link MatrixFragments} (where each is written once, with its PTX formula).
 * A whole operand is {@code O (x) F} ({@link Tile#tile}): F tiled by the row-major register layout O over the
 * blocks, so block (i, j) holds its {@code span(F)} registers from slot {@code O(i, j) span(F)} on.
 */
final class CudaFragments {
    private CudaFragments() {}

    static final Layout MMA_A = MatrixFragments.MMA_A;
    static final Layout MMA_A_T = MatrixFragments.MMA_A_T;
    static final Layout MMA_B = MatrixFragments.MMA_B;
    static final Layout MMA_B_T = MatrixFragments.MMA_B_T;
    static final Layout MMA_C = MatrixFragments.MMA_C;

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
        return MatrixFragments.wgmmaAccumulator(n);
    }

    /** The widest instruction width (multiple of 8, at most 256) that divides n; 0 when none. */
    static long wgmmaWidth(long n) {
        return MatrixFragments.wgmmaWidth(n);
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

    /** The swizzle mode of the widest swizzle row that divides k elements ({@link MatrixFragments#widestSwizzle}). */
    static int widestSwizzle(long k, int elementBytes) {
        return MatrixFragments.widestSwizzle(k, elementBytes);
    }

    /** A K-major (rows x k) 16-bit tile: swizzled rows for mode 1..3, core matrices for mode 0. */
    static SwizzledLayout sharedKMajor(long rows, long k, int mode) {
        return MatrixFragments.sharedTileKMajor(rows, k, mode);
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
