package org.axe4j.schedules.trn;

import com.google.gson.JsonElement;
import java.util.List;
import java.util.Map;
import org.axe4j.schedules.Declined;
import org.axe4j.schedules.Operand;
import org.axe4j.schedules.Request;
import org.axe4j.schedules.Rule;
import org.axe4j.schedules.plan.PlanParts;
import org.axe4j.schedules.plan.SchedulePlan;
import org.axe4j.schedules.plan.TrnPlan;

/**
 * {@code gemm} on the Trainium TensorEngine: D = op(A) op(B) (+ D), D in PSUM (float32), A and B in SBUF.
 *
 * <p>{@code nisa.nc_matmul} contracts over partitions: the stationary operand gives K (on P, at most 128) x its
 * free dim (at most 128 columns, the output partitions), the moving operand K x its free dim (at most 512), and the
 * product lands in one PSUM bank (2 KiB per partition) as out[stationary free on P, moving free on F]. The
 * stationary operand is A when D has M on partitions, else B (D^T = B^T A^T).
 *
 * <p>Maximal instruction tile from the layouts (the paper's group / K-intersection / MN-intersection): k = the
 * common P run of K in both operands; s = the common run of the stationary free dim (F run there, P run in D);
 * m = the common F run of the moving free dim (in the moving operand and in D, within a bank). The rest are loops:
 * stationary blocks, moving blocks, then the K blocks innermost, accumulating into the same PSUM tile
 * ({@code +=}); with beta = 0 the tile is first memset to 0. Every tile of every operand is checked to be a P x F
 * box, the two inputs' K rows to share partitions, and each D tile to stay in one bank.
 */
final class TrnGemmRule implements Rule {
    public static final TrnGemmRule INSTANCE = new TrnGemmRule();

    private TrnGemmRule() {}

    public String variant() {
        return "axe4j-trn-matmul";
    }

    public int priority() {
        return 100;
    }

    public SchedulePlan plan(Request call) {
        TrnTiles.requireTrn(call);
        Operand d = call.operand("D");
        Operand a = call.operand("A");
        Operand b = call.operand("B");
        Operand c = call.operand("C");
        for (Operand o : List.of(a, b)) {
            if (!TrnTiles.storage(call, o).equals("trn.sbuf")) {
                throw Declined.of("gemm: %s is in %s; the TensorEngine reads SBUF", o, TrnTiles.storage(call, o));
            }
        }
        if (!TrnTiles.storage(call, d).equals("trn.psum")) {
            throw Declined.of("gemm: D %s is in %s; the TensorEngine writes PSUM (copy the result out after)", d,
                    TrnTiles.storage(call, d));
        }
        for (Operand o : List.of(d, a, b)) {
            TrnTiles.checkLimits(call, o);
        }
        if (!a.dtype().equals(b.dtype())) {
            throw Declined.of("gemm: A is %s, B is %s; nc_matmul takes one input dtype", a.dtype(), b.dtype());
        }
        if (!d.dtype().equals("float32")) {
            throw Declined.of("gemm: D is %s; PSUM accumulates float32", d.dtype());
        }
        double alpha = scalar(call, "alpha");
        double beta = scalar(call, "beta");
        if (alpha != 1.0 || !(beta == 0.0 || beta == 1.0)) {
            throw Declined.of("gemm: nc_matmul computes A B (+ D): alpha must be 1 and beta 0 or 1, not %s, %s",
                    alpha, beta);
        }
        if (beta == 1.0 && !(c.name().equals(d.name()) && java.util.Arrays.equals(c.start(), d.start()))) {
            throw Declined.of("gemm: beta = 1 accumulates into D in place; C %s must be D %s", c, d);
        }
        int[] ad = a.loopDims();
        int[] bd = b.loopDims();
        int[] dd = d.loopDims();
        if (ad.length != 2 || bd.length != 2 || dd.length != 2) {
            throw Declined.of("gemm: 2-D tiles expected, not A %s, B %s, D %s", a, b, d);
        }
        boolean ta = call.flag("trans_a");
        boolean tb = call.flag("trans_b");
        int aM = ta ? ad[1] : ad[0];
        int aK = ta ? ad[0] : ad[1];
        int bK = tb ? bd[1] : bd[0];
        int bN = tb ? bd[0] : bd[1];
        int dM = dd[0];
        int dN = dd[1];
        long mExt = a.extent()[aM];
        long kExt = a.extent()[aK];
        long nExt = b.extent()[bN];
        if (b.extent()[bK] != kExt || d.extent()[dM] != mExt || d.extent()[dN] != nExt) {
            throw Declined.of("gemm: shapes do not agree: D %s, A %s%s, B %s%s", d, a, ta ? "^T" : "", b,
                    tb ? "^T" : "");
        }
        // orientation: the operand whose free dim lies on D's partitions is stationary
        long dMOnP = TrnTiles.run(d, d.start(), dM, TrnTiles.P, 128).length();
        long dNOnP = TrnTiles.run(d, d.start(), dN, TrnTiles.P, 128).length();
        boolean aStationary = dMOnP > 1 || (mExt == 1 && dNOnP == 1);
        if (!aStationary && dNOnP == 1 && nExt > 1) {
            throw Declined.of("gemm: neither M nor N of D %s lies on partitions (layout %s)", d, d.layout());
        }
        Operand st = aStationary ? a : b;
        Operand mv = aStationary ? b : a;
        int sK = aStationary ? aK : bK;
        int sF = aStationary ? aM : bN;
        int mK = aStationary ? bK : aK;
        int mF = aStationary ? bN : aM;
        int dP = aStationary ? dM : dN;
        int dF = aStationary ? dN : dM;
        long bankElems = TrainiumMemory.PSUM_BANK_BYTES / d.elementBytes();
        long k = gcd(TrnTiles.run(st, st.start(), sK, TrnTiles.P, TrainiumMemory.MATMUL_CONTRACTION).length(),
                TrnTiles.run(mv, mv.start(), mK, TrnTiles.P, TrainiumMemory.MATMUL_CONTRACTION).length());
        long s = gcd(TrnTiles.run(st, st.start(), sF, TrnTiles.F, TrainiumMemory.MATMUL_STATIONARY_FREE).length(),
                TrnTiles.run(d, d.start(), dP, TrnTiles.P, TrainiumMemory.MATMUL_STATIONARY_FREE).length());
        long m = gcd(TrnTiles.run(mv, mv.start(), mF, TrnTiles.F, TrainiumMemory.MATMUL_MOVING_FREE).length(),
                TrnTiles.run(d, d.start(), dF, TrnTiles.F, Math.min(TrainiumMemory.MATMUL_MOVING_FREE, bankElems))
                        .length());
        if (k == 1 && kExt > 1) {
            throw Declined.of("gemm: the contraction dim K (extent %d) does not lie on partitions in both %s (layout "
                    + "%s) and %s (layout %s); nc_matmul contracts over P: store that operand with K on P, or "
                    + "transpose it first", kExt, st, st.layout(), mv, mv.layout());
        }
        if (s == 1 && st.extent()[sF] > 1) {
            throw Declined.of("gemm: the stationary free dim (extent %d) is not an F run of %s (layout %s) and a P "
                    + "run of D (layout %s)", st.extent()[sF], st, st.layout(), d.layout());
        }
        if (m == 1 && mv.extent()[mF] > 1) {
            throw Declined.of("gemm: the moving free dim (extent %d) is not an F run of %s (layout %s) and of D "
                    + "(layout %s) within a PSUM bank", mv.extent()[mF], mv, mv.layout(), d.layout());
        }
        PlanParts.TrnLoop so = TrnTiles.dim("stationary_block", st.extent()[sF] / s,
                Map.of(st.role(), Map.of(str(sF), s), "D", Map.of(str(dP), s)));
        PlanParts.TrnLoop mo = TrnTiles.dim("moving_block", mv.extent()[mF] / m,
                Map.of(mv.role(), Map.of(str(mF), m), "D", Map.of(str(dF), m)));
        PlanParts.TrnLoop ko = TrnTiles.dim("k_block", kExt / k,
                Map.of(st.role(), Map.of(str(sK), k), mv.role(), Map.of(str(mK), k)));
        List<PlanParts.TrnLoop> inst = List.of(
                TrnTiles.dim("P", k, Map.of(st.role(), Map.of(str(sK), 1L), mv.role(), Map.of(str(mK), 1L))),
                TrnTiles.dim("lhs_F", s, Map.of(st.role(), Map.of(str(sF), 1L), "D", Map.of(str(dP), 1L))),
                TrnTiles.dim("rhs_F", m, Map.of(mv.role(), Map.of(str(mF), 1L), "D", Map.of(str(dF), 1L))));
        verify(call, st, sK, sF, mv, mK, mF, d, dP, dF, k, s, m, kExt, bankElems);
        List<PlanParts.TrnLoop> memset = beta == 0.0 ? List.of(
                TrnTiles.dim("P", s, Map.of("D", Map.of(str(dP), 1L))),
                TrnTiles.dim("F", m, Map.of("D", Map.of(str(dF), 1L)))) : List.of();
        long count = (st.extent()[sF] / s) * (mv.extent()[mF] / m) * (kExt / k);
        return new TrnPlan("matmul", null, st.role(), mv.role(), null, List.of(so, mo), ko, inst, memset, null,
                new TrnPlan.Tile(s, k, m), List.of(count + " x nc_matmul " + k + " (K, P) x " + s + " (stationary " + st.role()
                + ") x " + m + " (moving " + mv.role() + "), " + (kExt / k) + " K steps accumulated per PSUM tile"
                + (beta == 0.0 ? " after a memset" : "")));
    }

    private static void verify(Request call, Operand st, int sK, int sF, Operand mv, int mK, int mF, Operand d,
            int dP, int dF, long k, long s, long m, long kExt, long bankElems) {
        for (long si = 0; si < st.extent()[sF] / s; si++) {
            for (long mi = 0; mi < mv.extent()[mF] / m; mi++) {
                long[] dBase = new long[d.extent().length];
                dBase[dP] = si * s;
                dBase[dF] = mi * m;
                for (long[] start : TrnTiles.starts(call, d)) {
                    if (TrnTiles.boxPartition(d, start, dBase, dP, s, dF, m) < 0) {
                        throw Declined.of("gemm: D tile (%d, %d) of %s is not an %d x %d box", si, mi, d, s, m);
                    }
                    long f0 = TrnTiles.pf(d, start, dBase)[TrnTiles.F];
                    if (f0 / bankElems != (f0 + m - 1) / bankElems) {
                        throw Declined.of("gemm: D tile (%d, %d) of %s spans free elements [%d, %d), across a PSUM "
                                + "bank of %d", si, mi, d, f0, f0 + m, bankElems);
                    }
                }
                for (long ki = 0; ki < kExt / k; ki++) {
                    long[] sBase = new long[st.extent().length];
                    sBase[sK] = ki * k;
                    sBase[sF] = si * s;
                    long[] mBase = new long[mv.extent().length];
                    mBase[mK] = ki * k;
                    mBase[mF] = mi * m;
                    for (long[] ss : TrnTiles.starts(call, st)) {
                        for (long[] ms : TrnTiles.starts(call, mv)) {
                            long ps = TrnTiles.boxPartition(st, ss, sBase, sK, k, sF, s);
                            long pm = TrnTiles.boxPartition(mv, ms, mBase, mK, k, mF, m);
                            if (ps < 0 || pm < 0) {
                                throw Declined.of("gemm: tile (k %d) of %s is not a %d x %d box on (P, F)", ki,
                                        ps < 0 ? st : mv, k, ps < 0 ? s : m);
                            }
                            if (ps != pm) {
                                throw Declined.of("gemm: K block %d sits on partitions from %d in %s but from %d in "
                                        + "%s; nc_matmul contracts matching partitions", ki, ps, st, pm, mv);
                            }
                        }
                    }
                }
            }
        }
    }

    private static String str(int d) {
        return Integer.toString(d);
    }

    private static long gcd(long a, long b) {
        return b == 0 ? a : gcd(b, a % b);
    }

    private static double scalar(Request call, String name) {
        JsonElement e = call.params().get(name);
        if (e == null || e.isJsonNull()) {
            throw Declined.of("gemm: %s is not a compile-time constant", name);
        }
        return e.getAsDouble();
    }
}
