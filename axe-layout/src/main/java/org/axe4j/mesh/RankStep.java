package org.axe4j.mesh;

/**
 * One rank's part of one plan step. The rank packs {@code in[send[i]]} into a send buffer (for the reduction and
 * all-to-all steps ordered by group member), runs {@code kind} on the communicator of {@code group} (rank ids, in
 * member order), and keeps the result as buffer {@code out} of {@code outSize} elements.
 * {@code sendCounts}/{@code recvCounts} are per member (all-to-all); {@code root} is the member index that sends
 * (broadcast). {@code elements} is what this rank receives from other ranks, in elements.
 */
public record RankStep(Collective kind, int[] group, String in, String out, int[] send, int[] sendCounts,
        int[] recvCounts, int root, int outSize, long elements) {}
