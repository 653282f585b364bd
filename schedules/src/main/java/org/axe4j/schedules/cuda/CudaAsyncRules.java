package org.axe4j.schedules.cuda;

import com.google.gson.JsonElement;
import java.util.Arrays;
import java.util.List;
import org.axe4j.layout.Swizzle;
import org.axe4j.schedules.AffineAccess;
import org.axe4j.schedules.Declined;
import org.axe4j.schedules.ElementwiseLoops;
import org.axe4j.schedules.LoopNest;
import org.axe4j.schedules.Operand;
import org.axe4j.schedules.PlanAccesses;
import org.axe4j.schedules.Request;
import org.axe4j.schedules.Rule;
import org.axe4j.schedules.plan.CudaPlans;
import org.axe4j.schedules.plan.PlanParts;
import org.axe4j.schedules.plan.SchedulePlan;

/**
 * {@code copy_async} global -> shared on target kind {@code cuda} with {@code cp.async} (LDGSTS, sm_80+).
 *
 * <p>The plan is the one of {@link CudaRules#VECTOR}: the region's loop nest (common refinement of both operands'
 * affine pieces) with the destination-contiguous loop innermost, cut into chunks of {@code vec} elements; thread t
 * of T takes chunks {@code t, t + T, ...}. {@code vec} comes from {@link CudaRules#vectorWidth}: the widest power of
 * two with {@code vec * bytes <= 16} that divides the inner extent, both bases, every other stride and every
 * run-time start stride, and at most 2^M elements for a shared tile swizzled by {@code Swizzle<B,M,S>} (the XOR
 * moves 2^M-element units whole, so a chunk stays contiguous at swz(start)). cp.async moves exactly 4, 8 or 16 bytes, so a chunk of fewer than 4 bytes (a strided
 * inner loop, a misaligned base or an odd row pitch) is declined. 16-byte chunks bypass L1
 * ({@code cp.async.cg.shared.global}); 4- and 8-byte ones may only use {@code .ca}.
 *
 * <p>The copy is asynchronous: the kernel commits and waits ({@code cp.async.commit_group},
 * {@code cp.async.wait_group 0}) and syncs the CTA before reading the shared tile; the plan issues none of these.
 */
final class CudaAsyncRules {
    private CudaAsyncRules() {}

    /** The byte counts a cp.async instruction accepts (its cp-size operand). */
    static final List<Long> CP_ASYNC_BYTES = List.of(4L, 8L, 16L);

    public static final Rule CP_ASYNC = new Rule() {
        public String variant() {
            return "axe4j-cuda-cp-async";
        }

        public int priority() {
            return 10;
        }

        /** A swizzled shared tile is addressed as swz(affine address), chunks within 2^M elements (as VECTOR). */
        public boolean acceptsSwizzle() {
            return true;
        }

        public SchedulePlan plan(Request call) {
            long threads = CudaRules.requireCudaScope(call);
            requireNoConfig(call, "cp.async");
            List<Operand> ops = globalToShared(call);
            Operand dst = ops.get(0);
            if (!call.swizzle("src0").isIdentity()) {
                throw Declined.of("%s: the global source %s is swizzled (%s); cp.async reads global memory as laid "
                        + "out by an unswizzled layout", call.op(), ops.get(1), call.swizzle("src0"));
            }
            if (!call.swizzle("dst").isIdentity() && dst.elemOffset() % call.swizzle("dst").period() != 0) {
                throw Declined.of("%s: %s is a swizzled view %d elements into its data, not a multiple of the "
                        + "swizzle's period %d (the swizzle applies to addresses from the start of the data)",
                        call.op(), dst, dst.elemOffset(), call.swizzle("dst").period());
            }
            List<AffineAccess> access = List.of(AffineAccess.of(ops.get(0)), AffineAccess.of(ops.get(1)));
            List<LoopNest.Loop> loops = CudaRules.order(LoopNest.coalesce(ElementwiseLoops.affineLoops(call, ops,
                    access)));
            long vec = CudaRules.vectorWidth(call, ops, access, loops);
            long bytes = vec * ops.get(0).elementBytes();
            if (!CP_ASYNC_BYTES.contains(bytes)) {
                throw Declined.of("%s: cp.async moves 4, 8 or 16 bytes per instruction, but the widest aligned chunk "
                        + "of %s and %s is %d element(s) = %d bytes (%s)", call.op(), ops.get(0), ops.get(1), vec,
                        bytes, whyNarrow(call, loops));
            }
            long chunks = ops.get(0).elements() / vec;
            String instruction = bytes == 16 ? "cp.async.cg.shared.global" : "cp.async.ca.shared.global";
            return new CudaPlans.CpAsync(threads, vec, bytes, instruction, chunks, (chunks + threads - 1) / threads,
                    chunkedLoops(loops, ops), PlanAccesses.accessMap(ops, access, CudaRules.swizzles(call, ops)),
                    List.of(instruction + " of " + bytes + " bytes (" + vec + " element" + (vec == 1 ? "" : "s")
                    + "), " + chunks + " chunks over " + threads + " thread" + (threads == 1 ? "" : "s")
                    + (chunks % threads == 0 ? "" : ", last round guarded") + "; the kernel commits, waits and syncs"));
        }
    };

    /** Why {@link CudaRules#vectorWidth} found no wide chunk: the inner loop's strides, or alignment. */
    private static String whyNarrow(Request call, List<LoopNest.Loop> loops) {
        if (loops.isEmpty()) {
            return "the region is one element";
        }
        Swizzle z = call.swizzle("dst");
        if (!z.isIdentity() && (1L << z.base()) * call.operand("dst").elementBytes() < 4) {
            return "the shared tile's " + z + " moves units of " + (1L << z.base()) + " element(s) whole";
        }
        LoopNest.Loop inner = loops.get(loops.size() - 1);
        if (inner.strides()[0] != 1 || inner.strides()[1] != 1) {
            return "the innermost loop moves dst by " + inner.strides()[0] + " and src0 by " + inner.strides()[1]
                    + " elements; both must move by 1";
        }
        return "a base, an outer stride or the inner extent " + inner.extent() + " is not a multiple of the "
                + "elements in 4 bytes";
    }

    /** dst (shared) and src0 (global) of one dtype; anything else is declined with the storage scopes. */
    static List<Operand> globalToShared(Request call) {
        List<Operand> ops = call.operands();
        if (ops.size() != 2 || !ops.get(0).role().equals("dst") || !ops.get(1).role().equals("src0")) {
            throw Declined.of("%s: expected operands (dst, src0), got %s", call.op(),
                    ops.stream().map(Operand::role).toList());
        }
        Operand dst = ops.get(0);
        Operand src = ops.get(1);
        if (!Arrays.equals(dst.loopExtents(), src.loopExtents())) {
            throw Declined.of("%s: region extents %s of src0 differ from %s of dst (unit dims dropped)", call.op(),
                    Arrays.toString(src.loopExtents()), Arrays.toString(dst.loopExtents()));
        }
        if (!dst.dtype().equals(src.dtype())) {
            throw Declined.of("%s: dtypes %s -> %s differ; an async copy does not convert", call.op(), src.dtype(),
                    dst.dtype());
        }
        String dstScope = call.storage("dst");
        String srcScope = call.storage("src0");
        if (!dstScope.startsWith("shared") || !srcScope.equals("global")) {
            throw Declined.of("%s: cp.async copies global -> shared only; %s is in %s, %s is in %s", call.op(), dst,
                    dstScope, src, srcScope);
        }
        return ops;
    }

    /** The call's config keys (predicate, fill_mode, mbar, ...) name semantics this plan does not implement. */
    static void requireNoConfig(Request call, String what) {
        JsonElement config = call.params().get("config");
        if (config != null && config.isJsonArray() && !config.getAsJsonArray().isEmpty()) {
            throw Declined.of("%s: %s does not implement the config %s", call.op(), what, config);
        }
    }

    /** Loops of the region, outer first; kind {@code chunked}: the threads share their flattened chunks. */
    static List<PlanParts.KindedLoop> chunkedLoops(List<LoopNest.Loop> loops, List<Operand> ops) {
        return loops.stream().map(l -> new PlanParts.KindedLoop("chunked", l.extent(), CudaRules.strides(l, ops)))
                .toList();
    }
}
