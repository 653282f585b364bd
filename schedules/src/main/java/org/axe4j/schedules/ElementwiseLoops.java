package org.axe4j.schedules;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The checks and the affine loop nest of an element-wise op {@code dst[c] = f(src_i[c])}, shared by the CPU and
 * CUDA rules: the operands' non-unit region extents agree, and each region dim becomes the common refinement of
 * the operands' pieces on it.
 */
public final class ElementwiseLoops {
    private ElementwiseLoops() {}

    /**
     * The loops of an element-wise op over affine operands: per region dim, the common refinement of the operands'
     * pieces ({@link LoopNest#refine}); declined when the destination maps several region elements to one address.
     */
    public static List<LoopNest.Loop> affineLoops(Request call, List<Operand> ops, List<AffineAccess> access) {
        List<LoopNest.Loop> loops = new ArrayList<>();
        int[][] dims = new int[ops.size()][];
        for (int o = 0; o < ops.size(); o++) {
            dims[o] = ops.get(o).loopDims();
        }
        long[] extents = ops.get(0).loopExtents();
        for (int k = 0; k < extents.length; k++) {
            List<List<AffineAccess.Piece>> pieces = new ArrayList<>();
            for (int o = 0; o < ops.size(); o++) {
                pieces.add(access.get(o).dims().get(dims[o][k]));
            }
            loops.addAll(LoopNest.refine(pieces, extents[k], false, call.op() + " dim " + k));
        }
        for (LoopNest.Loop l : loops) {
            if (l.strides()[0] == 0 && l.extent() > 1) {
                throw Declined.of("%s: destination layout %s maps %d region elements to one address",
                        call.op(), ops.get(0).layout(), l.extent());
            }
        }
        return loops;
    }

    /** The tensor operands, destination first, after the op-specific checks shared by both rules. */
    public static List<Operand> checkedOperands(Request call) {
        if (call.flag("bias_scale")) {
            throw Declined.of("%s with bias/scale operands is not handled by the element-wise rules", call.op());
        }
        List<Operand> ops = call.operands();
        if (ops.isEmpty() || !ops.get(0).role().equals("dst")) {
            throw Declined.of("%s: the first operand must be the destination", call.op());
        }
        Operand dst = ops.get(0);
        long[] extents = dst.loopExtents();
        for (Operand o : ops.subList(1, ops.size())) {
            if (!Arrays.equals(o.loopExtents(), extents)) {
                throw Declined.of("%s: region extents %s of %s differ from %s of the destination (unit dims dropped)",
                        call.op(), Arrays.toString(o.loopExtents()), o.role(), Arrays.toString(extents));
            }
            if (call.op().equals("copy") && !o.dtype().equals(dst.dtype())) {
                throw Declined.of("copy: dtypes %s -> %s differ; cast converts", o.dtype(), dst.dtype());
            }
        }
        return ops;
    }
}
