package org.axe4j.mesh;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Executes a plan in one process, with each collective written out from its definition, and measures what each
 * rank receives from other ranks (from the buffers, not from the plan's counts).
 */
final class Simulator {
    final double[][] dst;
    final long[] received; // elements per rank

    private Simulator(double[][] dst, long[] received) {
        this.dst = dst;
        this.received = received;
    }

    static Simulator run(Plan plan, double[][] src) {
        int n = plan.rankCount();
        List<Map<String, double[]>> bufs = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            Map<String, double[]> m = new HashMap<>();
            m.put("src", src[r]);
            bufs.add(m);
        }
        long[] received = new long[n];
        for (int s = 0; s < plan.steps().size(); s++) {
            double[][] send = new double[n][];
            for (int r = 0; r < n; r++) {
                RankStep st = plan.rankSteps().get(r).get(s);
                double[] in = bufs.get(r).get(st.in());
                long[] at = offsets(st.send());
                send[r] = new double[at.length];
                for (int i = 0; i < send[r].length; i++) {
                    send[r][i] = in[(int) at[i]];
                }
            }
            for (int r = 0; r < n; r++) {
                RankStep st = plan.rankSteps().get(r).get(s);
                int[] g = st.group();
                int p = g.length;
                int k = indexOf(g, r);
                double[] out = new double[(int) st.outSize()];
                switch (st.kind()) {
                    case REDUCE_SCATTER -> {
                        // variable counts: member m's send buffer is the blocks of members 0..p-1 in order
                        int start = 0;
                        for (int q = 0; q < k; q++) {
                            start += (int) st.recvCounts()[q];
                        }
                        int b = (int) st.recvCounts()[k];
                        for (int m : g) {
                            RankStep other = plan.rankSteps().get(m).get(s);
                            check(java.util.Arrays.equals(other.recvCounts(), st.recvCounts()), "reduce_scatter counts differ");
                            check(send[m].length == java.util.Arrays.stream(st.recvCounts()).sum(), "reduce_scatter send size");
                            for (int i = 0; i < b; i++) {
                                out[i] += send[m][start + i];
                            }
                        }
                        check(out.length == b, "reduce_scatter block size");
                        received[r] += (long) (p - 1) * b;
                    }
                    case ALL_REDUCE -> {
                        for (int m : g) {
                            check(send[m].length == out.length, "all_reduce sizes");
                            for (int i = 0; i < out.length; i++) {
                                out[i] += send[m][i];
                            }
                        }
                        long bk = out.length / p + (k < out.length % p ? 1 : 0);
                        received[r] += (p - 1) * bk + out.length - bk;
                    }
                    case ALL_GATHER -> {
                        int at = 0;
                        for (int m : g) {
                            check(send[m].length == send[r].length, "all_gather blocks differ");
                            System.arraycopy(send[m], 0, out, at, send[m].length);
                            at += send[m].length;
                        }
                        check(at == out.length, "all_gather size");
                        received[r] += out.length - send[r].length;
                    }
                    case BROADCAST -> {
                        double[] root = send[g[st.root()]];
                        check(root.length == out.length, "broadcast size");
                        System.arraycopy(root, 0, out, 0, out.length);
                        received[r] += k == st.root() ? 0 : out.length;
                    }
                    case ALL_TO_ALL -> {
                        int at = 0;
                        for (int b = 0; b < p; b++) {
                            RankStep other = plan.rankSteps().get(g[b]).get(s);
                            int start = 0;
                            for (int q = 0; q < k; q++) {
                                start += (int) other.sendCounts()[q];
                            }
                            int c = (int) other.sendCounts()[k];
                            check(c == st.recvCounts()[b], "all_to_all counts disagree");
                            System.arraycopy(send[g[b]], start, out, at, c);
                            at += c;
                            if (b != k) {
                                received[r] += c;
                            }
                        }
                    }
                    case IDLE -> { }
                }
                bufs.get(r).put(st.out() + "#" + s, out);
            }
            for (int r = 0; r < n; r++) {
                RankStep st = plan.rankSteps().get(r).get(s);
                bufs.get(r).put(st.out(), bufs.get(r).remove(st.out() + "#" + s));
            }
        }
        double[][] dst = new double[n][];
        for (int r = 0; r < n; r++) {
            dst[r] = new double[(int) plan.dstSize(r)];
            for (Copy c : plan.copies().get(r)) {
                double[] from = bufs.get(r).get(c.from());
                for (BoxPair pair : c.pairs()) {
                    long[] at = pair.from().offsets();
                    long[] to = pair.to().offsets();
                    for (int i = 0; i < at.length; i++) {
                        dst[r][(int) to[i]] = from[(int) at[i]];
                    }
                }
            }
        }
        return new Simulator(dst, received);
    }

    /** Every offset of the boxes, in order. */
    static long[] offsets(java.util.List<Box> boxes) {
        return boxes.stream().flatMapToLong(b -> java.util.Arrays.stream(b.offsets())).toArray();
    }

    private static int indexOf(int[] g, int r) {
        for (int i = 0; i < g.length; i++) {
            if (g[i] == r) {
                return i;
            }
        }
        throw new AssertionError("rank " + r + " not in its own group");
    }

    private static void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }
}
