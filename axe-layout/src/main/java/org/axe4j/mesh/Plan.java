package org.axe4j.mesh;

import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.axe4j.layout.Checks;

/**
 * A redistribution plan: global steps (which collectives, over which mesh dimensions), each rank's part of every
 * step, and each rank's final local copies. Every rank takes part in every step (its sub-group may be idle), so
 * the ranks call the same sequence of communicator splits. {@link PlanJson} writes it; {@link #explain} prints it.
 */
public record Plan(DistTensor src, DistTensor dst, int elementBytes, String planner, String note,
        List<Step> steps, List<List<RankStep>> rankSteps, List<List<Copy>> copies, List<RankMaps> maps,
        List<LocalShard> srcShards, List<LocalShard> dstShards, long minimumElements) {
    /** {@link #planner} of the symbolic planner (plan size independent of the tensor). */
    public static final String SYMBOLIC = "symbolic";
    /** {@link #planner} of the element-wise planner (the fallback when no usable common refinement exists). */
    public static final String ELEMENT = "element";

    /** One step: the collectives its sub-groups run, the mesh dims spanning a sub-group, the buffer it makes. */
    public record Step(Set<Collective> kinds, List<Integer> meshDims, String out) {
        public String kindText() {
            return kinds.stream().map(Collective::json).collect(Collectors.joining("+"));
        }
    }

    public int rankCount() {
        return rankSteps.size();
    }

    /** Bytes rank r receives from other ranks, over all steps. */
    public long bytesReceived(int rank) {
        long bytes = 0;
        for (RankStep st : rankSteps.get(rank)) {
            bytes = Checks.add("bytes received by rank " + rank, bytes, Checks.mul("bytes of a step", st.elements(), elementBytes));
        }
        return bytes;
    }

    /** Bytes rank r receives in step s. */
    public long bytesReceived(int rank, int step) {
        return Checks.mul("bytes received by rank " + rank + " in step " + step, rankSteps.get(rank).get(step).elements(),
                elementBytes);
    }

    public long bytesTotal() {
        long t = 0;
        for (int r = 0; r < rankCount(); r++) {
            t = Checks.add("bytes moved by the plan", t, bytesReceived(r));
        }
        return t;
    }

    public boolean atMinimum() {
        return bytesTotal() == minimumBytes();
    }

    public long excessBytes() {
        return bytesTotal() - minimumBytes();
    }

    public long srcSize(int rank) {
        return maps.get(rank).srcSize();
    }

    public long dstSize(int rank) {
        return maps.get(rank).dstSize();
    }

    public long minimumBytes() {
        return Checks.mul("minimum bytes of the plan", minimumElements, elementBytes);
    }

    /**
     * The information-theoretic minimum, in element transfers, summed over global elements x with D = ranks
     * whose destination holds x and H = ranks whose source holds x:
     * <pre>
     *   not partial:                |D \ H|                      (each missing copy arrives once)
     *   partial, p summands (p > 1): (p - 1) + |D| - [D meets H]  (combine p summands, then one arrival per
     *                                                              other destination rank)
     * </pre>
     * Elements with p = 1 partial summand count as not partial.
     */
    static long minimumElements(DistTensor src, Holdings hs, Holdings hd) {
        int n = hs.rankCount();
        long p = 1;
        for (int j : src.partialDims()) {
            p *= src.mesh().dim(j);
        }
        long min = 0;
        int total = hs.where[0].length;
        for (int x = 0; x < total; x++) {
            long needers = 0;
            long missing = 0;
            boolean meets = false;
            for (int r = 0; r < n; r++) {
                if (hd.where[r][x] >= 0) {
                    needers++;
                    if (hs.where[r][x] >= 0) {
                        meets = true;
                    } else {
                        missing++;
                    }
                }
            }
            min += p > 1 ? (p - 1) + needers - (meets ? 1 : 0) : missing;
        }
        return min;
    }

    /** Human-readable plan: tensors, each rank's local shards, each step with bytes per rank, totals. */
    public String explain() {
        StringBuilder b = new StringBuilder();
        b.append("redistribute global ").append(src.globalShape()).append(" (").append(elementBytes)
                .append(" B/element) on mesh ").append(src.mesh()).append(", ").append(rankCount()).append(" ranks\n");
        b.append("  src: ").append(src.layout()).append(src.isPartial() ? "  partial over mesh dims "
                + src.partialDims() : "").append('\n');
        b.append("  dst: ").append(dst.layout()).append('\n');
        if (src.isPadded() || dst.isPadded()) {
            b.append("  padded shapes: src ").append(src.paddedShape()).append(", dst ").append(dst.paddedShape())
                    .append(" (padding is never moved)\n");
        }
        b.append("  planner: ").append(planner).append(note.isEmpty() ? "" : " (" + note + ")").append('\n');
        List<LocalShard> s = srcShards;
        List<LocalShard> d = dstShards;
        b.append("  local layouts: src ").append(s.get(0).localLayout()).append(" shape ").append(s.get(0).localShape())
                .append(", dst ").append(d.get(0).localLayout()).append(" shape ").append(d.get(0).localShape()).append('\n');
        for (int r = 0; r < rankCount(); r++) {
            b.append("  rank ").append(r).append(" mesh ").append(Arrays.toString(s.get(r).meshCoord())).append(": holds ")
                    .append(s.get(r).regionText()).append(" -> needs ").append(d.get(r).regionText()).append('\n');
        }
        for (int i = 0; i < steps.size(); i++) {
            Step st = steps.get(i);
            b.append("step ").append(i + 1).append(": ").append(st.kindText()).append(" over mesh dims ")
                    .append(st.meshDims()).append(" (groups of ").append(rankSteps.get(0).get(i).group().length)
                    .append("), bytes received per rank [");
            for (int r = 0; r < rankCount(); r++) {
                b.append(r > 0 ? ", " : "").append(bytesReceived(r, i));
            }
            b.append("]\n");
        }
        b.append("local copy: elements per rank [");
        for (int r = 0; r < rankCount(); r++) {
            b.append(r > 0 ? ", " : "").append(copies.get(r).stream().mapToLong(Copy::elements).sum());
        }
        b.append("]\n");
        b.append("total: ").append(bytesTotal()).append(" bytes moved; information-theoretic minimum ")
                .append(minimumBytes()).append(" bytes");
        b.append(atMinimum() ? " (at the minimum)\n" : " (" + excessBytes() + " bytes above it: " + note + ")\n");
        return b.toString();
    }
}
