package org.axe4j.schedules;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reductions {@code dst[c'] = op_{c : c without axes = c'} src[c]} (sum, max, min) over an affine loop nest.
 *
 * <p>The source's non-reduced non-unit extents must equal the destination's non-unit extents. Spatial loops are
 * refined jointly for destination and source; reduced loops move the destination by 0 and are marked as
 * reductions, so they are never parallel. The vector loop is a spatial one where both move by 0 or 1; failing
 * that, a reduced loop where the source moves by 1 ({@code vector_reduce}: one partial result per lane,
 * combined after the reduced loops). A destination with replicas is declined (an
 * accumulator read-modify-write would have to keep every copy in step).
 */
public final class ReduceRule implements Rule {
    public static final ReduceRule INSTANCE = new ReduceRule();

    public String variant() {
        return "axe4j-cpu-reduce";
    }

    public int priority() {
        return 10;
    }

    public Map<String, Object> plan(Request call) {
        Rule.requireCpuThread(call);
        Operand dst = call.operand("dst");
        Operand src = call.operand("src0");
        int rank = src.shape().length;
        boolean[] reduced = new boolean[rank];
        for (long a : call.longsParam("axes")) {
            if (a < 0 || a >= rank) {
                throw Declined.of("%s: axis %d outside the source rank %d", call.op(), a, rank);
            }
            reduced[(int) a] = true;
        }
        if (!dst.layout().replica().isEmpty()) {
            throw Declined.of("%s: destination layout %s has replicas", call.op(), dst.layout());
        }
        AffineAccess da = AffineAccess.of(dst);
        AffineAccess sa = AffineAccess.of(src);
        int[] dstDims = dst.loopDims();
        List<Integer> spatial = new ArrayList<>();
        for (int d = 0; d < rank; d++) {
            if (!reduced[d] && src.extent()[d] != 1) {
                spatial.add(d);
            }
        }
        long[] spatialExtents = spatial.stream().mapToLong(d -> src.extent()[d]).toArray();
        if (!Arrays.equals(spatialExtents, dst.loopExtents())) {
            throw Declined.of("%s: kept source extents %s differ from destination extents %s", call.op(),
                    Arrays.toString(spatialExtents), Arrays.toString(dst.loopExtents()));
        }
        List<LoopNest.Loop> loops = new ArrayList<>();
        for (int k = 0; k < spatial.size(); k++) {
            loops.addAll(LoopNest.refine(List.of(da.dims().get(dstDims[k]), sa.dims().get(spatial.get(k))),
                    spatialExtents[k], false, call.op() + " kept dim " + spatial.get(k)));
        }
        for (int d = 0; d < rank; d++) {
            if (reduced[d] && src.extent()[d] != 1) {
                loops.addAll(LoopNest.refine(List.of(List.of(), sa.dims().get(d)), src.extent()[d], true,
                        call.op() + " reduced dim " + d));
            }
        }
        LoopNest nest = LoopNest.schedule(loops, new boolean[] {true, true},
                ElementwiseRules.lanes(List.of(dst, src)), src.elements(), true);
        List<LoopNest.Loop> planned = nest.loops();
        LoopNest.Loop last = planned.isEmpty() ? null : planned.get(planned.size() - 1);
        Map<String, Object> plan = new LinkedHashMap<>();
        plan.put("kind", "reduce");
        plan.put("combine", call.op());
        plan.put("init", !call.flag("accum"));
        plan.put("vector_reduce", last != null && last.reduces() && last.kind().equals("vectorized"));
        plan.put("loops", nest.describe(List.of("dst", "src0")));
        plan.put("access", ElementwiseRules.accessMap(List.of(dst, src), List.of(da, sa)));
        plan.put("tail", nest.tail());
        plan.put("notes", nest.notes());
        return plan;
    }
}
