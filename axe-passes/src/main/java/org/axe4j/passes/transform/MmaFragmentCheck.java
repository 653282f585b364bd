package org.axe4j.passes.transform;

import java.util.ArrayList;
import java.util.List;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Result;
import org.axe4j.layout.Shape;
import org.axe4j.layout.TileOf;
import org.axe4j.passes.TirxLayout;
import org.axe4j.passes.transform.CudaFragments.MmaRole;
import org.axe4j.passes.transform.TirFunction.Call;
import org.axe4j.passes.transform.TirFunction.Region;

/**
 * The VerifyLayouts rule {@code mma-fragment}: register operands of the CUDA tensor-core instructions must be tiles
 * (tile-of) of the instruction's fragment layout, so that each block of the operand is one fragment in every lane:
 * a warp {@code gemm} on register tiles over lanes ({@code mma.m16n8k16}: D and C the C fragment, A and B theirs,
 * transposed per {@code transA}/{@code transB}), and the register accumulator of a {@code gemm_async}
 * ({@code wgmma.m64nNk16}). Operands that are not register tiles over lanes, or only a part of their buffer, are left
 * to the dispatch rules.
 */
final class MmaFragmentCheck {
    private MmaFragmentCheck() {}

    static final Axis LANE = Axis.of("laneid");
    static final Axis WARP_IN_WARPGROUP = Axis.of("wid_in_wg");

    /** One violation: the operand's layout text and the message. */
    record Finding(String layout, String message) {}

    static List<Finding> check(Call c, boolean transA, boolean transB) {
        List<Finding> found = new ArrayList<>();
        if (c.op().equals("gemm") && c.regions().size() >= 3) {
            String[] roles = {"D", "A", "B", "C"};
            MmaRole[] fragments = {MmaRole.C, transA ? MmaRole.A_T : MmaRole.A, transB ? MmaRole.B_T : MmaRole.B,
                MmaRole.C};
            List<Region> regions = c.regions();
            for (Region r : regions) {
                if (registerTile(r) == null) {
                    return found;   // not a warp register gemm: the CPU rules, or shared operands
                }
            }
            for (int i = 0; i < Math.min(4, regions.size()); i++) {
                MmaRole role = fragments[i];
                verify(found, roles[i], regions.get(i), role.fragment, role.rows, role.cols, "mma.m16n8k16");
            }
        } else if (c.op().equals("gemm_async") && !c.regions().isEmpty()) {
            Region acc = c.regions().get(0);
            if (registerTile(acc) == null || acc.extents().length != 2) {
                return found;
            }
            long width = CudaFragments.wgmmaWidth(acc.extents()[1]);
            if (width > 0) {
                verify(found, "C", acc, CudaFragments.wgmmaAtom(width), 64, width, "wgmma.m64n" + width + "k16");
            }
        }
        return found;
    }

    private static void verify(List<Finding> found, String role, Region r, Layout fragment, long rows, long cols,
            String instruction) {
        TirxLayout tl = registerTile(r);
        Shape shape = Shape.of(r.buffer().shape()[0], r.buffer().shape()[1]);
        Result<Layout> m = TileOf.outer(tl.layout(), shape, fragment, Shape.of(rows, cols));
        if (!m.isPresent()) {
            found.add(new Finding(tl.toString(), "operand " + role + " " + r + ": its layout is not a tile of the "
                    + instruction + " " + role + " fragment " + fragment + " over (" + rows + ", " + cols + "): "
                    + m.reason()));
        }
    }

    /** The layout of a whole local buffer that places elements on lanes (a warp's register tile), else null. */
    private static TirxLayout registerTile(Region r) {
        if (!r.buffer().scope().equals("local") || !r.buffer().constantShape() || !r.constantExtents()
                || r.buffer().shape().length != 2) {
            return null;
        }
        for (int k = 0; k < 2; k++) {
            if (r.begins()[k] == null || r.begins()[k] != 0 || !r.extents()[k].equals(r.buffer().shape()[k])) {
                return null;
            }
        }
        TirxLayout tl = VerifyLayouts.layoutOf(r.buffer());
        if (tl == null) {
            return null;
        }
        boolean lanes = tl.layout().axes().contains(LANE) || tl.layout().axes().contains(WARP_IN_WARPGROUP);
        return lanes ? tl : null;
    }
}
