package org.axe4j.schedules;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reductions {@code sum}, {@code max}, {@code min} of a global or shared region (a local one at thread scope) on
 * target kind {@code cuda}, at thread, warp, warpgroup or CTA scope.
 *
 * <p>Each destination element is owned by one thread: the kept loops (destination and source refined together,
 * joined where they continue each other) are flattened into output indices o, and thread t of T computes outputs
 * {@code t, t + T, ...}, folding the reduced loops serially into a register before one store. No two threads
 * write one address, so no atomics and no barrier are needed inside the op. With fewer outputs than threads the
 * remaining threads idle (a tree over the reduced loops is not done). A destination with replicas is declined.
 */
public final class CudaReduceRule implements Rule {
    public static final CudaReduceRule INSTANCE = new CudaReduceRule();

    public String variant() {
        return "axe4j-cuda-reduce";
    }

    public int priority() {
        return 10;
    }

    public Map<String, Object> plan(Request call) {
        long threads = CudaRules.requireCudaScope(call);
        Operand dst = call.operand("dst");
        Operand src = call.operand("src0");
        CudaRules.requireStorage(call, List.of(dst, src));
        boolean[] reduced = ReduceRule.reducedDims(call, src);
        if (!dst.layout().replica().isEmpty()) {
            throw Declined.of("%s: destination layout %s has replicas", call.op(), dst.layout());
        }
        AffineAccess da = AffineAccess.of(dst);
        AffineAccess sa = AffineAccess.of(src);
        List<LoopNest.Loop> loops = ReduceRule.loops(call, dst, src, da, sa, reduced);
        List<LoopNest.Loop> kept = new ArrayList<>();
        List<LoopNest.Loop> folded = new ArrayList<>();
        for (LoopNest.Loop l : loops) {
            (l.reduces() ? folded : kept).add(l);
        }
        kept = CudaRules.order(LoopNest.coalesce(kept));
        folded = CudaRules.order(LoopNest.coalesce(folded));
        long outputs = kept.stream().mapToLong(LoopNest.Loop::extent).reduce(1, (a, b) -> a * b);
        long terms = folded.stream().mapToLong(LoopNest.Loop::extent).reduce(1, (a, b) -> a * b);
        List<Operand> ops = List.of(dst, src);
        Map<String, Object> plan = new LinkedHashMap<>();
        plan.put("kind", "cuda-reduce");
        plan.put("combine", call.op());
        plan.put("init", !call.flag("accum"));
        plan.put("threads", threads);
        plan.put("outputs", outputs);
        plan.put("rounds", (outputs + threads - 1) / threads);
        plan.put("kept", CudaRules.describe(kept, ops));
        plan.put("folded", CudaRules.describe(folded, ops));
        plan.put("access", ElementwiseRules.accessMap(ops, List.of(da, sa)));
        plan.put("notes", List.of(outputs + " output" + (outputs == 1 ? "" : "s") + " over " + threads + " thread"
                + (threads == 1 ? "" : "s") + ", " + terms + " terms each folded in a register"
                + (outputs < threads ? "; " + (threads - outputs) + " threads idle" : "")));
        return plan;
    }
}
