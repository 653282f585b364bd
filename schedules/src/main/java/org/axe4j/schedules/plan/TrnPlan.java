package org.axe4j.schedules.plan;

import java.util.List;
import java.util.Map;
import org.axe4j.schedules.plan.PlanParts.TrnLoop;

/**
 * A Trainium plan: one NKI {@code instruction} per tile of {@code inst} dims inside the {@code loops}; a matmul
 * names its {@code stationary} and {@code moving} operands and its {@code k_loop}; a PSUM accumulation has its
 * {@code memset} and {@code copy} out ({@code out} names where the result goes).
 */
@PlanKind("trn")
public record TrnPlan(String instruction, @MayBeAbsent String combine, @MayBeAbsent String stationary,
                      @MayBeAbsent String moving, @MayBeAbsent String out, List<TrnLoop> loops,
                      @MayBeAbsent TrnLoop kLoop, List<TrnLoop> inst, @MayBeAbsent List<TrnLoop> memset,
                      @MayBeAbsent List<TrnLoop> copy, @MayBeAbsent Map<String, Long> tile, List<String> notes)
        implements SchedulePlan {}
