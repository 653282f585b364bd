package org.axe4j.mesh;

import java.util.List;

/**
 * One rank's part of one plan step. The rank packs the offsets of the boxes {@code send} of buffer {@code in}, in
 * order, into a send buffer (for the reduction and all-to-all steps ordered by group member), runs {@code kind} on
 * the communicator of {@code group} (rank ids, in member order), and keeps the result as buffer {@code out} of
 * {@code outSize} elements. {@code sendCounts}/{@code recvCounts} are per member (all-to-all; for a reduce-scatter
 * both are the block each member receives); {@code root} is the member index that sends (broadcast).
 * {@code elements} is what this rank receives from other ranks, in elements.
 */
public record RankStep(Collective kind, int[] group, String in, String out, List<Box> send, long[] sendCounts,
        long[] recvCounts, int root, long outSize, long elements) {
    public RankStep {
        send = List.copyOf(send);
    }

    public long sendSize() {
        return send.stream().mapToLong(Box::size).sum();
    }
}
