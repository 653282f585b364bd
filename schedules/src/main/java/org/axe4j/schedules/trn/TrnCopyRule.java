package org.axe4j.schedules.trn;

import java.util.List;
import org.axe4j.schedules.Declined;
import org.axe4j.schedules.Operand;
import org.axe4j.schedules.Request;
import org.axe4j.schedules.Rule;
import org.axe4j.schedules.plan.SchedulePlan;

/**
 * {@code copy} on Trainium: HBM to SBUF is one DMA {@code nl.load} per tile, SBUF to HBM one {@code nl.store},
 * SBUF/PSUM to SBUF/PSUM one {@code nisa.tensor_copy} (which may convert the dtype). The tile is
 * {@link TrnMapPlan}'s. A copy whose partition dim differs between source and destination is a transpose through
 * the TensorEngine ({@link TrnTransposePlan}, with an identity from the call's workspace).
 */
final class TrnCopyRule implements Rule {
    public static final TrnCopyRule INSTANCE = new TrnCopyRule();

    private TrnCopyRule() {}

    public String variant() {
        return "axe4j-trn-copy";
    }

    public int priority() {
        return 100;
    }

    public SchedulePlan plan(Request call) {
        TrnTiles.requireTrn(call);
        Operand dst = call.operand("dst");
        Operand src = call.operand("src0");
        String ds = TrnTiles.storage(call, dst);
        String ss = TrnTiles.storage(call, src);
        String instruction;
        if (ss.equals("global") && ds.equals("trn.sbuf")) {
            instruction = "load";
        } else if (ss.equals("trn.sbuf") && ds.equals("global")) {
            instruction = "store";
        } else if (TrnTiles.onChip(call, src) && TrnTiles.onChip(call, dst)) {
            instruction = "tensor_copy";
        } else {
            throw Declined.of("copy: %s (%s) to %s (%s): DMA moves HBM <-> SBUF, the engines SBUF/PSUM <-> SBUF/PSUM",
                    src, ss, dst, ds);
        }
        if (!instruction.equals("tensor_copy") && !dst.dtype().equals(src.dtype())) {
            throw Declined.of("copy: %s is %s but %s is %s; DMA does not convert (copy on chip to convert)", src,
                    src.dtype(), dst, dst.dtype());
        }
        if (instruction.equals("tensor_copy") && partitionDim(src) != partitionDim(dst)) {
            return TrnTransposePlan.plan(call, dst, src);
        }
        return TrnMapPlan.plan(call, List.of(dst, src), -1, instruction.equals("tensor_copy"), instruction);
    }

    /** The loop dim with the longest P run (-1 when none is longer than 1). */
    private static int partitionDim(Operand o) {
        int best = -1;
        long len = 1;
        for (int d : o.loopDims()) {
            long r = TrnTiles.run(o, o.start(), d, TrnTiles.P, 128).length();
            if (r > len) {
                best = d;
                len = r;
            }
        }
        return best;
    }
}
