package org.axe4j.schedules.trn;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.axe4j.layout.Point;
import org.axe4j.layout.Shape;
import org.axe4j.schedules.Declined;
import org.axe4j.schedules.Operand;
import org.axe4j.schedules.Request;
import org.axe4j.schedules.plan.PlanParts;

/**
 * Where the elements of a Trainium tile region sit, probed from the operand's layout: an on-chip operand (scope
 * {@code trn.sbuf} or {@code trn.psum}) maps each logical index to a (P, F) point; an HBM operand ({@code global})
 * is row-major memory, any box of which one DMA access pattern covers.
 *
 * <p>An instruction reads or writes a P x F box: {@code lenP} consecutive partitions (stride 1) times {@code lenF}
 * free elements at a constant stride. {@link #run} finds the longest such run of one logical dim: the largest
 * {@code L <= cap} dividing the extent with {@code coord(b L + i) = coord(b L) + i s} on one axis for every block
 * b (same s in all blocks, nothing else moving). {@link #boxPartition} checks that a whole tile is a P x F box.
 */
final class TrnTiles {
    static final String TARGET_KIND = "trn";
    /** Marks a decline that no Trainium case may get past: the tile breaks the hardware. */
    static final String HARDWARE_LIMIT = "breaks a Trainium hardware limit: ";

    private TrnTiles() {}

    static void requireTrn(Request call) {
        if (!TARGET_KIND.equals(call.target())) {
            throw Declined.of("target kind %s is not trn", call.target());
        }
        if (!"thread".equals(call.scope())) {
            throw Declined.of("%s: Trainium rules run at thread scope, not %s", call.op(), call.scope());
        }
    }

    /** The operand's memory scope from params.storage ({@code global} when not given). */
    static String storage(Request call, Operand o) {
        return call.storage(o.role());
    }

    static boolean onChip(Request call, Operand o) {
        String s = storage(call, o);
        return s.equals("trn.sbuf") || s.equals("trn.psum");
    }

    /** The hardware limits of an on-chip operand's whole buffer ({@link TrainiumMemory#check}), as a decline. */
    static void checkLimits(Request call, Operand o) {
        String s = storage(call, o);
        TrainiumMemory.Space space;
        if (s.equals("trn.sbuf")) {
            space = TrainiumMemory.Space.SBUF;
        } else if (s.equals("trn.psum")) {
            space = TrainiumMemory.Space.PSUM;
        } else {
            return;
        }
        try {
            TrainiumMemory.check(o.name(), o.layout(), Shape.of(o.shape()), o.elementBytes(), space);
        } catch (IllegalArgumentException e) {
            throw new Declined(call.op() + ": " + HARDWARE_LIMIT + e.getMessage());
        }
    }

    /** Every start vector the operand's region may have: run-time starts c n + b enumerated (at most 64 in all). */
    static List<long[]> starts(Request call, Operand o) {
        List<long[]> out = new ArrayList<>();
        out.add(o.start().clone());
        for (int d = 0; d < o.shape().length; d++) {
            if (!o.symbolic()[d]) {
                continue;
            }
            List<long[]> next = new ArrayList<>();
            for (long[] s : out) {
                for (long v : o.runTimeStarts()[d].valuesIn(0, o.shape()[d] - o.extent()[d] + 1)) {
                    long[] t = s.clone();
                    t[d] = v;
                    next.add(t);
                }
            }
            if (next.size() > 64 || next.isEmpty()) {
                throw Declined.of("%s: %s starts at run time in dim %d with %d possible starts; the Trainium rules "
                        + "check each start and take at most 64", call.op(), o, d, next.size());
            }
            out = next;
        }
        return out;
    }

    /** {P, F} of region index {@code idx} (relative to {@code start}). */
    static long[] pf(Operand o, long[] start, long[] idx) {
        long[] at = new long[idx.length];
        for (int d = 0; d < idx.length; d++) {
            at[d] = start[d] + idx[d];
        }
        List<Point> points = o.layout().apply(Shape.of(o.shape()), at);
        Point p = points.get(0);
        return new long[] {p.get(TrainiumMemory.P), p.get(TrainiumMemory.F)};
    }

    static final long MATMUL_PARTITIONS = TrainiumMemory.PARTITIONS;
    static final int P = 0;
    static final int F = 1;

    /** A run: length, stride on its axis. */
    record Run(long length, long stride) {}

    /**
     * The longest run of dim {@code dim} on {@code axis} (P needs stride 1; F any stride but 0), at most {@code cap};
     * a length-1 run when none is longer.
     */
    static Run run(Operand o, long[] start, int dim, int axis, long cap) {
        long extent = o.extent()[dim];
        for (long len = Math.min(cap, extent); len > 1; len--) {
            if (extent % len != 0) {
                continue;
            }
            Long stride = runStride(o, start, dim, axis, len);
            if (stride != null) {
                return new Run(len, stride);
            }
        }
        return new Run(1, 0);
    }

    private static Long runStride(Operand o, long[] start, int dim, int axis, long len) {
        long[] idx = new long[o.extent().length];
        Long stride = null;
        for (long b = 0; b < o.extent()[dim] / len; b++) {
            idx[dim] = b * len;
            long[] base = pf(o, start, idx);
            idx[dim] = b * len + 1;
            long[] second = pf(o, start, idx);
            long s = second[axis] - base[axis];
            if (second[1 - axis] != base[1 - axis] || s == 0 || (axis == P && s != 1)) {
                return null;
            }
            if (stride != null && stride != s) {
                return null;
            }
            stride = s;
            for (long i = 2; i < len; i++) {
                idx[dim] = b * len + i;
                long[] q = pf(o, start, idx);
                if (q[axis] != base[axis] + i * s || q[1 - axis] != base[1 - axis]) {
                    return null;
                }
            }
        }
        return stride;
    }

    /**
     * Whether the tile at {@code base} (region index) spanning {@code lenP} along dim {@code dimP} and {@code lenF}
     * along {@code dimF} is a P x F box: the first row affine on F (every element), and every further row one
     * partition down with the same F at both of its ends (the runs of {@link #run} cover the inside).
     * Returns the partition of its first element, or -1 when it is not a box. A dim of -1 is a length-1 edge.
     */
    static long boxPartition(Operand o, long[] start, long[] base, int dimP, long lenP, int dimF, long lenF) {
        long[] b = pf(o, start, base);
        long fStride = 0;
        if (dimF >= 0 && lenF > 1) {
            long[] idx = base.clone();
            idx[dimF] += 1;
            fStride = pf(o, start, idx)[F] - b[F];
        }
        for (long i = 0; i < Math.max(1, dimP >= 0 ? lenP : 1); i++) {
            for (long j = 0; j < Math.max(1, dimF >= 0 ? lenF : 1); j += (i == 0 ? 1 : Math.max(1, lenF - 1))) {
                long[] idx = base.clone();
                if (dimP >= 0) {
                    idx[dimP] += i;
                }
                if (dimF >= 0) {
                    idx[dimF] += j;
                }
                long[] q = pf(o, start, idx);
                if (q[P] != b[P] + i || q[F] != b[F] + j * fStride) {
                    return -1;
                }
            }
        }
        return b[P];
    }

    /** A loop or instruction dim: extent and, per role, the logical dims it advances and by how much. */
    static PlanParts.TrnLoop dim(String name, long extent, Map<String, Map<String, Long>> index) {
        return new PlanParts.TrnLoop("serial", name, extent, index);
    }
}
