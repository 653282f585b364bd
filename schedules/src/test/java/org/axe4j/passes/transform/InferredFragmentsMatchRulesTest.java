package org.axe4j.passes.transform;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.axe4j.layout.Equivalence;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Shape;
import org.axe4j.layout.SwizzledLayout;
import org.axe4j.layout.TileOf;
import org.axe4j.passes.transform.CudaFragments.MmaRole;
import org.axe4j.targets.MatrixFragments;
import org.junit.jupiter.api.Test;

/**
 * InferLayouts' CUDA layouts (axe-passes, which cannot depend on this module) against the atoms the dispatch rules
 * match ({@link MatrixFragments}): the same fragments as maps, inferred operands tiles of them (what {@code CudaMmaRule}
 * and {@code CudaWgmmaRule} test with tile-of), and the same swizzled shared tiles.
 */
class InferredFragmentsMatchRulesTest {
    @Test
    void mmaFragmentsAreTheRulesAtoms() {
        assertTrue(Equivalence.equivalent(CudaFragments.MMA_A, MatrixFragments.MMA_A));
        assertTrue(Equivalence.equivalent(CudaFragments.MMA_A_T, MatrixFragments.MMA_A_T));
        assertTrue(Equivalence.equivalent(CudaFragments.MMA_B, MatrixFragments.MMA_B));
        assertTrue(Equivalence.equivalent(CudaFragments.MMA_B_T, MatrixFragments.MMA_B_T));
        assertTrue(Equivalence.equivalent(CudaFragments.MMA_C, MatrixFragments.MMA_C));
        for (MmaRole role : MmaRole.values()) {
            for (long br = 1; br <= 3; br++) {
                for (long bc = 1; bc <= 3; bc++) {
                    Shape shape = Shape.of(br * role.rows, bc * role.cols);
                    Layout l = CudaFragments.mma(role, shape.dim(0), shape.dim(1));
                    assertTrue(TileOf.outer(l, shape, role.fragment, Shape.of(role.rows, role.cols))
                            .isPresent(), role + " over " + shape + ": " + l);
                }
            }
        }
    }

    @Test
    void wgmmaAccumulatorIsTheRulesAtomTiled() {
        for (long n = 8; n <= 256; n += 8) {
            assertTrue(Equivalence.equivalent(CudaFragments.wgmmaAtom(n), MatrixFragments.wgmmaAccumulator(n)), "N=" + n);
        }
        for (long[] mn : new long[][] {{64, 64}, {128, 256}, {192, 48}, {128, 512}}) {
            long w = CudaFragments.wgmmaWidth(mn[1]);
            Layout l = CudaFragments.wgmmaAccumulator(mn[0], mn[1]);
            assertTrue(TileOf.outer(l, Shape.of(mn[0], mn[1]), MatrixFragments.wgmmaAccumulator(w),
                    MatrixFragments.wgmmaAccumulatorShape(w)).isPresent(), mn[0] + "x" + mn[1] + ": " + l);
        }
    }

    @Test
    void sharedTilesAreTheRulesKMajorTiles() {
        for (long[] rk : new long[][] {{64, 64}, {128, 128}, {64, 32}, {32, 16}, {64, 24}, {256, 192}}) {
            int mode = CudaFragments.widestSwizzle(rk[1], 2);
            SwizzledLayout mine = CudaFragments.sharedKMajor(rk[0], rk[1], mode);
            SwizzledLayout rules = MatrixFragments.sharedTileKMajor(rk[0], rk[1], mode);
            assertEquals(rules.swizzle(), mine.swizzle());
            assertTrue(Equivalence.equivalent(mine.layout(), rules.layout()), rk[0] + "x" + rk[1] + " mode " + mode);
        }
    }
}
