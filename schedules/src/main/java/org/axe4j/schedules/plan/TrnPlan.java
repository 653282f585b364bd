package org.axe4j.schedules.plan;

import java.util.List;
import org.axe4j.schedules.plan.PlanParts.TrnLoop;

/**
 * A Trainium plan: one NKI {@code instruction} per tile of {@code inst} dims inside the {@code loops}; a matmul
 * names its {@code stationary} and {@code moving} operands, its {@code k_loop} and its {@code tile}; a PSUM
 * accumulation has its {@code memset} and {@code copy} out ({@code out} names where the result goes); a
 * tensor_reduce its {@code combine}.
 */
@PlanKind("trn")
public record TrnPlan(String instruction, @MayBeAbsent String combine, @MayBeAbsent String stationary,
                      @MayBeAbsent String moving, @MayBeAbsent String out, List<TrnLoop> loops,
                      @MayBeAbsent TrnLoop kLoop, List<TrnLoop> inst, @MayBeAbsent List<TrnLoop> memset,
                      @MayBeAbsent List<TrnLoop> copy, @MayBeAbsent Tile tile, List<String> notes)
        implements SchedulePlan {

    /** An element-wise or reduce plan: loops around one instruction's (P, F) dims. */
    public static TrnPlan map(String instruction, List<TrnLoop> loops, List<TrnLoop> inst, List<String> notes) {
        return new TrnPlan(instruction, null, null, null, null, loops, null, inst, null, null, null, notes);
    }

    /** This plan reducing with {@code combine} (tensor_reduce's op). */
    public TrnPlan withCombine(String op) {
        return new TrnPlan(instruction, op, stationary, moving, out, loops, kLoop, inst, memset, copy, tile, notes);
    }

    /** The matmul tile: stationary free, contraction (K on partitions) and moving free extents. */
    public record Tile(long stationary, long k, long moving) {}
}
