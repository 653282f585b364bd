package org.axe4j.schedules.cuda;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.axe4j.layout.Swizzle;
import org.axe4j.schedules.AffineAccess;
import org.axe4j.schedules.Declined;
import org.axe4j.schedules.ElementwiseLoops;
import org.axe4j.schedules.LoopNest;
import org.axe4j.schedules.Modular;
import org.axe4j.schedules.Operand;
import org.axe4j.schedules.Request;
import org.axe4j.schedules.Rule;
import org.axe4j.schedules.RunTimeStarts;
import org.axe4j.schedules.plan.CudaPlans;
import org.axe4j.schedules.plan.PlanParts;
import org.axe4j.schedules.plan.SchedulePlan;

/**
 * Element-wise tile ops (copy, fill, zero, cast, unary and binary maps) at warp, warpgroup or CTA scope where at
 * least one operand is a register (local) tile partitioned over the scope's threads ({@link RegisterTile}).
 *
 * <p>The first register operand is the partition. Per region dim, its pieces and every other operand's pieces
 * (global/shared: {@link AffineAccess}; register: its own partition) are refined together. A slice where the
 * partition has a thread digit adds {@code value * stride_o} to each memory operand o's per-thread base (a
 * {@code thread term}); a slice on registers becomes a loop over the thread's slots. So thread t runs
 * {@code addr_o = base_o + sum terms_o(t) + sum_l i_l * stride_o,l}. Every other register operand must hold each
 * element on the same thread (same thread digits, guards and replicas), else the op is an exchange between
 * threads and is declined. A memory destination is stored by one thread per element: the threads along the
 * partition's replica digits with digit 0. The loop where the destination moves by 1 and every operand by 0 or 1
 * goes last; {@code vec} is the widest power of two (at most 16 bytes) dividing its extent and, for every operand
 * that moves there, the base, thread-term strides, other loop strides and run-time start strides: one aligned
 * vector access ({@code ld.global.v4}, {@code st.shared.v4}, ...) per chunk. A memory operand swizzled by
 * {@code Swizzle<B,M,S>} is addressed as swz(affine address) per access, with chunks of at most 2^M elements.
 */
final class CudaRegisterRule implements Rule {
    public static final CudaRegisterRule INSTANCE = new CudaRegisterRule();

    public String variant() {
        return "axe4j-cuda-register";
    }

    public int priority() {
        return 11;
    }

    /**
     * A swizzled memory operand {@code Swizzle<B,M,S>} is addressed as swz(affine address), per access: its vector
     * accesses are at most 2^M elements and aligned, so each stays inside one 2^M-element unit, which the XOR moves
     * whole ({@link #vectorWidth}).
     */
    public boolean acceptsSwizzle() {
        return true;
    }

    /**
     * The plan of {@link #planWhole}; a region that crosses a layout digit part way is cut at digit boundaries
     * ({@link RegisterBoxes}) and each box planned alone, when every box can be.
     */
    public SchedulePlan plan(Request call) {
        try {
            return planWhole(call);
        } catch (Declined whole) {
            List<Request> boxes = RegisterBoxes.of(call);
            if (boxes.isEmpty()) {
                throw whole;
            }
            List<CudaPlans.Register> plans = new ArrayList<>();
            List<String> notes = new ArrayList<>();
            notes.add("the region crosses layout digits part way: " + boxes.size() + " boxes cut at digit boundaries");
            for (Request box : boxes) {
                try {
                    plans.add(planWhole(box));
                } catch (Declined part) {
                    throw Declined.of("%s; cut at digit boundaries into %d boxes, the box %s still declines: %s",
                            whole.getMessage(), boxes.size(), region(box), part.getMessage());
                }
                notes.add("box " + region(box) + ": " + String.join("; ", plans.get(plans.size() - 1)
                        .notes()));
            }
            return new CudaPlans.RegisterBoxes(plans.get(0).threads(), plans, notes);
        }
    }

    /** The box's destination region as written: {@code dst=r[0:4]}. */
    private static String region(Request box) {
        String text = box.operands().get(0).toString();
        return text.substring(0, text.indexOf("] ") + 1);
    }

    /** One register plan over the whole region (see the class comment), or declines. */
    static CudaPlans.Register planWhole(Request call) {
        long threads = CudaRules.requireCudaScope(call);
        if (call.scope().equals("thread")) {
            throw Declined.of("%s at thread scope: a register tile is the thread's own (axe4j-cuda-vector)",
                    call.op());
        }
        List<Operand> ops = ElementwiseLoops.checkedOperands(call);
        int n = ops.size();
        RegisterTile[] tiles = new RegisterTile[n];
        AffineAccess[] access = new AffineAccess[n];
        int partition = -1;
        for (int o = 0; o < n; o++) {
            Operand op = ops.get(o);
            String scope = call.storage(op.role());
            requireSwizzleAddressable(call, op, scope);
            if (scope.equals("local")) {
                tiles[o] = RegisterTile.of(call, op, threads);
                tiles[o].requireCovered(call);
                partition = partition < 0 ? o : partition;
            } else if (scope.equals("global") || scope.startsWith("shared")) {
                access[o] = AffineAccess.of(op);
            } else {
                throw Declined.of("%s: %s lives in storage scope %s (global, shared or local only)", call.op(), op,
                        scope);
            }
        }
        if (partition < 0) {
            throw Declined.of("%s: no operand is a register (local) tile; axe4j-cuda-vector moves global and shared "
                    + "tiles", call.op());
        }
        RegisterTile part = tiles[partition];
        for (int o = 0; o < n; o++) {
            if (tiles[o] != null && o != partition) {
                requireSameThreads(call, part, tiles[o]);
            }
        }
        List<long[]> terms = new ArrayList<>(); // {tau, mod, lo, below, count, operand, stride}
        List<LoopNest.Loop> loops = refine(call, ops, tiles, access, partition, terms);
        for (LoopNest.Loop l : loops) {
            if (l.strides()[0] == 0 && l.extent() > 1) {
                throw Declined.of("%s: destination %s maps %d region elements to one address", call.op(), ops.get(0),
                        l.extent());
            }
        }
        if (tiles[0] == null) {
            for (long[] t : terms) {
                if (t[5] == 0 && t[6] == 0) {
                    throw Declined.of("%s: destination %s puts elements held by %d threads at one address",
                            call.op(), ops.get(0), t[4]);
                }
            }
        }
        loops = CudaRules.order(LoopNest.coalesce(loops));
        long vec = vectorWidth(call, ops, tiles, access, loops, terms);
        if (vec > 1) {
            LoopNest.Loop inner = loops.remove(loops.size() - 1);
            long[] outer = inner.strides().clone();
            for (int o = 0; o < n; o++) {
                outer[o] *= vec;
            }
            if (inner.extent() > vec) {
                loops.add(new LoopNest.Loop(inner.extent() / vec, "serial", false, outer));
            }
            loops.add(new LoopNest.Loop(vec, "vectorized", false, inner.strides()));
        }
        return describe(call, ops, tiles, access, part, loops, terms, vec, threads);
    }

    /**
     * A swizzled operand is a memory tile whose view starts a whole number of swizzle periods into its data (the
     * swizzle applies to addresses counted from the data's start); a register tile has no swizzle.
     */
    private static void requireSwizzleAddressable(Request call, Operand op, String scope) {
        Swizzle z = call.swizzle(op.role());
        if (z.isIdentity()) {
            return;
        }
        if (scope.equals("local")) {
            throw Declined.of("%s: the register tile %s has a swizzled layout (%s); registers are addressed by the "
                    + "layout's slots only", call.op(), op, z);
        }
        if (op.elemOffset() % z.period() != 0) {
            throw Declined.of("%s: %s is a swizzled view %d elements into its data, not a multiple of the swizzle's "
                    + "period %d (the swizzle applies to addresses from the start of the data)", call.op(), op,
                    op.elemOffset(), z.period());
        }
    }

    /** Same thread for every element: equal guards, replicas, and (checked in {@link #refine}) thread pieces. */
    private static void requireSameThreads(Request call, RegisterTile part, RegisterTile other) {
        if (!new HashSet<>(part.guards).equals(new HashSet<>(other.guards))
                || !RegisterTile.canonical(part.replicas).equals(RegisterTile.canonical(other.replicas))) {
            throw Declined.of("%s: %s and %s hold the region on different threads (guards %s / %s, replicas %s / %s);"
                    + " moving elements between threads needs shuffles or shared memory", call.op(), other.op,
                    part.op, other.guards, part.guards, RegisterTile.describe(other.replicas),
                    RegisterTile.describe(part.replicas));
        }
    }

    /**
     * Refines, per region dim, the operands' pieces; thread slices of the partition become thread terms of the
     * memory operands ({tau, mod, lo, below, count, operand, stride}), register slices become loops.
     */
    static List<LoopNest.Loop> refine(Request call, List<Operand> ops, RegisterTile[] tiles, AffineAccess[] access,
            int partition, List<long[]> terms) {
        int n = ops.size();
        long[] extents = ops.get(0).loopExtents();
        List<LoopNest.Loop> loops = new ArrayList<>();
        for (int k = 0; k < extents.length; k++) {
            List<Deque<RegisterTile.Piece>> queues = new ArrayList<>();
            for (int o = 0; o < n; o++) {
                int dim = ops.get(o).loopDims()[k];
                Deque<RegisterTile.Piece> q = new ArrayDeque<>();
                if (tiles[o] != null) {
                    q.addAll(tiles[o].dims.get(dim));
                } else {
                    for (AffineAccess.Piece p : access[o].dims().get(dim)) {
                        if (p.extent() != 1) {
                            q.addLast(new RegisterTile.Piece(p.extent(), p.stride(), null));
                        }
                    }
                }
                if (q.isEmpty()) {
                    q.add(new RegisterTile.Piece(extents[k], 0, null));
                }
                queues.add(q);
            }
            while (!queues.get(0).isEmpty()) {
                long m = Long.MAX_VALUE;
                for (Deque<RegisterTile.Piece> q : queues) {
                    if (q.isEmpty()) {
                        throw Declined.of("%s dim %d: operands disagree on the extent", call.op(), k);
                    }
                    m = Math.min(m, q.peekFirst().count());
                }
                RegisterTile.Piece[] heads = new RegisterTile.Piece[n];
                for (int o = 0; o < n; o++) {
                    RegisterTile.Piece head = queues.get(o).pollFirst();
                    if (head.count() % m != 0) {
                        throw Declined.of("%s dim %d: radix %d of one operand and %d of another have no common "
                                + "refinement", call.op(), k, head.count(), m);
                    }
                    heads[o] = head.inner(m);
                    if (head.count() != m) {
                        queues.get(o).addFirst(head.outer(m));
                    }
                }
                RegisterTile.Piece p = heads[partition];
                if (p.isThread()) {
                    RegisterTile.ThreadPart t = p.thread().normalized(m);
                    for (int o = 0; o < n; o++) {
                        if (tiles[o] != null) {
                            if (!heads[o].isThread() || !heads[o].thread().normalized(m).equals(t)) {
                                throw different(call, ops, partition, o, k);
                            }
                        } else {
                            terms.add(new long[] {t.tau(), t.mod(), t.lo(), t.below(), m, o, heads[o].stride()});
                        }
                    }
                } else {
                    long[] strides = new long[n];
                    for (int o = 0; o < n; o++) {
                        if (tiles[o] != null && heads[o].isThread()) {
                            throw different(call, ops, partition, o, k);
                        }
                        strides[o] = heads[o].stride();
                    }
                    loops.add(new LoopNest.Loop(m, "serial", false, strides));
                }
            }
            for (Deque<RegisterTile.Piece> q : queues) {
                if (!q.isEmpty()) {
                    throw Declined.of("%s dim %d: operands disagree on the extent", call.op(), k);
                }
            }
        }
        return loops;
    }

    private static Declined different(Request call, List<Operand> ops, int partition, int o, int k) {
        return Declined.of("%s: %s and %s hold region dim %d on different threads; moving elements between threads "
                + "needs shuffles or shared memory: copy %s to a shared tile, sync the scope, then copy that tile to "
                + "%s", call.op(), ops.get(o), ops.get(partition), k, ops.get(1).name(), ops.get(0).name());
    }

    /**
     * See the class comment; 1 when the last loop does not move the destination by 1 and the rest by 0 or 1. A
     * swizzled operand that moves in the last loop caps the width at its 2^M elements: then for an aligned affine
     * address a and j < vec, swz(a + j) = swz(a) + j.
     */
    static long vectorWidth(Request call, List<Operand> ops, RegisterTile[] tiles, AffineAccess[] access,
            List<LoopNest.Loop> loops, List<long[]> terms) {
        if (loops.isEmpty()) {
            return 1;
        }
        LoopNest.Loop inner = loops.get(loops.size() - 1);
        if (inner.strides()[0] != 1) {
            return 1;
        }
        for (long s : inner.strides()) {
            if (s != 0 && s != 1) {
                return 1;
            }
        }
        long widest = CudaRules.VECTOR_BYTES / CudaRules.maxBytes(ops);
        for (int o = 0; o < ops.size(); o++) {
            Swizzle z = call.swizzle(ops.get(o).role());
            if (!z.isIdentity() && inner.strides()[o] != 0) {
                widest = Math.min(widest, 1L << z.base());
            }
        }
        for (long vec = widest; vec > 1; vec /= 2) {
            if (aligned(vec, ops, tiles, access, loops, terms)) {
                return vec;
            }
        }
        return 1;
    }

    private static boolean aligned(long vec, List<Operand> ops, RegisterTile[] tiles, AffineAccess[] access,
            List<LoopNest.Loop> loops, List<long[]> terms) {
        LoopNest.Loop inner = loops.get(loops.size() - 1);
        if (inner.extent() % vec != 0) {
            return false;
        }
        for (int o = 0; o < ops.size(); o++) {
            if (inner.strides()[o] == 0) {
                continue;
            }
            Modular base = tiles[o] != null ? tiles[o].slotValues() : access[o].baseValues();
            if (!base.divisibleBy(vec)) {
                return false;
            }
            for (LoopNest.Loop l : loops.subList(0, loops.size() - 1)) {
                if (l.strides()[o] % vec != 0) {
                    return false;
                }
            }
            for (long[] t : terms) {
                if (t[5] == o && t[6] % vec != 0) {
                    return false;
                }
            }
            if (access[o] != null && !access[o].replicas().stream().allMatch(r -> r % vec == 0)) {
                return false;
            }
        }
        return true;
    }

    private static CudaPlans.Register describe(Request call, List<Operand> ops, RegisterTile[] tiles,
            AffineAccess[] access, RegisterTile part, List<LoopNest.Loop> loops, List<long[]> terms, long vec,
            long threads) {
        Map<String, PlanParts.RegisterAccess> accessMap = new LinkedHashMap<>();
        Map<String, List<Long>> swizzles = CudaRules.swizzles(call, ops);
        for (int o = 0; o < ops.size(); o++) {
            Operand op = ops.get(o);
            RunTimeStarts starts = access[o] != null ? RunTimeStarts.of(access[o])
                    : new RunTimeStarts(startStrides(tiles[o]), startTerms(tiles[o]));
            List<List<Long>> mine = new ArrayList<>();
            for (long[] t : terms) {
                if (t[5] == o && t[6] != 0) {
                    mine.add(List.of(t[0], t[1], t[2], t[3], t[4], t[6]));
                }
            }
            accessMap.put(op.role(), new PlanParts.RegisterAccess(tiles[o] != null,
                    tiles[o] != null ? tiles[o].slotBase : access[o].base(), starts.strides(), starts.terms(),
                    access[o] != null ? access[o].replicas() : List.of(0L), mine,
                    tiles[o] != null ? (Long) tiles[o].slots() : null, op.layout().toString(),
                    swizzles.get(op.role())));
        }
        List<List<Long>> guards = new ArrayList<>();
        for (RegisterTile.Guard g : part.guards) {
            guards.add(List.of(g.tau(), g.mod(), g.lo(), g.count()));
        }
        List<List<Long>> once = new ArrayList<>();
        if (tiles[0] == null) {
            for (RegisterTile.Digit d : part.replicas) {
                once.add(List.of(d.tau(), d.count()));
            }
        }
        long slots = 1;
        for (LoopNest.Loop l : loops) {
            slots *= l.extent();
        }
        int bytes = CudaRules.maxBytes(ops);
        return new CudaPlans.Register(threads, part.op.role(), vec, guards, once, describeLoops(loops, ops),
                accessMap, List.of("partition " + part.op.role() + " " + part.op.layout() + ": " + slots
                + " register slot" + (slots == 1 ? "" : "s") + " per thread over " + threads + " threads, " + vec
                + " element" + (vec == 1 ? "" : "s") + " (" + vec * bytes + " bytes) per access"
                + (guards.isEmpty() ? "" : ", " + guards.size() + " thread guard" + (guards.size() == 1 ? "" : "s"))
                + (once.isEmpty() ? "" : ", one store per replicated element")));
    }

    /** Loops outer first: extent, kind (unroll: slot indices are constants; vectorized: one access), strides. */
    static List<PlanParts.NestLoop> describeLoops(List<LoopNest.Loop> loops, List<Operand> ops) {
        return loops.stream().map(l -> new PlanParts.NestLoop(l.extent(),
                l.kind().equals("vectorized") ? "vectorized" : "unroll", l.reduces(), CudaRules.strides(l, ops)))
                .toList();
    }

    /** Run-time start strides of a register operand keyed by dim as text (JSON object keys). */
    static Map<String, Long> startStrides(RegisterTile tile) {
        Map<String, Long> out = new LinkedHashMap<>();
        tile.startStrides.forEach((d, s) -> out.put(Integer.toString(d), s));
        return out;
    }

    /**
     * Run-time start terms of a register operand, [divisor, modulus, stride] per dim keyed as text; null when no
     * dim has any (the plan then leaves them out).
     */
    static Map<String, List<List<Long>>> startTerms(RegisterTile tile) {
        if (tile.startTerms.isEmpty()) {
            return null;
        }
        Map<String, List<List<Long>>> out = new LinkedHashMap<>();
        tile.startTerms.forEach((d, terms) -> out.put(Integer.toString(d), terms.stream()
                .map(t -> List.of(t.divisor(), t.modulus(), t.stride())).toList()));
        return out;
    }
}
