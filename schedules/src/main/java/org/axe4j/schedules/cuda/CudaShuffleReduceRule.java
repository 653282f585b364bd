package org.axe4j.schedules.cuda;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.axe4j.schedules.Declined;
import org.axe4j.schedules.LoopNest;
import org.axe4j.schedules.Operand;
import org.axe4j.schedules.ReductionLoops;
import org.axe4j.schedules.Request;
import org.axe4j.schedules.Rule;
import org.axe4j.schedules.plan.CudaPlans;
import org.axe4j.schedules.plan.PlanParts;
import org.axe4j.schedules.plan.SchedulePlan;

/**
 * Reductions {@code sum}, {@code max}, {@code min} of a register tile into a register tile at warp scope (and at
 * warpgroup or CTA scope when the reduced axes stay within each warp's lanes), by warp shuffles.
 *
 * <p>Source and destination are {@link RegisterTile partitions}. On the kept dims the two are refined together:
 * a thread digit of one must be the same thread digit of the other (each thread keeps its outputs), register
 * digits become the output loops. On the reduced dims the source's register digits become fold loops (each thread
 * folds its own slots into one value), and its thread digits {@code (t / tau) mod n} must lie within a warp's lanes
 * ({@code tau * n <= 32}, powers of two): they give the butterfly masks {@code tau, 2 tau, ..., tau n / 2}, one
 * {@code shfl.sync.bfly} each, after which every lane of the group holds the whole result. The destination must
 * hold each output on exactly those lanes: its replica digits (or digits it leaves unnamed) are the source's
 * reduced lane digits plus the source's own replicas. Reduced digits on warpid (or above lane 31) are declined:
 * combining warps needs shared memory. {@code accum} combines the destination's old value after the shuffles.
 */
final class CudaShuffleReduceRule implements Rule {
    public static final CudaShuffleReduceRule INSTANCE = new CudaShuffleReduceRule();

    static final long WARP = 32;

    public String variant() {
        return "axe4j-cuda-shuffle-reduce";
    }

    public int priority() {
        return 11;
    }

    public SchedulePlan plan(Request call) {
        long threads = CudaRules.requireCudaScope(call);
        if (call.scope().equals("thread")) {
            throw Declined.of("%s at thread scope: nothing to shuffle (axe4j-cuda-reduce)", call.op());
        }
        Operand dst = call.operand("dst");
        Operand src = call.operand("src0");
        for (Operand o : List.of(dst, src)) {
            String scope = call.storage(o.role());
            if (!scope.equals("local") && o == dst && call.storage(src.role()).equals("local")) {
                throw Declined.of("%s: %s is in %s memory; shuffles reduce a register tile into a register tile: "
                        + "reduce into a local tile of shape %s on the source's threads (its kept dims on the same "
                        + "thread and register digits, the reduced lanes replicated with R[...]), then copy that "
                        + "tile to %s", call.op(), o, scope, java.util.Arrays.toString(o.extent()), o.name());
            }
            if (!scope.equals("local")) {
                throw Declined.of("%s: %s is in %s memory; shuffles reduce a register tile into a register tile",
                        call.op(), o, scope);
            }
        }
        boolean[] reduced = ReductionLoops.reducedDims(call, src);
        List<Integer> keptDims = ReductionLoops.keptDims(call, src, dst, reduced);
        RegisterTile st = RegisterTile.of(call, src, threads);
        st.requireCovered(call);
        RegisterTile dt = RegisterTile.of(call, dst, threads);
        for (RegisterTile.Guard g : st.guards) {
            if (g.tau() < WARP) {
                throw Declined.of("%s: the region of %s leaves some lanes of a warp out (lane digit (t / %d) mod %d "
                        + "in [%d, %d)); every lane takes part in the shuffles", call.op(), src, g.tau(), g.mod(),
                        g.lo(), g.lo() + g.count());
            }
        }
        if (!new HashSet<>(st.guards).equals(new HashSet<>(dt.guards))) {
            throw Declined.of("%s: the regions of %s and %s leave different threads out (%s / %s)", call.op(), src,
                    dst, st.guards, dt.guards);
        }
        List<LoopNest.Loop> kept = new ArrayList<>();
        int[] dstDims = dst.loopDims();
        for (int k = 0; k < keptDims.size(); k++) {
            kept.addAll(refineKept(call, dt.dims.get(dstDims[k]), st.dims.get(keptDims.get(k)),
                    src.extent()[keptDims.get(k)], keptDims.get(k)));
        }
        List<LoopNest.Loop> folded = new ArrayList<>();
        List<RegisterTile.Digit> lanes = new ArrayList<>();
        for (int d = 0; d < reduced.length; d++) {
            if (!reduced[d]) {
                continue;
            }
            for (RegisterTile.Piece p : st.dims.get(d)) {
                if (!p.isThread()) {
                    folded.add(new LoopNest.Loop(p.count(), "serial", true, new long[] {0, p.stride()}));
                    continue;
                }
                RegisterTile.ThreadPart t = p.thread().normalized(p.count());
                lanes.add(laneDigit(call, src, d, t, p.count()));
            }
        }
        List<RegisterTile.Digit> expected = new ArrayList<>(lanes);
        expected.addAll(st.replicas);
        List<RegisterTile.Digit> held = new ArrayList<>(dt.replicas);
        held.addAll(dt.missing);
        if (!RegisterTile.canonical(expected).equals(RegisterTile.canonical(held))) {
            throw Declined.of("%s: after the shuffles every lane of a group holds the result, so %s must replicate "
                    + "(or leave unnamed) exactly the thread digits %s; its layout has %s", call.op(), dst,
                    RegisterTile.describe(RegisterTile.canonical(expected)),
                    RegisterTile.describe(RegisterTile.canonical(held)));
        }
        kept = CudaRules.order(LoopNest.coalesce(kept));
        folded = CudaRules.order(LoopNest.coalesce(folded));
        List<Long> masks = new ArrayList<>();
        for (RegisterTile.Digit l : lanes) {
            for (long m = l.tau(); m < l.tau() * l.count(); m *= 2) {
                masks.add(m);
            }
        }
        masks.sort(null);
        return describe(call, dst, src, dt, st, kept, folded, masks, threads);
    }

    /** A reduced thread digit: within one warp's lanes, a power of two at a power-of-two position. */
    private static RegisterTile.Digit laneDigit(Request call, Operand src, int d, RegisterTile.ThreadPart t,
            long count) {
        if (t.lo() != 0 || t.below() != 1 || t.mod() != count) {
            throw Declined.of("%s: reduced dim %d of %s takes part of a thread digit ((t / %d) mod %d from %d); the "
                    + "shuffles need whole digits", call.op(), d, src, t.tau(), t.mod(), t.lo());
        }
        if (t.tau() >= WARP) {
            throw Declined.of("%s: reduced dim %d of %s lies on warps (thread digit (t / %d) mod %d, warpid); "
                    + "combining warps needs shared memory", call.op(), d, src, t.tau(), count);
        }
        if (Long.bitCount(t.tau()) != 1 || Long.bitCount(count) != 1) {
            throw Declined.of("%s: reduced dim %d of %s splits lanes as (t / %d) mod %d, not a power-of-two lane "
                    + "split; butterfly shuffles pair lanes by XOR of one bit", call.op(), d, src, t.tau(), count);
        }
        if (t.tau() * count > WARP) {
            throw Declined.of("%s: reduced dim %d of %s spans lanes and warps (thread digit (t / %d) mod %d); "
                    + "combining warps needs shared memory", call.op(), d, src, t.tau(), count);
        }
        return new RegisterTile.Digit(t.tau(), count);
    }

    /** Kept dim k: destination and source pieces refined; thread slices must agree, register slices are loops. */
    private static List<LoopNest.Loop> refineKept(Request call, List<RegisterTile.Piece> dstPieces,
            List<RegisterTile.Piece> srcPieces, long extent, int dim) {
        List<Deque<RegisterTile.Piece>> queues = new ArrayList<>();
        for (List<RegisterTile.Piece> pieces : List.of(dstPieces, srcPieces)) {
            Deque<RegisterTile.Piece> q = new ArrayDeque<>(pieces);
            if (q.isEmpty() && extent != 1) {
                q.add(new RegisterTile.Piece(extent, 0, null));
            }
            queues.add(q);
        }
        List<LoopNest.Loop> out = new ArrayList<>();
        while (!queues.get(0).isEmpty() || !queues.get(1).isEmpty()) {
            if (queues.get(0).isEmpty() || queues.get(1).isEmpty()) {
                throw Declined.of("%s kept dim %d: operands disagree on the extent", call.op(), dim);
            }
            long m = Math.min(queues.get(0).peekFirst().count(), queues.get(1).peekFirst().count());
            RegisterTile.Piece[] heads = new RegisterTile.Piece[2];
            for (int o = 0; o < 2; o++) {
                RegisterTile.Piece head = queues.get(o).pollFirst();
                if (head.count() % m != 0) {
                    throw Declined.of("%s kept dim %d: radix %d and %d have no common refinement", call.op(), dim,
                            head.count(), m);
                }
                heads[o] = head.inner(m);
                if (head.count() != m) {
                    queues.get(o).addFirst(head.outer(m));
                }
            }
            if (heads[0].isThread() || heads[1].isThread()) {
                if (!heads[0].isThread() || !heads[1].isThread()
                        || !heads[0].thread().normalized(m).equals(heads[1].thread().normalized(m))) {
                    throw Declined.of("%s: kept dim %d of the source is held on other threads than the destination's; "
                            + "moving outputs between threads is not a reduction", call.op(), dim);
                }
                continue;
            }
            if (heads[0].stride() == 0) {
                throw Declined.of("%s: the destination puts %d outputs of kept dim %d in one register", call.op(), m,
                        dim);
            }
            out.add(new LoopNest.Loop(m, "serial", false, new long[] {heads[0].stride(), heads[1].stride()}));
        }
        return out;
    }

    private static CudaPlans.ShuffleReduce describe(Request call, Operand dst, Operand src, RegisterTile dt,
            RegisterTile st, List<LoopNest.Loop> kept, List<LoopNest.Loop> folded, List<Long> masks, long threads) {
        List<Operand> ops = List.of(dst, src);
        Map<String, PlanParts.SlotAccess> access = new LinkedHashMap<>();
        for (RegisterTile t : List.of(dt, st)) {
            access.put(t.op.role(), new PlanParts.SlotAccess(t.slotBase, t.slots(), CudaRegisterRule.startStrides(t),
                    List.of(0L), t.op.layout().toString(), CudaRegisterRule.startTerms(t)));
        }
        List<List<Long>> guards = new ArrayList<>();
        for (RegisterTile.Guard g : st.guards) {
            guards.add(List.of(g.tau(), g.mod(), g.lo(), g.count()));
        }
        long outputs = kept.stream().mapToLong(LoopNest.Loop::extent).reduce(1, (a, b) -> a * b);
        long terms = folded.stream().mapToLong(LoopNest.Loop::extent).reduce(1, (a, b) -> a * b);
        List<LoopNest.Loop> loops = new ArrayList<>(kept);
        loops.addAll(folded);
        return new CudaPlans.ShuffleReduce(call.op(), !call.flag("accum"), threads, guards,
                CudaRegisterRule.describeLoops(loops, ops), masks, access, List.of(outputs + " output" + (outputs == 1 ? "" : "s") + " per thread, " + terms
                + " register term" + (terms == 1 ? "" : "s") + " folded each, then " + masks.size()
                + " butterfly shuffle" + (masks.size() == 1 ? "" : "s") + " (xor " + masks + ")"));
    }
}
