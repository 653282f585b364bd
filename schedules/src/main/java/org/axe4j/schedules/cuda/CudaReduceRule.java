package org.axe4j.schedules.cuda;

import java.util.ArrayList;
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
import org.axe4j.schedules.plan.CudaPlans;
import org.axe4j.schedules.plan.PlanParts;
import org.axe4j.schedules.plan.SchedulePlan;

/**
 * Reductions {@code sum}, {@code max}, {@code min} of a global or shared region (a local one at thread scope) on
 * target kind {@code cuda}, at thread, warp, warpgroup or CTA scope.
 *
 * <p>Each destination element is owned by one thread: the kept loops (destination and source refined together,
 * joined where they continue each other) are flattened into output indices o, and thread t of T computes outputs
 * {@code t, t + T, ...}, folding the reduced loops serially into a register before one store. No two threads
 * write one address, so no atomics and no barrier are needed inside the op. With fewer outputs than threads the
 * remaining threads idle. A destination with replicas is declined.
 *
 * <p>{@link #TREE}: when at most half the threads would have an output, each output gets a group of G threads (G
 * the largest power of two with G <= 32, G * outputs <= T and G <= the number of terms): thread t works on output
 * {@code t / G} (then {@code + T / G} per round) and folds terms {@code t % G, t % G + G, ...}; the G partial
 * values meet in log2(G) butterfly shuffles ({@code shfl.sync.bfly} with width G: groups are consecutive threads
 * inside one warp), and the group's first thread stores. Every thread of a warp takes part in each shuffle (those
 * without an output fold nothing and carry the identity), so the scope's thread count must be a multiple of 32.
 * At CTA scope G may exceed 32 (whole warps, G dividing T): each warp's butterfly leaves its partial in lane 0,
 * which writes it to a shared scratch of T / 32 values; after a CTA barrier the group's first warp reads its
 * G / 32 partials and combines them with a second butterfly (width G / 32). A barrier ends each round.
 */
final class CudaReduceRule implements Rule {
    public static final CudaReduceRule INSTANCE = new CudaReduceRule(false);
    public static final CudaReduceRule TREE = new CudaReduceRule(true);

    /** Lanes of a warp: the widest shuffle group. */
    static final long WARP = 32;

    private final boolean tree;

    private CudaReduceRule(boolean tree) {
        this.tree = tree;
    }

    public String variant() {
        return tree ? "axe4j-cuda-tree-reduce" : "axe4j-cuda-reduce";
    }

    public int priority() {
        return tree ? 11 : 10;
    }

    public SchedulePlan plan(Request call) {
        long threads = CudaRules.requireCudaScope(call);
        Operand dst = call.operand("dst");
        Operand src = call.operand("src0");
        CudaRules.requireStorage(call, List.of(dst, src));
        boolean[] reduced = ReductionLoops.reducedDims(call, src);
        if (!dst.layout().replica().isEmpty()) {
            throw Declined.of("%s: destination layout %s has replicas", call.op(), dst.layout());
        }
        AffineAccess da = AffineAccess.of(dst);
        AffineAccess sa = AffineAccess.of(src);
        List<LoopNest.Loop> loops = ReductionLoops.loops(call, dst, src, da, sa, reduced);
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
        long group = tree ? group(call, threads, outputs, terms) : 1;
        long perRound = threads / group;
        long rounds = (outputs + perRound - 1) / perRound;
        Map<String, PlanParts.Access> access = PlanAccesses.accessMap(ops, List.of(da, sa));
        if (tree) {
            return new CudaPlans.TreeReduce(call.op(), !call.flag("accum"), threads, outputs, rounds, group, terms,
                    group > WARP ? group / WARP : 1, CudaRules.describe(kept, ops), CudaRules.describe(folded, ops),
                    access, List.of(outputs + " output" + (outputs == 1 ? "" : "s") + " over " + perRound
                    + " groups of " + group + " threads; each thread folds " + (terms + group - 1) / group + " of "
                    + terms + " terms, then " + Long.numberOfTrailingZeros(group) + " butterfly shuffles"
                    + (group > WARP ? " (" + group / WARP + " warps per group meet through shared memory)" : "")));
        }
        return new CudaPlans.Reduce(call.op(), !call.flag("accum"), threads, outputs, rounds,
                CudaRules.describe(kept, ops), CudaRules.describe(folded, ops), access,
                List.of(outputs + " output" + (outputs == 1 ? "" : "s") + " over " + threads + " thread"
                + (threads == 1 ? "" : "s") + ", " + terms + " terms each folded in a register"
                + (outputs < threads ? "; " + (threads - outputs) + " threads idle" : "")));
    }

    /** See the class comment: threads per output, at least 2, or a decline naming why a tree does not pay. */
    static long group(Request call, long threads, long outputs, long terms) {
        if (threads % WARP != 0) {
            throw Declined.of("%s at %s scope: %d threads is not a whole number of warps; the shuffle tree needs "
                    + "every lane of each warp", call.op(), call.scope(), threads);
        }
        // at CTA scope a group may span whole warps, which meet through shared memory after a CTA barrier
        long widest = call.scope().equals("cta") ? threads : WARP;
        long group = 1;
        while (group * 2 <= widest && group * 2 * outputs <= threads && group * 2 <= terms
                && (group * 2 <= WARP || threads % (group * 2) == 0)) {
            group *= 2;
        }
        if (group < 2) {
            throw Declined.of("%s: %d outputs of %d terms over %d threads: no two threads share an output (one "
                    + "thread per output is %s)", call.op(), outputs, terms, threads, "axe4j-cuda-reduce");
        }
        return group;
    }
}
