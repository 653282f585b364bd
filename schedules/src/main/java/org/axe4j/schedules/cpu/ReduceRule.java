package org.axe4j.schedules.cpu;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.axe4j.schedules.AffineAccess;
import org.axe4j.schedules.Declined;
import org.axe4j.schedules.LoopNest;
import org.axe4j.schedules.Operand;
import org.axe4j.schedules.PlanAccesses;
import org.axe4j.schedules.ReductionLoops;
import org.axe4j.schedules.Request;
import org.axe4j.schedules.Rule;
import org.axe4j.schedules.plan.CpuPlans;
import org.axe4j.schedules.plan.PlanParts;
import org.axe4j.schedules.plan.SchedulePlan;

/**
 * Reductions {@code dst[c'] = op_{c : c without axes = c'} src[c]} (sum, max, min) over an affine loop nest.
 *
 * <p>The source's non-reduced non-unit extents must equal the destination's non-unit extents. Spatial loops are
 * refined jointly for destination and source; reduced loops move the destination by 0 and are marked as
 * reductions, so they are never parallel. The vector loop is a spatial one where both move by 0 or 1; failing
 * that, a reduced loop where the source moves by 1 ({@code vector_reduce}: up to {@link #ACCUMULATORS} vectors of
 * partial results, one per lane, halved pairwise after the reduced loops). A destination with replicas is declined (an
 * accumulator read-modify-write would have to keep every copy in step).
 */
final class ReduceRule implements Rule {
    public static final ReduceRule INSTANCE = new ReduceRule();

    /**
     * Vector registers of partial results along a contiguous reduced loop: each add then waits on the one four
     * steps back, not on the previous one (an add takes 4 cycles; two can start per cycle).
     */
    static final int ACCUMULATORS = 4;

    public String variant() {
        return "axe4j-cpu-reduce";
    }

    public int priority() {
        return 10;
    }

    public SchedulePlan plan(Request call) {
        Rule.requireCpuThread(call);
        Operand dst = call.operand("dst");
        Operand src = call.operand("src0");
        boolean[] reduced = ReductionLoops.reducedDims(call, src);
        if (!dst.layout().replica().isEmpty()) {
            throw Declined.of("%s: destination layout %s has replicas", call.op(), dst.layout());
        }
        AffineAccess da = AffineAccess.of(dst);
        AffineAccess sa = AffineAccess.of(src);
        List<LoopNest.Loop> loops = ReductionLoops.loops(call, dst, src, da, sa, reduced);
        LoopNest nest = LoopNest.schedule(loops, new boolean[] {true, true},
                ElementwiseRules.vectors(call, List.of(dst, src), ACCUMULATORS), src.elements(), true);
        List<LoopNest.Loop> planned = nest.loops();
        LoopNest.Loop last = planned.isEmpty() ? null : planned.get(planned.size() - 1);
        return new CpuPlans.Reduce(call.op(), !call.flag("accum"),
                last != null && last.reduces() && last.kind().equals("vectorized"),
                nest.describe(List.of("dst", "src0")),
                PlanAccesses.accessMap(List.of(dst, src), List.of(da, sa)), nest.tail(), nest.notes());
    }

    /**
     * The reduction for any memory/cpu layouts and regions: serial loops over the kept dims, then over the reduced
     * ones, every element addressed from its layout's digits; the destination's replicas are all stored.
     */
    public static final Rule DIGITS = new Rule() {
        public String variant() {
            return "axe4j-cpu-reduce-digits";
        }

        public int priority() {
            return 5;
        }

        public SchedulePlan plan(Request call) {
            Rule.requireCpuThread(call);
            Operand dst = call.operand("dst");
            Operand src = call.operand("src0");
            AffineAccess.requireMemoryOnly(dst);
            AffineAccess.requireMemoryOnly(src);
            boolean[] reduced = ReductionLoops.reducedDims(call, src);
            List<Integer> kept = ReductionLoops.keptDims(call, src, dst, reduced);
            int[] dstDims = dst.loopDims();
            List<PlanParts.DimLoop> spatial = new ArrayList<>();
            for (int k = 0; k < kept.size(); k++) {
                Map<String, Integer> dims = new LinkedHashMap<>();
                dims.put("dst", dstDims[k]);
                dims.put("src0", kept.get(k));
                spatial.add(new PlanParts.DimLoop(src.extent()[kept.get(k)], dims));
            }
            List<PlanParts.DimLoop> reducedLoops = new ArrayList<>();
            for (int d = 0; d < reduced.length; d++) {
                if (reduced[d] && src.extent()[d] != 1) {
                    reducedLoops.add(new PlanParts.DimLoop(src.extent()[d], Map.of("src0", d)));
                }
            }
            Map<String, PlanParts.DigitOperand> operands = new LinkedHashMap<>();
            operands.put("dst", PlanAccesses.digitOperand(dst));
            operands.put("src0", PlanAccesses.digitOperand(src));
            return new CpuPlans.ReduceDigits(call.op(), !call.flag("accum"), spatial, reducedLoops, operands,
                    List.of("serial kept loops around serial reduced loops; addresses from the layouts' digits"));
        }
    };
}
