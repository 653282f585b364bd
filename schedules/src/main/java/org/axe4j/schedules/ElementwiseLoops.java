package org.axe4j.schedules;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

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

    /** Ops defined on floating-point values only: transcendental functions and their kin. */
    static final Set<String> FLOAT_ONLY = Set.of("exp", "exp2", "log2", "sqrt", "reciprocal", "silu");

    /** The tensor operands, destination first, after the op-specific checks shared by both rules. */
    public static List<Operand> checkedOperands(Request call) {
        if (call.flag("bias_scale")) {
            throw Declined.of("%s with bias/scale operands is not handled by the element-wise rules", call.op());
        }
        List<Operand> ops = call.operands();
        if (ops.isEmpty() || !ops.get(0).role().equals("dst")) {
            throw Declined.of("%s: the first operand must be the destination", call.op());
        }
        for (Operand o : ops) {
            ElementType type = o.elementType();
            if (!type.wholeBytes()) {
                throw Declined.of("%s: %s of %s packs several elements in a byte; the element-wise rules address"
                        + " whole bytes", call.op(), type.name(), o.role());
            }
            if (FLOAT_ONLY.contains(call.op()) && !type.isFloat()) {
                throw Declined.of("%s on %s %s: %s needs floating-point operands (cast to float32 first)", call.op(),
                        type.name(), o.role(), call.op());
            }
            if (type.isFloat() && type.bits() <= 8 && !call.op().equals("copy")) {
                throw Declined.of("%s on %s %s: the element-wise rules compute in float16, bfloat16, float32 and"
                        + " float64; %s values are only copied (cast them to one of those first)", call.op(),
                        type.name(), o.role(), type.name());
            }
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
