package org.axe4j.schedules.cuda;

import com.google.gson.JsonElement;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Point;
import org.axe4j.layout.Shape;
import org.axe4j.schedules.Declined;
import org.axe4j.schedules.Operand;
import org.axe4j.schedules.Request;
import org.axe4j.schedules.Rule;
import org.axe4j.schedules.plan.CudaPlans;
import org.axe4j.schedules.plan.PlanParts;
import org.axe4j.schedules.plan.SchedulePlan;

/**
 * {@code gemm_async} on Blackwell (sm_100a) as {@code tcgen05.mma.cta_group::1.kind::f16}: C (128 x N, f32, in
 * tensor memory) (+)= A (128 x K) B (N x K)^T, f16/bf16 operands K-major in shared memory, issued by one thread
 * (thread scope, or one elected lane at warp scope).
 *
 * <p>C's layout must put row r on tensor-memory lane r and column c on column {@code c0 + c} (the M = 128 data
 * path, one 32-bit column per f32), checked element by element; the region's column offset c0 is added to the
 * buffer's tensor-memory address. A and B are read through shared-memory matrix descriptors derived and checked
 * as for wgmma ({@link SharedMatrixDescriptor}). The instruction descriptor (PTX ISA, kind::f16): D format at bits
 * 4-5 (f32 = 1), A and B formats at 7-9 and 10-12 (f16 = 0, bf16 = 1), transposes at 15 and 16 (0: K-major),
 * N / 8 at 17-22, M / 16 at 24-28. One instruction per N block (the widest multiple of 16 up to 256 dividing N)
 * and K step of 16; the first K step overwrites unless {@code accum}. Completion is the caller's:
 * {@code tcgen05.commit} to an mbarrier, as with TVM's own case.
 *
 * <p>With config {@code cta_group=2} one {@code tcgen05.mma.cta_group::2} runs over the CTA pair of a cluster: M =
 * 256, each CTA holding 128 rows of A and of the accumulator (C is this CTA's 128 x N) and N/2 rows of B at the same
 * shared offsets (B is this CTA's N/2 x K); the even CTA's rows of B give columns 0..N/2-1. One N block only.
 */
final class CudaTcgen05Rule implements Rule {
    public static final CudaTcgen05Rule INSTANCE = new CudaTcgen05Rule();

    static final Set<String> ARCHS = Set.of("sm_100a", "sm_101a", "sm_103a");
    static final long M = 128;
    static final Axis LANE = Axis.of("TLane");
    static final Axis COLUMN = Axis.of("TCol");

    private CudaTcgen05Rule() {}

    public String variant() {
        return "axe4j-cuda-tcgen05";
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
        if (!ARCHS.contains(archName)) {
            throw Declined.of("gemm_async: tcgen05 needs arch %s, the target's is %s",
                    ARCHS.stream().sorted().toList(), archName);
        }
        long threads = CudaRules.requireCudaScope(call);
        boolean warp = call.scope().equals("warp") && threads == 32;
        if (!(call.scope().equals("thread") && threads == 1) && !warp) {
            throw Declined.of("gemm_async: tcgen05.mma is issued by one thread (thread scope, or one elected lane "
                    + "at warp scope), not at %s scope with %d threads", call.scope(), threads);
        }
        Operand c = call.operand("C");
        Operand a = call.operand("A");
        Operand b = call.operand("B");
        String cs = call.storage("C");
        if (!cs.equals("tmem")) {
            throw Declined.of("gemm_async: accumulator %s is in %s; tcgen05 accumulates in tensor memory (tmem)", c,
                    cs);
        }
        for (Operand o : List.of(a, b)) {
            String s = call.storage(o.role());
            if (!s.startsWith("shared")) {
                throw Declined.of("gemm_async: %s is in %s memory; this rule reads A and B from shared memory", o, s);
            }
        }
        String in = a.dtype();
        if (!(in.equals("float16") || in.equals("bfloat16")) || !b.dtype().equals(in) || !c.dtype().equals("float32")) {
            throw Declined.of("gemm_async: kind::f16 here is float16/bfloat16 x itself into float32, not %s x %s into "
                    + "%s", a.dtype(), b.dtype(), c.dtype());
        }
        if (call.flag("trans_a") || call.flag("trans_b")) {
            throw Declined.of("gemm_async: MN-major operands (transA=%s, transB=%s) are not planned; A (M x K) and "
                    + "B (N x K) must be K-major", call.flag("trans_a"), call.flag("trans_b"));
        }
        AsyncMmaConfig config = AsyncMmaConfig.of(call, java.util.Set.of("proxy_fence", "cta_group"), "tcgen05.mma");
        long group = config.ctaGroup();
        long[] ce = c.loopExtents();
        long[] ae = a.loopExtents();
        long[] be = b.loopExtents();
        if (ce.length != 2 || ae.length != 2 || be.length != 2 || ae[0] != ce[0] || be[0] * group != ce[1]
                || ae[1] != be[1]) {
            throw Declined.of("gemm_async: shapes do not agree: C %s, A %s, B %s (C (M x N) += A (M x K) B (N x K)^T%s)",
                    c, a, b, group == 2 ? "; cta_group=2: B holds this CTA's N/2 rows" : "");
        }
        long n = ce[1];
        long k = ae[1];
        if (ce[0] != M || n % 16 != 0 || k % 16 != 0) {
            throw Declined.of("gemm_async: M=%d, N=%d, K=%d: this rule issues M = 128 with N and K multiples of 16",
                    ce[0], n, k);
        }
        long column0 = accumulatorColumn(c);
        long width = 256;
        while (n % width != 0) {
            width -= 16;
        }
        if (group == 2 && (n != width || n < 32 || n % 32 != 0)) {
            throw Declined.of("gemm_async: cta_group=2 with N=%d: this rule issues one N block of 32..256 (a multiple of "
                    + "32) over the CTA pair", n);
        }
        SharedMatrixDescriptor da = SharedMatrixDescriptor.of(call, a, M, k, "gemm_async");
        // cta_group::2: each CTA of the pair supplies N/2 rows of B at the same shared offset
        SharedMatrixDescriptor db = SharedMatrixDescriptor.of(call, b, width / group, k, "gemm_async");
        List<CudaPlans.Tcgen05Tile> tiles = new ArrayList<>();
        for (long j = 0; j < n / width; j++) {
            List<PlanParts.OperandStep> steps = new ArrayList<>();
            for (long kk = 0; kk < k / 16; kk++) {
                steps.add(new PlanParts.OperandStep(da.start(0, kk), db.start(j, kk)));
            }
            tiles.add(new CudaPlans.Tcgen05Tile(column0 + j * width, steps));
        }
        return new CudaPlans.Tcgen05("tcgen05.mma.cta_group::" + group + ".kind::f16", group,
                instructionDescriptor(M * group, width, in), call.flag("accum"), warp, config.proxyFence(),
                da.describe(), db.describe(), tiles, List.of((n / width) * (k / 16) + " x tcgen05.mma m" + M * group + "n" + width + "k16 (" + M
                * group + "x" + n + "x" + k + (group == 2 ? ", cta_group::2 over the CTA pair: this CTA's 128 rows of A "
                + "and of the accumulator, N/2 rows of B from each CTA" : "")
                + "), instruction descriptor 0x" + Long.toHexString(instructionDescriptor(M * group, width, in))
                + ", accumulator at tensor-memory column " + column0 + "; A " + da.summary() + "; B "
                + db.summary() + (config.proxyFence() ? "; fence.proxy.async.shared::cta first"
                        : "; no proxy fence (proxy_fence=False)")));
    }

    /** The kind::f16 instruction descriptor (see the class comment). */
    static long instructionDescriptor(long m, long n, String dtype) {
        long format = dtype.equals("bfloat16") ? 1 : 0;
        return (1L << 4) | (format << 7) | (format << 10) | ((n >> 3) << 17) | ((m >> 4) << 24);
    }

    /** Column of C's element (0, 0), after checking that (r, c) sits on lane r, column c0 + c. */
    private static long accumulatorColumn(Operand c) {
        for (boolean s : c.symbolic()) {
            if (s) {
                throw Declined.of("gemm_async: accumulator %s starts at a run-time index; tensor-memory columns are "
                        + "planned at compile time", c);
            }
        }
        Shape shape = Shape.of(c.shape());
        int[] dims = c.loopDims();
        long[] ext = c.loopExtents();
        long column0 = -1;
        for (long r = 0; r < ext[0]; r++) {
            for (long col = 0; col < ext[1]; col++) {
                long[] coord = c.start().clone();
                coord[dims[0]] += r;
                coord[dims[1]] += col;
                List<Point> p = c.layout().apply(shape, coord);
                boolean ok = p.size() == 1 && p.get(0).coords().keySet().stream()
                        .allMatch(x -> x.equals(LANE) || x.equals(COLUMN) || p.get(0).get(x) == 0);
                long lane = ok ? p.get(0).get(LANE) : -1;
                long column = ok ? p.get(0).get(COLUMN) : -1;
                if (r == 0 && col == 0) {
                    column0 = column;
                }
                if (!ok || lane != r || column != column0 + col) {
                    throw Declined.of("gemm_async: element (%d, %d) of accumulator %s is at %s; the M = 128 data path "
                            + "puts it on TLane %d, TCol %d", r, col, c, p, r, column0 + col);
                }
            }
        }
        return column0;
    }
}
