package org.axe4j.schedules.cuda;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import org.axe4j.layout.Swizzle;
import org.axe4j.schedules.AffineAccess;
import org.axe4j.schedules.Declined;
import org.axe4j.schedules.ElementwiseLoops;
import org.axe4j.schedules.LoopNest;
import org.axe4j.schedules.Modular;
import org.axe4j.schedules.Operand;
import org.axe4j.schedules.PlanAccesses;
import org.axe4j.schedules.Request;
import org.axe4j.schedules.Rule;
import org.axe4j.schedules.plan.CudaPlans;
import org.axe4j.schedules.plan.PlanParts;
import org.axe4j.schedules.plan.SchedulePlan;

/**
 * Element-wise tile ops ({@code copy}, {@code fill}, {@code cast}, unary and binary maps) on target kind
 * {@code cuda}, over global, shared and (at thread scope) local buffers whose layouts live on the memory axis.
 *
 * <p>The threads of the execution scope share the work: the region's loop nest (the common refinement of the
 * operands' affine pieces, joined where loops continue each other) is cut into chunks of {@code vec} consecutive
 * elements of the innermost loop, and thread t of T takes chunks {@code t, t + T, t + 2T, ...}, so a warp's 32
 * chunks of one round are adjacent in memory (coalesced). {@link #VECTOR}: {@code vec} is the widest power of two
 * with {@code vec * bytes <= 16} such that each chunk is one aligned vector access for every operand that moves
 * by 1 in the innermost loop: vec divides that loop's extent, every other stride and the operand's base for every
 * value of its run-time starts ({@link AffineAccess#baseValues}: {@code A[:, bx * 32:bx * 32 + 32]} adds
 * {@code 32 n} elements, which keeps 16-byte fp32 vectors; the buffers' data are 16-byte aligned). 16 bytes is {@code ld.global.v4.u32} /
 * {@code ld.shared.v4.u32}. {@link #DIGITS}: one element per chunk, every address from the layout's digits, for
 * any memory layout (tiled, non-affine regions): always correct, never fast.
 */
final class CudaRules {
    private CudaRules() {}

    public static final String TARGET_KIND = "cuda";

    /** Widest single access of one thread: 128 bits. */
    static final int VECTOR_BYTES = 16;

    static final Set<String> SCOPES = Set.of("thread", "warp", "warpgroup", "cta");

    public static final Rule VECTOR = new Rule() {
        public String variant() {
            return "axe4j-cuda-vector";
        }

        public int priority() {
            return 10;
        }

        /** A swizzled operand is addressed as swz(affine address); see {@link #vectorWidth} for the chunks. */
        public boolean acceptsSwizzle() {
            return true;
        }

        public SchedulePlan plan(Request call) {
            long threads = requireCudaScope(call);
            List<Operand> ops = ElementwiseLoops.checkedOperands(call);
            requireStorage(call, ops);
            List<AffineAccess> access = new ArrayList<>();
            for (Operand o : ops) {
                if (!call.swizzle(o.role()).isIdentity() && o.elemOffset() % call.swizzle(o.role()).period() != 0) {
                    throw Declined.of("%s: %s is a swizzled view %d elements into its data, not a multiple of the "
                            + "swizzle's period %d (the swizzle applies to addresses from the start of the data)",
                        call.op(), o, o.elemOffset(), call.swizzle(o.role()).period());
                }
                access.add(AffineAccess.of(o));
            }
            List<LoopNest.Loop> loops = order(LoopNest.coalesce(ElementwiseLoops.affineLoops(call, ops, access)));
            long vec = vectorWidth(call, ops, access, loops);
            long elements = ops.get(0).elements();
            long chunks = elements / vec;
            List<String> notes = new ArrayList<>();
            notes.add(vec + " element" + (vec == 1 ? "" : "s") + " (" + vec * maxBytes(ops) + " bytes) per access, "
                    + chunks + " chunks over " + threads + " thread" + (threads == 1 ? "" : "s")
                    + (chunks % threads == 0 ? "" : ", last round guarded"));
            long possible = vectorWidth(call, ops, access, loops, true);
            if (possible > vec) {
                notes.add(narrowed(call, ops, access, vec, possible));
            }
            return new CudaPlans.Affine(threads, vec, chunks, (chunks + threads - 1) / threads, describe(loops, ops),
                    PlanAccesses.accessMap(ops, access, swizzles(call, ops)), notes);
        }
    };

    public static final Rule DIGITS = new Rule() {
        public String variant() {
            return "axe4j-cuda-digits";
        }

        public int priority() {
            return 1;
        }

        public SchedulePlan plan(Request call) {
            long threads = requireCudaScope(call);
            List<Operand> ops = ElementwiseLoops.checkedOperands(call);
            requireStorage(call, ops);
            Map<String, PlanParts.CudaDigitOperand> operands = new LinkedHashMap<>();
            for (Operand o : ops) {
                AffineAccess.requireMemoryOnly(o);
                PlanParts.DigitOperand d = PlanAccesses.digitOperand(o);
                operands.put(o.role(), new PlanParts.CudaDigitOperand(d.base(), d.rowStrides(), d.iters(),
                        d.replicas(), java.util.Arrays.stream(o.loopDims()).boxed().toList()));
            }
            long elements = ops.get(0).elements();
            return new CudaPlans.Digits(threads, java.util.Arrays.stream(ops.get(0).loopExtents()).boxed().toList(),
                    (elements + threads - 1) / threads, operands, List.of("one element per access, " + elements
                    + " elements over " + threads + " threads, addresses from the layouts' digits"));
        }
    };

    /** Target cuda and a scope this file handles; the scope's thread count (params.threads, at least 1). */
    static long requireCudaScope(Request call) {
        if (!TARGET_KIND.equals(call.target())) {
            throw Declined.of("target kind %s is not cuda", call.target());
        }
        if (!SCOPES.contains(call.scope())) {
            throw Declined.of("%s: execution scope %s is not one of %s", call.op(), call.scope(),
                    SCOPES.stream().sorted().toList());
        }
        JsonElement t = call.params().get("threads");
        long threads = t == null || t.isJsonNull() ? 0 : t.getAsLong();
        if (threads < 1) {
            throw Declined.of("%s at %s scope: the scope has %d active threads", call.op(), call.scope(), threads);
        }
        return threads;
    }

    /**
     * Global and shared buffers at any scope; a local buffer only at thread scope, where each thread owns it
     * (at wider scopes a register tile's layout names thread axes, which these rules do not partition).
     */
    static void requireStorage(Request call, List<Operand> ops) {
        for (Operand o : ops) {
            String scope = call.storage(o.role());
            boolean shared = scope.startsWith("shared");
            if (scope.equals("local") && !call.scope().equals("thread")) {
                throw Declined.of("%s: %s is a local (register) buffer at %s scope; register tiles need a "
                        + "partition over the scope's threads", call.op(), o, call.scope());
            }
            if (!shared && !scope.equals("global") && !scope.equals("local")) {
                throw Declined.of("%s: %s lives in storage scope %s (global, shared or local only)", call.op(), o,
                        scope);
            }
        }
    }

    /** The loop where the destination moves by 1 and every source by 0 or 1 goes last; the rest by decreasing strides. */
    static List<LoopNest.Loop> order(List<LoopNest.Loop> loops) {
        List<LoopNest.Loop> out = new ArrayList<>(loops);
        out.sort(Comparator.comparingLong((LoopNest.Loop l) -> -Math.abs(l.strides()[0]))
                .thenComparingLong(l -> l.strides().length > 1 ? -Math.abs(l.strides()[1]) : 0));
        LoopNest.Loop unit = null;
        for (LoopNest.Loop l : out) {
            boolean ok = l.strides()[0] == 1;
            for (int o = 1; o < l.strides().length; o++) {
                ok &= l.strides()[o] == 0 || l.strides()[o] == 1;
            }
            if (ok) {
                unit = l;
            }
        }
        if (unit != null) {
            out.remove(unit);
            out.add(unit);
        }
        return out;
    }

    /**
     * See the class comment: the widest aligned power-of-two chunk of the innermost loop, 1 when there is none. A
     * swizzled operand {@code Swizzle<B,M,S>} moves units of 2^M elements intact (the XOR touches bits M and up),
     * so its chunks are at most 2^M elements: then swz(a + j) = swz(a) + j for an aligned a and j < vec.
     */
    static long vectorWidth(List<Operand> ops, List<AffineAccess> access, List<LoopNest.Loop> loops) {
        return vectorWidth(null, ops, access, loops);
    }

    /** {@link #vectorWidth(List, List, List)} with the request's swizzles ({@code call} null: none). */
    static long vectorWidth(Request call, List<Operand> ops, List<AffineAccess> access, List<LoopNest.Loop> loops) {
        return vectorWidth(call, ops, access, loops, false);
    }

    /**
     * The width, or with {@code startsAligned} the width the shapes, strides and layouts allow were every
     * run-time region start a multiple of it: a difference means a start's form is what narrows the access.
     */
    static long vectorWidth(Request call, List<Operand> ops, List<AffineAccess> access, List<LoopNest.Loop> loops,
                            boolean startsAligned) {
        if (loops.isEmpty()) {
            return 1;
        }
        LoopNest.Loop inner = loops.get(loops.size() - 1);
        for (long s : inner.strides()) {
            if (s != 0 && s != 1) {
                return 1;
            }
        }
        if (inner.strides()[0] != 1) {
            return 1;
        }
        long widest = VECTOR_BYTES / maxBytes(ops);
        for (int o = 0; o < ops.size(); o++) {
            Swizzle z = call == null ? Swizzle.IDENTITY : call.swizzle(ops.get(o).role());
            if (!z.isIdentity() && inner.strides()[o] != 0) {
                widest = Math.min(widest, 1L << z.base());
            }
        }
        for (long vec = widest; vec > 1; vec /= 2) {
            if (aligned(vec, ops, access, loops, startsAligned)) {
                return vec;
            }
        }
        return 1;
    }

    /**
     * The plan note of a vector copy narrowed by a run-time start: which operand's start, as written, and the fix.
     * A tile offset bound by a plain assignment ({@code j0 = (bid % GN) * TT}) reaches the rule as a variable
     * nothing is known of; {@code T.meta_var(...)} keeps its form, and with it the alignment.
     */
    static String narrowed(Request call, List<Operand> ops, List<AffineAccess> access, long vec, long possible) {
        List<String> starts = new ArrayList<>();
        for (int o = 0; o < ops.size(); o++) {
            Operand op = ops.get(o);
            if (access.get(o).baseValues().divisibleBy(possible)) {
                continue;
            }
            SortedMap<Integer, List<AffineAccess.StartTerm>> terms = access.get(o).startTerms();
            for (int d = 0; d < op.runTimeStarts().length; d++) {
                Modular m = op.runTimeStarts()[d];
                // a start whose every term moves the address by a multiple of the width keeps it aligned
                boolean harmless = terms.containsKey(d)
                        && terms.get(d).stream().allMatch(t -> t.stride() % possible == 0);
                if (m != null && !harmless) {
                    starts.add(op.role() + " dim " + d + " starts at " + startText(call, op.role(), d) + " ("
                            + (m.equals(Modular.ANY) ? "any value" : "values " + m) + ")");
                }
            }
        }
        return "narrowed: " + vec + " element" + (vec == 1 ? "" : "s") + " per access where the layouts allow "
                + possible + ": the run-time start" + (starts.size() == 1 ? " " : "s ") + String.join(", ", starts)
                + (starts.size() == 1 ? " is" : " are") + " not provably a multiple of " + possible + " elements;"
                + " bind the offset with T.meta_var(...) (a plain assignment hides its form) or make it a multiple of "
                + possible;
    }

    /** The start of {@code role}'s dim {@code d} as the kernel wrote it ({@code start_text}), else {@code s<d>}. */
    private static String startText(Request call, String role, int d) {
        JsonObject texts = call.params().getAsJsonObject("start_text");
        if (texts != null && texts.has(role) && texts.getAsJsonArray(role).size() > d
                && !texts.getAsJsonArray(role).get(d).isJsonNull()) {
            return texts.getAsJsonArray(role).get(d).getAsString();
        }
        return "s" + d;
    }

    private static boolean aligned(long vec, List<Operand> ops, List<AffineAccess> access, List<LoopNest.Loop> loops,
                                   boolean startsAligned) {
        LoopNest.Loop inner = loops.get(loops.size() - 1);
        if (inner.extent() % vec != 0) {
            return false;
        }
        for (int o = 0; o < ops.size(); o++) {
            if (inner.strides()[o] == 0) {
                continue; // a broadcast operand is read once per chunk
            }
            AffineAccess a = access.get(o);
            // the base over every run-time start (bx * 32 adds 32 n * stride): aligned for all n, or not at all;
            // with startsAligned, as if every run-time start were a multiple of vec (its residue alone counts)
            Modular base = a.baseValues();
            boolean baseAligned = startsAligned ? base.residue() % vec == 0 : base.divisibleBy(vec);
            if (!baseAligned || !a.replicas().stream().allMatch(r -> r % vec == 0)) {
                return false;
            }
            for (LoopNest.Loop l : loops.subList(0, loops.size() - 1)) {
                if (l.strides()[o] % vec != 0) {
                    return false;
                }
            }
        }
        return true;
    }

    static int maxBytes(List<Operand> ops) {
        return ops.stream().mapToInt(Operand::elementBytes).max().orElse(1);
    }

    static List<PlanParts.StridedLoop> describe(List<LoopNest.Loop> loops, List<Operand> ops) {
        return loops.stream().map(l -> new PlanParts.StridedLoop(l.extent(), strides(l, ops))).toList();
    }

    /** A loop's stride per operand role. */
    static Map<String, Long> strides(LoopNest.Loop l, List<Operand> ops) {
        Map<String, Long> strides = new LinkedHashMap<>();
        for (int o = 0; o < ops.size(); o++) {
            strides.put(ops.get(o).role(), l.strides()[o]);
        }
        return strides;
    }

    /** [bits, base, shift] of each swizzled operand, by role: where the plan's access entries carry a swizzle. */
    static Map<String, List<Long>> swizzles(Request call, List<Operand> ops) {
        Map<String, List<Long>> out = new LinkedHashMap<>();
        for (Operand o : ops) {
            Swizzle z = call.swizzle(o.role());
            if (!z.isIdentity()) {
                out.put(o.role(), List.of((long) z.bits(), (long) z.base(), (long) z.shift()));
            }
        }
        return out;
    }
}
