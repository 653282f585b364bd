package org.axe4j.schedules.cuda;

import com.google.gson.JsonElement;
import java.util.ArrayList;
import java.util.List;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Point;
import org.axe4j.layout.Result;
import org.axe4j.layout.Shape;
import org.axe4j.layout.TileOf;
import org.axe4j.schedules.Declined;
import org.axe4j.schedules.Operand;
import org.axe4j.schedules.Request;
import org.axe4j.schedules.Rule;
import org.axe4j.schedules.plan.CudaPlans;
import org.axe4j.schedules.plan.PlanParts;
import org.axe4j.schedules.plan.SchedulePlan;
import org.axe4j.targets.MatrixFragments;

/**
 * {@code gemm_async} on sm_90a at warpgroup scope as {@code wgmma.mma_async.sync.aligned.m64nNk16} (f16/bf16
 * operands in shared memory, f32 accumulator in registers) or {@code m64nNk32} (e4m3/e5m2 operands, either type for
 * each): C (M x N) += A (M x K) B (N x K)^T, both operands K-major.
 *
 * <p>C's register layout must be a tile (tile-of) of the wgmma accumulator fragment over (64, n) for an
 * instruction width n (the widest multiple of 8 up to 256 dividing N for which it is), with an outer layout on
 * registers only: block (i, j) holds its n/2 accumulators from slot outer(i, j) * n/2 on.
 *
 * <p>A and B are read through 64-bit shared-memory matrix descriptors (start address, leading and stride byte
 * offsets, swizzle mode). The mode comes from the operand's swizzle: none, or {@code Swizzle<s,3,3>} on element
 * addresses (16-byte units, rows of W = 8 * 2^s elements: 32, 64, 128 bytes for s = 1, 2, 3). For every
 * instruction tile (rows r in [0, R), R = 64 for A and n for B; columns c in [0, 16)) the layout's address before
 * the swizzle must be the descriptor's: {@code start + (r % 8) * 8 + (c % 8) + (r / 8) * SBO + (c / 8) * LBO}
 * without swizzle (8x8 core matrices), {@code start + (r % 8) * W + c + (r / 8) * SBO} with one, where start is
 * the tile's first address, SBO the distance of 8-row groups and LBO of core-matrix columns. This is checked by
 * enumerating every element of every tile; a swizzled tile must also start on a swizzle-row boundary with its
 * 8-row groups on swizzle-atom boundaries, and the buffer be aligned to the swizzle period (8 W elements), since
 * the hardware swizzles absolute shared addresses while the layout swizzles offsets into the buffer.
 *
 * <p>Per output block the K steps issue one instruction each (the first overwrites unless {@code accum}); all
 * instructions are fenced before and committed as one group. The call then waits until at most {@code wait}
 * groups are pending ({@code wgmma.wait_group wait}; config {@code wait=N}, default 0: the accumulators are final
 * when the call returns). With {@code wait >= 1} the next K tile's instructions issue while this group retires; the
 * kernel waits with depth 0 before it reads the accumulators or releases the shared tiles a group reads.
 */
public final class CudaWgmmaRule implements Rule {
    public static final CudaWgmmaRule INSTANCE = new CudaWgmmaRule();

    static final String ARCH = "sm_90a";
    /** wgmma's operand types by TVM dtype (PTX ISA "wgmma.mma_async": .f16, .bf16; .e4m3, .e5m2 with k32). */
    static final java.util.Map<String, String> PTX_TYPES = java.util.Map.of("float16", "f16", "bfloat16", "bf16",
            "float8_e4m3fn", "e4m3", "float8_e5m2", "e5m2");
    static final long MAX_N = 256;

    private CudaWgmmaRule() {}

    public String variant() {
        return "axe4j-cuda-wgmma";
    }

    public int priority() {
        return 10;
    }

    public boolean acceptsSwizzle() {
        return true;
    }

    public SchedulePlan plan(Request call) {
        if (!CudaRules.TARGET_KIND.equals(call.target())) {
            throw Declined.of("target kind %s is not cuda", call.target());
        }
        JsonElement arch = call.params().get("arch");
        String archName = arch == null || arch.isJsonNull() ? "(none)" : arch.getAsString();
        if (!ARCH.equals(archName)) {
            throw Declined.of("gemm_async: wgmma needs arch %s, the target's is %s", ARCH, archName);
        }
        if (!call.scope().equals("warpgroup") || CudaRules.requireCudaScope(call) != 128) {
            throw Declined.of("gemm_async: wgmma runs at warpgroup scope with all 128 threads, not %s scope",
                    call.scope());
        }
        AsyncMmaConfig config = AsyncMmaConfig.of(call, java.util.Set.of("wait", "proxy_fence"), "wgmma");
        long wait = config.waitDepth();
        Operand c = call.operand("C");
        Operand a = call.operand("A");
        Operand b = call.operand("B");
        require(call, c, "local");
        require(call, a, "shared");
        require(call, b, "shared");
        if (!call.swizzle("C").isIdentity()) {
            throw Declined.of("gemm_async: accumulator %s has a swizzled layout", c);
        }
        if (c.elements() != Shape.of(c.shape()).size() || !c.layout().replica().isEmpty()) {
            throw Declined.of("gemm_async: accumulator %s must be a whole register tile without replicas (%s)", c,
                    c.layout());
        }
        String typeA = PTX_TYPES.get(a.dtype());
        String typeB = PTX_TYPES.get(b.dtype());
        boolean sixteen = typeA != null && (typeA.equals("f16") || typeA.equals("bf16"));
        // 16-bit: A and B the same type (k16); 8-bit: e4m3 or e5m2 each (k32, both K-major)
        if (typeA == null || typeB == null || (sixteen ? !typeB.equals(typeA)
                : typeB.equals("f16") || typeB.equals("bf16"))) {
            throw Declined.of("gemm_async: wgmma here multiplies float16 or bfloat16 by itself, or float8_e4m3fn/e5m2 "
                    + "by either, not %s x %s", a.dtype(), b.dtype());
        }
        if (!c.dtype().equals("float32")) {
            throw Declined.of("gemm_async: the wgmma accumulator is float32, not %s", c.dtype());
        }
        if (call.flag("trans_a") || call.flag("trans_b")) {
            throw Declined.of("gemm_async: MN-major operands (transA=%s, transB=%s) are not planned; A (M x K) and "
                    + "B (N x K) must be K-major", call.flag("trans_a"), call.flag("trans_b"));
        }
        long[] ce = c.loopExtents();
        long[] ae = a.loopExtents();
        long[] be = b.loopExtents();
        if (ce.length != 2 || ae.length != 2 || be.length != 2 || ae[0] != ce[0] || be[0] != ce[1]
                || ae[1] != be[1]) {
            throw Declined.of("gemm_async: shapes do not agree: C %s, A %s, B %s (C (M x N) += A (M x K) B (N x K)^T)",
                    c, a, b);
        }
        long m = ce[0];
        long n = ce[1];
        long k = ae[1];
        long kStep = SharedMatrixDescriptor.kStep(a);
        if (m % 64 != 0 || n % 8 != 0 || k % kStep != 0) {
            throw Declined.of("gemm_async: M=%d, N=%d, K=%d are not multiples of the m64nNk%d tile (64, 8, %d)", m,
                    n, k, kStep, kStep);
        }
        Accumulator acc = accumulator(c, m, n);
        SharedMatrixDescriptor da = SharedMatrixDescriptor.of(call, a, 64, k, "gemm_async");
        SharedMatrixDescriptor db = SharedMatrixDescriptor.of(call, b, acc.width, k, "gemm_async");
        List<CudaPlans.WgmmaTile> tiles = new ArrayList<>();
        for (long i = 0; i < m / 64; i++) {
            for (long j = 0; j < n / acc.width; j++) {
                long first = acc.base(i, j);
                List<Long> slots = new ArrayList<>();
                for (long s = 0; s < acc.width / 2; s++) {
                    slots.add(first + s);
                }
                List<PlanParts.OperandStep> steps = new ArrayList<>();
                for (long kk = 0; kk < k / kStep; kk++) {
                    steps.add(new PlanParts.OperandStep(da.start(i, kk), db.start(j, kk)));
                }
                tiles.add(new CudaPlans.WgmmaTile(slots, steps));
            }
        }
        return new CudaPlans.Wgmma("wgmma.mma_async.sync.aligned.m64n" + acc.width + "k" + kStep + ".f32." + typeA
                + "." + typeB,
                call.flag("accum"), wait, config.proxyFence(), c.layout().spanOn(Axis.M), da.describe(),
                db.describe(), tiles, List.of((m / 64) * (n / acc.width) * (k / kStep) + " x m64n" + acc.width + "k"
                + kStep + (sixteen ? "" : " " + typeA + "x" + typeB) + " (" + m + "x"
                + n + "x" + k + "), accumulator outer layout " + acc.outer + "; A " + da.summary() + "; B "
                + db.summary() + "; wgmma.wait_group " + wait + (wait > 0 ? " (groups kept in flight)" : "")
                + (config.proxyFence() ? "; fence.proxy.async.shared::cta first (operands may come from thread stores)"
                        : "; no proxy fence (proxy_fence=False: operands come from TMA)")));
    }

    private static void require(Request call, Operand o, String scope) {
        String s = call.storage(o.role());
        if (!s.startsWith(scope)) {
            throw Declined.of("gemm_async: %s is in %s memory; wgmma wants %s", o, s, scope);
        }
    }

    private record Accumulator(long width, Layout outer, Shape outerShape) {
        long base(long i, long j) {
            return outer.apply(outerShape, i, j).get(0).get(Axis.M) * (width / 2);
        }
    }

    /** The widest instruction n whose accumulator fragment C is a tile of, outer layout on registers only. */
    private static Accumulator accumulator(Operand c, long m, long n) {
        String last = "";
        for (long w = Math.min(MAX_N, n); w >= 8; w -= 8) {
            if (n % w != 0) {
                continue;
            }
            Result<Layout> match = TileOf.outer(c.layout(), Shape.of(m, n), MatrixFragments.wgmmaAccumulator(w),
                    MatrixFragments.wgmmaAccumulatorShape(w));
            if (!match.isPresent()) {
                last = match.reason();
                continue;
            }
            Shape outerShape = Shape.of(m / 64, n / w);
            boolean registersOnly = true;
            for (long i = 0; i < outerShape.dim(0) && registersOnly; i++) {
                for (long j = 0; j < outerShape.dim(1) && registersOnly; j++) {
                    List<Point> p = match.get().apply(outerShape, i, j);
                    registersOnly = p.size() == 1 && p.get(0).coords().entrySet().stream()
                            .allMatch(e -> e.getKey().equals(Axis.M) || e.getValue() == 0);
                }
            }
            if (registersOnly) {
                return new Accumulator(w, match.get(), outerShape);
            }
            last = "outer layout " + match.get() + " is not on registers only";
        }
        throw Declined.of("gemm_async: accumulator layout %s of %s is not a tile of the wgmma m64nNk16 accumulator "
                + "fragment for any N dividing %d: %s", c.layout(), c, n, last);
    }

}
