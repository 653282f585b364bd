package org.axe4j.schedules.trn;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.axe4j.schedules.Declined;
import org.axe4j.schedules.Operand;
import org.axe4j.schedules.Request;
import org.axe4j.schedules.plan.PlanParts;
import org.axe4j.schedules.plan.TrnPlan;

/**
 * {@code sum} along a dim that lies on partitions, on the TensorEngine: dst(1, F) = ones^T(1, P) src(P, F), a
 * gemm whose stationary operand is a ones column (the workspace {@code ones}, SBUF, 128 x 1, the source dtype), so
 * the contraction over partitions is the sum. Tile: k = the source's P run of the reduced dim (<= 128), n = the
 * common F run of the kept dim in the source and the output (<= 512, one PSUM bank). Per n block: memset the
 * output, one {@code nc_matmul} per k block accumulating, then, for an SBUF destination, a {@code tensor_copy} from
 * the workspace PSUM tile {@code acc_psum}. Each source tile must start on partition 0 (the ones' rows).
 */
final class TrnPartitionSum {
    private TrnPartitionSum() {}

    static TrnPlan plan(Request call, Operand dst, Operand src, int rp) {
        if (!call.op().equals("sum")) {
            throw Declined.of("%s: the reduced dim %d lies on partitions in %s; only sum crosses partitions (on the "
                    + "TensorEngine): copy the tile to a layout with that dim on F, then reduce along F", call.op(),
                    rp, src);
        }
        int[] dims = src.loopDims();
        if (dims.length != 2) {
            throw Declined.of("sum: a partition reduction of a 2-D tile, not %s", src);
        }
        int fd = dims[0] == rp ? dims[1] : dims[0];
        Operand ones = call.find("ones").orElseThrow(() -> Declined.of("sum: the reduced dim %d of %s lies on "
                + "partitions: a TensorEngine sum, which needs workspace={'ones': an SBUF column of ones}", rp, src));
        if (!TrnTiles.storage(call, ones).equals("trn.sbuf") || !ones.dtype().equals(src.dtype())) {
            throw Declined.of("sum: the ones column %s must be an SBUF %s tile like the source", ones, src.dtype());
        }
        if (!TrnTiles.storage(call, src).equals("trn.sbuf")) {
            throw Declined.of("sum: the TensorEngine reads its source from SBUF, not %s", TrnTiles.storage(call, src));
        }
        boolean viaPsum = !TrnTiles.storage(call, dst).equals("trn.psum");
        Operand out = dst;
        if (viaPsum) {
            out = call.find("acc_psum").orElseThrow(() -> Declined.of("sum: a TensorEngine sum into SBUF %s goes "
                    + "through PSUM: give workspace={'acc_psum': a float32 PSUM tile}", dst));
        }
        if (!out.dtype().equals("float32")) {
            throw Declined.of("sum: the PSUM output %s must be float32", out);
        }
        long k = Math.min(TrnTiles.run(src, src.start(), rp, TrnTiles.P, 128).length(), ones.extent()[0]);
        while (src.extent()[rp] % k != 0) {
            k--;
        }
        String outF = viaPsum ? "1" : Integer.toString(fd);
        long n = gcd(TrnTiles.run(src, src.start(), fd, TrnTiles.F, TrainiumMemory.MATMUL_MOVING_FREE).length(),
                viaPsum ? out.extent()[1] : TrnTiles.run(dst, dst.start(), fd, TrnTiles.F, 512).length());
        while (src.extent()[fd] % n != 0) {
            n--;
        }
        String f = Integer.toString(fd);
        String r = Integer.toString(rp);
        Map<String, Map<String, Long>> nIndex = new LinkedHashMap<>();
        nIndex.put("src0", Map.of(f, n));
        nIndex.put("dst", Map.of(f, n));
        List<PlanParts.TrnLoop> loops = List.of(TrnTiles.dim("n_block", src.extent()[fd] / n, nIndex));
        PlanParts.TrnLoop kLoop = TrnTiles.dim("k_block", src.extent()[rp] / k, Map.of("src0", Map.of(r, k)));
        List<PlanParts.TrnLoop> inst = List.of(
                TrnTiles.dim("P", k, Map.of("ones", Map.of("0", 1L), "src0", Map.of(r, 1L))),
                TrnTiles.dim("lhs_F", 1, Map.of()),
                TrnTiles.dim("rhs_F", n, Map.of("src0", Map.of(f, 1L), out.role(), Map.of(outF, 1L))));
        List<PlanParts.TrnLoop> memset = List.of(TrnTiles.dim("P", 1, Map.of()),
                TrnTiles.dim("F", n, Map.of(out.role(), Map.of(outF, 1L))));
        List<PlanParts.TrnLoop> copy = List.of(TrnTiles.dim("P", 1, Map.of()),
                TrnTiles.dim("F", n, Map.of("dst", Map.of(f, 1L), "acc_psum", Map.of("1", 1L))));
        for (long i = 0; i < src.extent()[fd] / n; i++) {
            for (long j = 0; j < src.extent()[rp] / k; j++) {
                long[] base = new long[src.extent().length];
                base[fd] = i * n;
                base[rp] = j * k;
                for (long[] start : TrnTiles.starts(call, src)) {
                    if (TrnTiles.boxPartition(src, start, base, rp, k, fd, n) != 0) {
                        throw Declined.of("sum: tile (%d, %d) of %s is not a %d x %d box from partition 0", i, j, src,
                                k, n);
                    }
                }
            }
        }
        return new TrnPlan("matmul", null, "ones", "src0", out.role(), loops, kLoop, inst, memset,
                viaPsum ? copy : List.of(), null, List.of((src.extent()[fd] / n) * (src.extent()[rp] / k) + " x nc_matmul of a ones column: "
                + k + " partitions summed x " + n + " free elements" + (viaPsum ? ", then tensor_copy from PSUM" : "")));
    }

    private static long gcd(long a, long b) {
        return b == 0 ? a : gcd(b, a % b);
    }
}
