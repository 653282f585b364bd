package org.axe4j.schedules;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The dims and loops of a reduction {@code dst[c'] = op_{c : c without axes = c'} src[c]}, shared by the CPU and
 * CUDA rules: the reduced dims come from the {@code axes} parameter, the kept source dims must match the
 * destination's non-unit extents.
 */
public final class ReductionLoops {
    private ReductionLoops() {}

    public static boolean[] reducedDims(Request call, Operand src) {
        int rank = src.shape().length;
        boolean[] reduced = new boolean[rank];
        for (long a : call.longsParam("axes")) {
            if (a < 0 || a >= rank) {
                throw Declined.of("%s: axis %d outside the source rank %d", call.op(), a, rank);
            }
            reduced[(int) a] = true;
        }
        return reduced;
    }

    /** The source dims kept (not reduced, extent > 1); their extents must be the destination's non-unit extents. */
    public static List<Integer> keptDims(Request call, Operand src, Operand dst, boolean[] reduced) {
        List<Integer> spatial = new ArrayList<>();
        for (int d = 0; d < reduced.length; d++) {
            if (!reduced[d] && src.extent()[d] != 1) {
                spatial.add(d);
            }
        }
        long[] spatialExtents = spatial.stream().mapToLong(d -> src.extent()[d]).toArray();
        if (!Arrays.equals(spatialExtents, dst.loopExtents())) {
            throw Declined.of("%s: kept source extents %s differ from destination extents %s", call.op(),
                    Arrays.toString(spatialExtents), Arrays.toString(dst.loopExtents()));
        }
        return spatial;
    }

    /**
     * Kept loops (destination and source refined together) then reduced loops (the destination moves by 0),
     * strides ordered (dst, src0).
     */
    public static List<LoopNest.Loop> loops(Request call, Operand dst, Operand src, AffineAccess da, AffineAccess sa,
            boolean[] reduced) {
        int[] dstDims = dst.loopDims();
        List<Integer> spatial = keptDims(call, src, dst, reduced);
        long[] spatialExtents = spatial.stream().mapToLong(d -> src.extent()[d]).toArray();
        List<LoopNest.Loop> loops = new ArrayList<>();
        for (int k = 0; k < spatial.size(); k++) {
            loops.addAll(LoopNest.refine(List.of(da.dims().get(dstDims[k]), sa.dims().get(spatial.get(k))),
                    spatialExtents[k], false, call.op() + " kept dim " + spatial.get(k)));
        }
        for (int d = 0; d < src.shape().length; d++) {
            if (reduced[d] && src.extent()[d] != 1) {
                loops.addAll(LoopNest.refine(List.of(List.of(), sa.dims().get(d)), src.extent()[d], true,
                        call.op() + " reduced dim " + d));
            }
        }
        return loops;
    }
}
