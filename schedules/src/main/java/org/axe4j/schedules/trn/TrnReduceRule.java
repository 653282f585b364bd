package org.axe4j.schedules.trn;

import java.util.List;
import org.axe4j.schedules.Declined;
import org.axe4j.schedules.Operand;
import org.axe4j.schedules.Request;
import org.axe4j.schedules.Rule;
import org.axe4j.schedules.plan.SchedulePlan;

/**
 * {@code sum/max/min} of an on-chip tile along one dim on Trainium: along F, {@code nisa.tensor_reduce}, one
 * instruction per P tile, when the reduced dim is one F run of the source ({@link TrnMapPlan}); along P, a sum on
 * the TensorEngine against a ones column ({@link TrnPartitionSum}; max/min along P are declined with the way
 * round: copy to a layout with that dim on F). {@code accum} is declined (a second instruction and a scratch tile).
 */
final class TrnReduceRule implements Rule {
    public static final TrnReduceRule INSTANCE = new TrnReduceRule();

    private TrnReduceRule() {}

    public String variant() {
        return "axe4j-trn-reduce";
    }

    public int priority() {
        return 100;
    }

    public SchedulePlan plan(Request call) {
        TrnTiles.requireTrn(call);
        Operand dst = call.operand("dst");
        Operand src = call.operand("src0");
        long[] axes = call.longsParam("axes");
        if (axes.length != 1) {
            throw Declined.of("%s: reduces %d axes; tensor_reduce takes one (the F run)", call.op(), axes.length);
        }
        if (call.flag("accum")) {
            throw Declined.of("%s: accum=True needs a scratch tile and a second instruction; not done", call.op());
        }
        int axis = (int) axes[0];
        if (dst.extent()[axis] != 1) {
            throw Declined.of("%s: the destination %s keeps extent %d in the reduced dim %d", call.op(), dst,
                    dst.extent()[axis], axis);
        }
        for (Operand o : List.of(dst, src)) {
            if (!TrnTiles.onChip(call, o)) {
                throw Declined.of("%s: %s is in %s; tensor_reduce reads and writes SBUF/PSUM", call.op(), o,
                        TrnTiles.storage(call, o));
            }
        }
        if (src.extent()[axis] > 1 && TrnTiles.run(src, src.start(), axis, TrnTiles.P, 128).length() > 1) {
            return TrnPartitionSum.plan(call, dst, src, axis);
        }
        return TrnMapPlan.plan(call, List.of(dst, src), axis, true, "tensor_reduce").withCombine(call.op());
    }
}
