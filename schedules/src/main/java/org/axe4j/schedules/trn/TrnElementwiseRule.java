package org.axe4j.schedules.trn;

import java.util.ArrayList;
import java.util.List;
import org.axe4j.schedules.Declined;
import org.axe4j.schedules.Operand;
import org.axe4j.schedules.Request;
import org.axe4j.schedules.Rule;
import org.axe4j.schedules.plan.SchedulePlan;
import org.axe4j.schedules.plan.TrnPlan;

/**
 * Element-wise ops of on-chip tiles on Trainium, one instruction per {@link TrnMapPlan} tile:
 * {@code exp} is {@code nisa.activation} (optional per-partition {@code bias} tile and constant {@code scale});
 * {@code add/sub/mul/maximum/minimum} of two tiles {@code nisa.tensor_tensor}, of a tile and a constant or a
 * per-partition column (extent 1 along F) {@code nisa.tensor_scalar}; {@code reciprocal} {@code nisa.reciprocal};
 * {@code fill/zero} a memset.
 */
final class TrnElementwiseRule implements Rule {
    public static final TrnElementwiseRule INSTANCE = new TrnElementwiseRule();
    static final List<String> OPS = List.of("exp", "add", "sub", "mul", "maximum", "minimum", "reciprocal", "fill",
            "zero");

    private TrnElementwiseRule() {}

    public String variant() {
        return "axe4j-trn-elementwise";
    }

    public int priority() {
        return 100;
    }

    public SchedulePlan plan(Request call) {
        TrnTiles.requireTrn(call);
        List<Operand> ops = new ArrayList<>();
        ops.add(call.operand("dst"));
        call.find("src0").ifPresent(ops::add);
        call.find("src1").ifPresent(ops::add);
        call.find("bias").ifPresent(ops::add);
        for (Operand o : ops) {
            if (!TrnTiles.onChip(call, o)) {
                throw Declined.of("%s: %s is in %s; the engines read and write SBUF/PSUM only", call.op(), o,
                        TrnTiles.storage(call, o));
            }
        }
        String instruction = switch (call.op()) {
            case "exp" -> "activation";
            case "reciprocal" -> "reciprocal";
            case "fill", "zero" -> "memset";
            default -> ops.size() == 3 && sameExtents(ops.get(1), ops.get(2)) ? "tensor_tensor" : "tensor_scalar";
        };
        if (call.op().equals("exp") && call.params().has("scale") && call.params().get("scale").isJsonNull()) {
            throw Declined.of("exp: the scale is not a compile-time constant");
        }
        TrnPlan plan = TrnMapPlan.plan(call, ops, -1, true, instruction);
        if (instruction.equals("tensor_scalar") && ops.size() == 3 && !sameExtents(ops.get(0), ops.get(1))) {
            throw Declined.of("%s: the first source %s is the broadcast one; tensor_scalar takes the tile first",
                    call.op(), ops.get(1));
        }
        return plan;
    }

    private static boolean sameExtents(Operand a, Operand b) {
        return java.util.Arrays.equals(a.extent(), b.extent());
    }
}
