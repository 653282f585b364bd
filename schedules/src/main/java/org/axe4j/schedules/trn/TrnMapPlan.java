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
 * The instruction tile of a Trainium copy, element-wise op or F reduction, found from the operands' layouts.
 *
 * <p>Iteration space E (per dim, the largest operand extent; an operand of extent 1 in a dim is broadcast along
 * it). The P dim is the dim whose common P run over the on-chip operands is longest (gcd of each operand's
 * {@link TrnTiles#run}, at most 128 partitions); the F dim the other dim with the longest common F run (the
 * reduced dim for a reduction, whose run must then be the whole extent). Every other dim, and the blocks of the P
 * and F runs, are loops around one instruction per tile. Each tile of each on-chip operand, at every start the
 * region may have, is checked to be a P x F box ({@link TrnTiles#boxPartition}); engine instructions also need
 * their operands on the same partitions.
 */
final class TrnMapPlan {
    private TrnMapPlan() {}

    static final long FREE_CAP = 1 << 16;

    static TrnPlan plan(Request call, List<Operand> ops, int reduceDim, boolean samePartitions,
            String instruction) {
        Operand dst = ops.get(0);
        int rank = dst.shape().length;
        long[] e = new long[rank];
        for (Operand o : ops) {
            if (o.shape().length != rank) {
                throw Declined.of("%s: operands of different rank (%s, %s)", call.op(), dst, o);
            }
            for (int d = 0; d < rank; d++) {
                e[d] = Math.max(e[d], o.extent()[d]);
            }
        }
        for (Operand o : ops) {
            for (int d = 0; d < rank; d++) {
                if (o.extent()[d] != e[d] && o.extent()[d] != 1) {
                    throw Declined.of("%s: %s has extent %d in dim %d, neither %d nor 1 (broadcast)", call.op(), o,
                            o.extent()[d], d, e[d]);
                }
            }
        }
        List<Operand> chip = new ArrayList<>();
        for (Operand o : ops) {
            if (TrnTiles.onChip(call, o)) {
                TrnTiles.checkLimits(call, o);
                chip.add(o);
            }
        }
        if (chip.isEmpty()) {
            throw Declined.of("%s: no operand is on chip (SBUF or PSUM); HBM to HBM is not a Trainium instruction",
                    call.op());
        }
        // P dim: longest common P run (an on-chip operand broadcast along it cannot take it)
        int dimP = -1;
        long lenP = 1;
        for (int d = 0; d < rank; d++) {
            if (e[d] == 1 || d == reduceDim) {
                continue;
            }
            long common = common(chip, d, TrnTiles.P, TrnTiles.MATMUL_PARTITIONS, e[d]);
            if (common > lenP) {
                dimP = d;
                lenP = common;
            }
        }
        if (reduceDim >= 0 && dimP < 0 && e[reduceDim] > 1 && common(chip, reduceDim, TrnTiles.P, 128, e[reduceDim]) > 1) {
            throw Declined.of("%s: the reduced dim %d lies on partitions (P) in %s; this rule reduces along F only",
                    call.op(), reduceDim, chip.get(0));
        }
        int dimF = -1;
        long lenF = 1;
        for (int d = 0; d < rank; d++) {
            if (d == dimP || e[d] == 1 || (reduceDim >= 0 && d != reduceDim)) {
                continue;
            }
            long common = common(chip, d, TrnTiles.F, FREE_CAP, e[d]);
            if (common > lenF || dimF < 0) {
                dimF = d;
                lenF = common;
            }
        }
        if (reduceDim >= 0 && e[reduceDim] > 1 && (dimF != reduceDim || lenF != e[reduceDim])) {
            throw Declined.of("%s: the reduced dim %d (extent %d) is not one F run in %s (longest run %d); "
                    + "tensor_reduce reduces one run along F", call.op(), reduceDim, e[reduceDim], chip, lenF);
        }
        List<PlanParts.TrnLoop> loops = new ArrayList<>();
        for (int d = 0; d < rank; d++) {
            if (d != dimP && d != dimF && e[d] > 1) {
                loops.add(TrnTiles.dim("d" + d, e[d], index(ops, d, 1)));
            }
        }
        if (dimP >= 0 && e[dimP] / lenP > 1) {
            loops.add(TrnTiles.dim("p_block", e[dimP] / lenP, index(ops, dimP, lenP)));
        }
        if (dimF >= 0 && e[dimF] / lenF > 1) {
            loops.add(TrnTiles.dim("f_block", e[dimF] / lenF, index(ops, dimF, lenF)));
        }
        List<PlanParts.TrnLoop> inst = new ArrayList<>();
        inst.add(TrnTiles.dim("P", lenP, dimP >= 0 ? index(ops, dimP, 1) : Map.of()));
        inst.add(TrnTiles.dim("F", lenF, dimF >= 0 ? index(ops, dimF, 1) : Map.of()));
        long tiles = verify(call, ops, chip, e, loops, dimP, lenP, dimF, lenF, samePartitions);
        return TrnPlan.map(instruction, loops, inst, List.of(tiles + " x " + instruction + " of " + lenP
                + " partitions x " + lenF + " free elements (P dim " + dimP + ", F dim " + dimF + ")"));
    }

    private static long common(List<Operand> chip, int d, int axis, long cap, long extent) {
        long g = 0;
        for (Operand o : chip) {
            if (o.extent()[d] == 1) {
                if (axis == TrnTiles.P) {
                    return 1;
                }
                continue;
            }
            g = gcd(g, TrnTiles.run(o, o.start(), d, axis, cap).length());
        }
        return g == 0 ? 1 : g;
    }

    private static long gcd(long a, long b) {
        return b == 0 ? a : gcd(b, a % b);
    }

    /** {role: {dim: stride}} for every operand not broadcast along {@code d}. */
    private static Map<String, Map<String, Long>> index(List<Operand> ops, int d, long stride) {
        Map<String, Map<String, Long>> m = new LinkedHashMap<>();
        for (Operand o : ops) {
            if (o.extent()[d] != 1) {
                m.put(o.role(), Map.of(Integer.toString(d), stride));
            }
        }
        return m;
    }

    /** Checks every tile of every on-chip operand at every start; returns the number of tiles. */
    private static long verify(Request call, List<Operand> ops, List<Operand> chip, long[] e,
            List<PlanParts.TrnLoop> loops, int dimP, long lenP, int dimF, long lenF, boolean samePartitions) {
        long tiles = 1;
        for (PlanParts.TrnLoop l : loops) {
            tiles *= l.extent();
        }
        Map<String, List<long[]>> starts = new LinkedHashMap<>();
        for (Operand o : chip) {
            starts.put(o.role(), TrnTiles.starts(call, o));
        }
        long[] counter = new long[loops.size()];
        for (long t = 0; t < tiles; t++) {
            long rest = t;
            for (int i = loops.size() - 1; i >= 0; i--) {
                long ext = loops.get(i).extent();
                counter[i] = rest % ext;
                rest /= ext;
            }
            Long partition = null;
            for (Operand o : chip) {
                long[] base = new long[e.length];
                for (int i = 0; i < loops.size(); i++) {
                    Map<String, Long> idx = loops.get(i).index().get(o.role());
                    if (idx != null) {
                        for (Map.Entry<String, Long> x : idx.entrySet()) {
                            base[Integer.parseInt(x.getKey())] += counter[i] * x.getValue();
                        }
                    }
                }
                int dp = dimP >= 0 && o.extent()[dimP] != 1 ? dimP : -1;
                int df = dimF >= 0 && o.extent()[dimF] != 1 ? dimF : -1;
                for (long[] start : starts.get(o.role())) {
                    long part = TrnTiles.boxPartition(o, start, base, dp, lenP, df, lenF);
                    if (part < 0) {
                        throw Declined.of("%s: tile %d of %s (layout %s) is not a %d x %d box on (P, F)", call.op(), t,
                                o, o.layout(), lenP, lenF);
                    }
                    if (samePartitions && partition != null && part != partition) {
                        throw Declined.of("%s: tile %d starts on partition %d in %s but %d in another operand; the "
                                + "engines read and write the same partitions (a change of partitions is a "
                                + "transpose through the TensorEngine)", call.op(), t, part, o, partition);
                    }
                    partition = part;
                }
            }
        }
        return tiles;
    }
}
