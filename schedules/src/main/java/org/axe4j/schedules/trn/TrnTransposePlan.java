package org.axe4j.schedules.trn;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.axe4j.schedules.Declined;
import org.axe4j.schedules.Operand;
import org.axe4j.schedules.Request;
import org.axe4j.schedules.plan.PlanParts;
import org.axe4j.schedules.plan.TrnPlan;

/**
 * A copy that moves a tile's partition dim to its free dim and back, through the TensorEngine: per tile,
 * {@code nc_matmul(out, stationary = src[p, f], moving = identity[p, p'])} gives out[f, p] = src[p, f] (the
 * stationary free dim becomes the output partitions), into the PSUM destination itself or a PSUM workspace
 * ({@code acc_psum}) followed by a {@code tensor_copy} into the SBUF destination. The identity is the workspace
 * {@code identity} (SBUF, its rows on partitions).
 *
 * <p>Tile: kp = the common run of src's P dim (on P in src, on F in dst, at most 128 and one PSUM bank), kf = the
 * common run of src's F dim (on F in src, on P in dst, at most 128 output partitions). Each src tile must start
 * on partition 0 (the identity's rows are 0..kp-1).
 */
final class TrnTransposePlan {
    private TrnTransposePlan() {}

    static TrnPlan plan(Request call, Operand dst, Operand src) {
        if (!TrnTiles.storage(call, src).equals("trn.sbuf")) {
            throw Declined.of("copy: a transpose reads its source from SBUF (the TensorEngine's input), not %s",
                    TrnTiles.storage(call, src));
        }
        int[] sd = src.loopDims();
        int[] dd = dst.loopDims();
        if (sd.length != 2 || !java.util.Arrays.equals(sd, dd)) {
            throw Declined.of("copy: a transpose of 2-D tiles with the same dims, not %s <- %s", dst, src);
        }
        int sp = TrnTiles.run(src, src.start(), sd[0], TrnTiles.P, 128).length() >= TrnTiles.run(src, src.start(),
                sd[1], TrnTiles.P, 128).length() ? sd[0] : sd[1];
        int sf = sp == sd[0] ? sd[1] : sd[0];
        Operand ident = call.find("identity").orElseThrow(() -> Declined.of("copy: %s <- %s moves the partition "
                + "dim to F: a transpose through the TensorEngine, which needs workspace={'identity': an SBUF "
                + "identity matrix}", dst, src));
        boolean viaPsum = !TrnTiles.storage(call, dst).equals("trn.psum");
        Operand psum = null;
        if (viaPsum) {
            psum = call.find("acc_psum").orElseThrow(() -> Declined.of("copy: a transpose into SBUF %s goes through "
                    + "PSUM: give workspace={'acc_psum': a float32 PSUM tile}", dst));
            if (!TrnTiles.storage(call, psum).equals("trn.psum") || !psum.dtype().equals("float32")) {
                throw Declined.of("copy: workspace acc_psum %s must be a float32 PSUM tile", psum);
            }
        }
        if (!ident.dtype().equals(src.dtype()) || !TrnTiles.storage(call, ident).equals("trn.sbuf")) {
            throw Declined.of("copy: the identity %s must be an SBUF %s tile like the source", ident, src.dtype());
        }
        Operand out = viaPsum ? psum : dst;
        long bank = TrainiumMemory.PSUM_BANK_BYTES / 4;
        long kp = gcd(TrnTiles.run(src, src.start(), sp, TrnTiles.P, 128).length(),
                TrnTiles.run(dst, dst.start(), sp, TrnTiles.F, bank).length());
        long kf = gcd(TrnTiles.run(src, src.start(), sf, TrnTiles.F, 128).length(),
                TrnTiles.run(dst, dst.start(), sf, TrnTiles.P, 128).length());
        kp = Math.min(kp, Math.min(ident.extent()[0], ident.extent()[1]));
        while (src.extent()[sp] % kp != 0) {
            kp--;
        }
        if (viaPsum) {
            kp = fit(kp, psum.extent()[1], src.extent()[sp]);
            kf = fit(kf, psum.extent()[0], src.extent()[sf]);
        }
        String outP = viaPsum ? "0" : Integer.toString(sf);
        String outF = viaPsum ? "1" : Integer.toString(sp);
        Map<String, Map<String, Long>> pBlock = new LinkedHashMap<>();
        pBlock.put("src0", Map.of(Integer.toString(sp), kp));
        pBlock.put("dst", Map.of(Integer.toString(sp), kp));
        Map<String, Map<String, Long>> fBlock = new LinkedHashMap<>();
        fBlock.put("src0", Map.of(Integer.toString(sf), kf));
        fBlock.put("dst", Map.of(Integer.toString(sf), kf));
        List<PlanParts.TrnLoop> loops = new ArrayList<>();
        loops.add(TrnTiles.dim("p_block", src.extent()[sp] / kp, pBlock));
        loops.add(TrnTiles.dim("f_block", src.extent()[sf] / kf, fBlock));
        List<PlanParts.TrnLoop> matmul = List.of(
                TrnTiles.dim("P", kp, Map.of("src0", Map.of(Integer.toString(sp), 1L), "identity", Map.of("0", 1L))),
                TrnTiles.dim("lhs_F", kf, Map.of("src0", Map.of(Integer.toString(sf), 1L), out.role(),
                        Map.of(outP, 1L))),
                TrnTiles.dim("rhs_F", kp, Map.of("identity", Map.of("1", 1L), out.role(), Map.of(outF, 1L))));
        List<PlanParts.TrnLoop> memset = List.of(
                TrnTiles.dim("P", kf, Map.of(out.role(), Map.of(outP, 1L))),
                TrnTiles.dim("F", kp, Map.of(out.role(), Map.of(outF, 1L))));
        List<PlanParts.TrnLoop> copy = List.of(
                TrnTiles.dim("P", kf, Map.of("dst", Map.of(Integer.toString(sf), 1L), "acc_psum", Map.of("0", 1L))),
                TrnTiles.dim("F", kp, Map.of("dst", Map.of(Integer.toString(sp), 1L), "acc_psum", Map.of("1", 1L))));
        verify(call, src, sp, sf, kp, kf, dst);
        long tiles = (src.extent()[sp] / kp) * (src.extent()[sf] / kf);
        return new TrnPlan("transpose", null, null, null, out.role(), loops, null, matmul, memset,
                viaPsum ? copy : List.of(), null, List.of(tiles + " x transpose of " + kp + " x " + kf + " through the TensorEngine "
                + "(nc_matmul against the identity" + (viaPsum ? ", then tensor_copy from PSUM)" : ")")));
    }

    private static long fit(long k, long room, long extent) {
        long v = Math.min(k, room);
        while (extent % v != 0) {
            v--;
        }
        return v;
    }

    private static void verify(Request call, Operand src, int sp, int sf, long kp, long kf, Operand dst) {
        for (long i = 0; i < src.extent()[sp] / kp; i++) {
            for (long j = 0; j < src.extent()[sf] / kf; j++) {
                long[] base = new long[src.extent().length];
                base[sp] = i * kp;
                base[sf] = j * kf;
                for (long[] start : TrnTiles.starts(call, src)) {
                    long part = TrnTiles.boxPartition(src, start, base, sp, kp, sf, kf);
                    if (part != 0) {
                        throw Declined.of("copy: transpose tile (%d, %d) of %s %s; the identity's rows start at "
                                + "partition 0", i, j, src, part < 0 ? "is not a P x F box" : "starts on partition "
                                + part);
                    }
                }
                for (long[] start : TrnTiles.starts(call, dst)) {
                    if (TrnTiles.boxPartition(dst, start, base, sf, kf, sp, kp) < 0) {
                        throw Declined.of("copy: transpose tile (%d, %d) of %s is not a %d x %d box on (P, F)", i, j,
                                dst, kf, kp);
                    }
                }
            }
        }
    }

    private static long gcd(long a, long b) {
        return b == 0 ? a : gcd(b, a % b);
    }
}
