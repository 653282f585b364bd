package org.axe4j.mesh;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.axe4j.layout.AxeException;

/**
 * The element-wise planner (the oracle of the tests, and the fallback when the source and destination radices have
 * no common refinement): plans the redistribution of one global tensor by enumerating every element, in at most
 * two communication steps and a local copy:
 * <ol>
 *   <li>Reduction (source partial over mesh dims P), on the sub-groups along P. When the destination needs each
 *       element of the group's set on at most one member and the set splits evenly, a reduce-scatter whose block
 *       k is (first) what member k needs; otherwise an all-reduce.</li>
 *   <li>Exchange: every element a rank needs and lacks comes from one holder, the one differing from it in the
 *       fewest mesh dimensions (then the lowest rank). The mesh dims J where any sender and receiver differ
 *       define the sub-groups; per group the pattern is an all-gather (each member sends one block to all),
 *       a broadcast (one sender, one block to all) or else an all-to-all.</li>
 *   <li>Local copies into the destination buffer (slicing when the destination holds less).</li>
 * </ol>
 * Each needed element crosses the network once, so a non-partial plan moves exactly the minimum
 * (see {@link Plan#minimumElements}); reduce-scatter and all-reduce are counted as the bandwidth-optimal ring
 * algorithms move data: {@code (p-1) * block} and {@code (p-1) * b_k + n - b_k} elements received.
 */
public final class ElementPlanner {
    private ElementPlanner() {}

    /** One rank's part of a step, with explicit offset lists (converted to runs for {@link Plan}). */
    private record ElemStep(Collective kind, int[] group, String in, String out, int[] send, int[] sendCounts,
            int[] recvCounts, int root, int outSize, long elements) {}

    /** Local copies: {@code dst[to[i]] = buffer(from)[at[i]]}. */
    private record ElemCopy(String from, int[] at, int[] to) {}

    /** Per-rank buffers: global element by offset and offset by element. */
    record Buf(String name, int[][] local, int[][] where) {
        static Buf of(String name, int[][] local, int elements) {
            int[][] where = new int[local.length][];
            for (int r = 0; r < local.length; r++) {
                where[r] = new int[elements];
                Arrays.fill(where[r], -1);
                for (int o = local[r].length - 1; o >= 0; o--) {
                    if (local[r][o] >= 0) {
                        where[r][local[r][o]] = o;
                    }
                }
            }
            return new Buf(name, local, where);
        }
    }

    public static Plan plan(DistTensor src, DistTensor dst, int elementBytes) {
        SymbolicPlanner.checkRequest(src, dst, elementBytes);
        Holdings hs = src.holdings();
        Holdings hd = dst.holdings();
        MeshRanks ranks = hs.ranks;
        int total = (int) src.globalShape().size();
        List<Plan.Step> steps = new ArrayList<>();
        List<List<ElemStep>> perRank = new ArrayList<>();
        for (int r = 0; r < ranks.size; r++) {
            perRank.add(new ArrayList<>());
        }
        Buf cur = new Buf("src", hs.local, hs.where);
        if (src.isPartial()) {
            cur = reduce(src.partialDims(), hs, hd, ranks, total, steps, perRank);
        }
        Buf received = exchange(cur, hd, ranks, total, steps, perRank);
        List<List<ElemCopy>> copies = copies(cur, received, hd, ranks);
        long minimum = Plan.minimumElements(src, hs, hd);
        return new Plan(src, dst, elementBytes, Plan.ELEMENT, "", steps, convert(perRank), convertCopies(copies),
                maps(src, hs, hd), LocalShard.of(hs), LocalShard.of(hd), minimum);
    }

    /** The plan with a note saying why the element-wise planner was used and why it is above the minimum. */
    static Plan plan(DistTensor src, DistTensor dst, int elementBytes, String why) {
        Plan p = plan(src, dst, elementBytes);
        String note = why + (p.atMinimum() ? "" : "; it reduces each partial group's whole element set (all-reduce,"
                + " or reduce-scatter of equal blocks) before slicing");
        return new Plan(p.src(), p.dst(), p.elementBytes(), p.planner(), note, p.steps(), p.rankSteps(), p.copies(),
                p.maps(), p.srcShards(), p.dstShards(), p.minimumElements());
    }

    private static List<List<RankStep>> convert(List<List<ElemStep>> perRank) {
        List<List<RankStep>> out = new ArrayList<>();
        for (List<ElemStep> steps : perRank) {
            List<RankStep> mine = new ArrayList<>();
            for (ElemStep st : steps) {
                long[] sc = st.sendCounts() == null ? null : Arrays.stream(st.sendCounts()).asLongStream().toArray();
                long[] rc = st.recvCounts() == null ? null : Arrays.stream(st.recvCounts()).asLongStream().toArray();
                if (st.kind() == Collective.REDUCE_SCATTER) {
                    sc = new long[st.group().length];
                    Arrays.fill(sc, st.outSize());
                    rc = sc;
                }
                mine.add(new RankStep(st.kind(), st.group(), st.in(), st.out(), runs(st.send()), sc, rc, st.root(),
                        st.outSize(), st.elements()));
            }
            out.add(mine);
        }
        return out;
    }

    private static List<List<Copy>> convertCopies(List<List<ElemCopy>> copies) {
        List<List<Copy>> out = new ArrayList<>();
        for (List<ElemCopy> cs : copies) {
            out.add(cs.stream().map(c -> new Copy(c.from(), pairs(c.at(), c.to()))).toList());
        }
        return out;
    }

    private static List<RankMaps> maps(DistTensor src, Holdings hs, Holdings hd) {
        List<RankMaps> out = new ArrayList<>();
        int total = hs.where[0].length;
        for (int r = 0; r < hs.rankCount(); r++) {
            IntList at = new IntList();
            IntList x = new IntList();
            for (int e = 0; e < total; e++) {
                if (hs.where[r][e] < 0) {
                    continue;
                }
                int first = 0;
                while (hs.where[first][e] < 0) {
                    first++;
                }
                boolean contributes = first == r;
                if (!contributes && src.isPartial()) {
                    for (int m : hs.ranks.group(first, src.partialDims())) {
                        contributes |= m == r;
                    }
                }
                if (contributes) {
                    at.add(hs.where[r][e]);
                    x.add(e);
                }
            }
            out.add(new RankMaps(hs.localSize(r), hd.localSize(r), globalMap(hs.local[r]), globalMap(hd.local[r]),
                    pairs(at.toArray(), x.toArray())));
        }
        return out;
    }

    private static List<BoxPair> globalMap(int[] local) {
        IntList at = new IntList();
        IntList x = new IntList();
        for (int o = 0; o < local.length; o++) {
            if (local[o] >= 0) {
                at.add(o);
                x.add(local[o]);
            }
        }
        return pairs(at.toArray(), x.toArray());
    }

    /** Runs of consecutive values as boxes {@code (start, [length], [1])}. */
    static List<Box> runs(int[] v) {
        List<Box> out = new ArrayList<>();
        int i = 0;
        while (i < v.length) {
            int j = i + 1;
            while (j < v.length && v[j] == v[j - 1] + 1) {
                j++;
            }
            out.add(Box.run(v[i], j - i));
            i = j;
        }
        return out;
    }

    /** Runs consecutive in both lists, as pairs of boxes. */
    static List<BoxPair> pairs(int[] from, int[] to) {
        List<BoxPair> out = new ArrayList<>();
        int i = 0;
        while (i < from.length) {
            int j = i + 1;
            while (j < from.length && from[j] == from[j - 1] + 1 && to[j] == to[j - 1] + 1) {
                j++;
            }
            out.add(new BoxPair(Box.run(from[i], j - i), Box.run(to[i], j - i)));
            i = j;
        }
        return out;
    }

    private static Buf reduce(List<Integer> dims, Holdings hs, Holdings hd, MeshRanks ranks, int total,
            List<Plan.Step> steps, List<List<ElemStep>> perRank) {
        int[][] out = new int[ranks.size][];
        Set<Collective> kinds = EnumSet.noneOf(Collective.class);
        Map<Integer, Object> done = new HashMap<>();
        for (int r0 = 0; r0 < ranks.size; r0++) {
            int[] g = ranks.group(r0, dims);
            if (done.put(g[0], Boolean.TRUE) != null) {
                continue;
            }
            int p = g.length;
            IntList elems = new IntList();
            for (int x = 0; x < total; x++) {
                if (hs.where[g[0]][x] >= 0) {
                    elems.add(x);
                }
            }
            int n = elems.size();
            boolean scatter = n % p == 0;
            for (int i = 0; i < n && scatter; i++) {
                int needers = 0;
                for (int member : g) {
                    needers += hd.where[member][elems.get(i)] >= 0 ? 1 : 0;
                }
                scatter = needers <= 1;
            }
            if (scatter) {
                IntList[] block = assignBlocks(elems, g, hd);
                for (int k = 0; k < p; k++) {
                    IntList send = new IntList();
                    for (IntList b : block) {
                        for (int i = 0; i < b.size(); i++) {
                            send.add(hs.where[g[k]][b.get(i)]);
                        }
                    }
                    out[g[k]] = block[k].toArray();
                    perRank.get(g[k]).add(new ElemStep(Collective.REDUCE_SCATTER, g, "src", "reduced", send.toArray(),
                            null, null, -1, n / p, (long) (p - 1) * (n / p)));
                }
                kinds.add(Collective.REDUCE_SCATTER);
            } else {
                for (int k = 0; k < p; k++) {
                    IntList send = new IntList();
                    for (int i = 0; i < n; i++) {
                        send.add(hs.where[g[k]][elems.get(i)]);
                    }
                    long bk = n / p + (k < n % p ? 1 : 0);
                    out[g[k]] = elems.toArray();
                    perRank.get(g[k]).add(new ElemStep(Collective.ALL_REDUCE, g, "src", "reduced", send.toArray(),
                            null, null, -1, n, (p - 1) * bk + n - bk));
                }
                kinds.add(Collective.ALL_REDUCE);
            }
        }
        steps.add(new Plan.Step(kinds, dims, "reduced"));
        return Buf.of("reduced", out, total);
    }

    /** Block k of a reduce-scatter: first the elements member k needs, then fill to n/p with unclaimed ones. */
    private static IntList[] assignBlocks(IntList elems, int[] g, Holdings hd) {
        int p = g.length;
        int cap = elems.size() / p;
        int[] owner = new int[elems.size()];
        Arrays.fill(owner, -1);
        int[] fill = new int[p];
        for (int i = 0; i < elems.size(); i++) {
            for (int k = 0; k < p; k++) {
                if (hd.where[g[k]][elems.get(i)] >= 0 && fill[k] < cap) {
                    owner[i] = k;
                    fill[k]++;
                    break;
                }
            }
        }
        int k = 0;
        for (int i = 0; i < elems.size(); i++) {
            if (owner[i] < 0) {
                while (fill[k] == cap) {
                    k++;
                }
                owner[i] = k;
                fill[k]++;
            }
        }
        IntList[] block = new IntList[p];
        for (int j = 0; j < p; j++) {
            block[j] = new IntList();
        }
        for (int i = 0; i < elems.size(); i++) {
            block[owner[i]].add(elems.get(i));
        }
        return block;
    }

    private static Buf exchange(Buf cur, Holdings hd, MeshRanks ranks, int total, List<Plan.Step> steps,
            List<List<ElemStep>> perRank) {
        int n = ranks.size;
        IntList[][] t = new IntList[n][n]; // t[h][r]: elements h sends to r, increasing
        int[][] coords = new int[n][];
        for (int r = 0; r < n; r++) {
            coords[r] = ranks.coord(r);
        }
        TreeSet<Integer> dims = new TreeSet<>();
        for (int r = 0; r < n; r++) {
            for (int x = 0; x < total; x++) {
                if (hd.where[r][x] < 0 || cur.where[r][x] >= 0) {
                    continue;
                }
                int best = -1;
                int bestDiff = Integer.MAX_VALUE;
                for (int h = 0; h < n; h++) {
                    if (cur.where[h][x] >= 0) {
                        int diff = differing(coords[h], coords[r]);
                        if (diff < bestDiff) {
                            best = h;
                            bestDiff = diff;
                        }
                    }
                }
                if (best < 0) {
                    throw new AxeException(AxeException.Kind.INVALID, "redistribute: no rank holds element "
                            + Holdings.coordText(hd.tensor, x) + " that rank " + r + " needs");
                }
                if (t[best][r] == null) {
                    t[best][r] = new IntList();
                    for (int j = 0; j < coords[r].length; j++) {
                        if (coords[r][j] != coords[best][j]) {
                            dims.add(j);
                        }
                    }
                }
                t[best][r].add(x);
            }
        }
        int[][] outLocal = new int[n][0];
        if (dims.isEmpty()) {
            return Buf.of("received", outLocal, total);
        }
        List<Integer> j = List.copyOf(dims);
        Set<Collective> kinds = EnumSet.noneOf(Collective.class);
        Map<Integer, Object> done = new HashMap<>();
        IntList empty = new IntList();
        for (int r0 = 0; r0 < n; r0++) {
            int[] g = ranks.group(r0, j);
            if (done.put(g[0], Boolean.TRUE) != null) {
                continue;
            }
            int p = g.length;
            IntList[][] s = new IntList[p][p];
            for (int a = 0; a < p; a++) {
                for (int b = 0; b < p; b++) {
                    IntList l = t[g[a]][g[b]];
                    s[a][b] = l == null ? empty : l;
                }
            }
            Collective kind = classify(s);
            kinds.add(kind);
            for (int k = 0; k < p; k++) {
                int r = g[k];
                ElemStep st = switch (kind) {
                    case IDLE -> new ElemStep(kind, g, cur.name(), "received", new int[0], null, null, -1, 0, 0);
                    case BROADCAST -> broadcast(s, k, g, cur, outLocal);
                    case ALL_GATHER -> allGather(s, k, g, cur, outLocal);
                    default -> allToAll(s, k, g, cur, outLocal);
                };
                perRank.get(r).add(st);
            }
        }
        steps.add(new Plan.Step(kinds, j, "received"));
        return Buf.of("received", outLocal, total);
    }

    private static int differing(int[] a, int[] b) {
        int d = 0;
        for (int i = 0; i < a.length; i++) {
            d += a[i] != b[i] ? 1 : 0;
        }
        return d;
    }

    /** The block member a sends to every other member, or null when it does not send one block to all. */
    private static IntList uniform(IntList[][] s, int a) {
        IntList first = null;
        for (int b = 0; b < s.length; b++) {
            if (b == a) {
                continue;
            }
            if (first == null) {
                first = s[a][b];
            } else if (!first.sameAs(s[a][b])) {
                return null;
            }
        }
        return first;
    }

    private static Collective classify(IntList[][] s) {
        int p = s.length;
        List<Integer> senders = new ArrayList<>();
        for (int a = 0; a < p; a++) {
            for (int b = 0; b < p; b++) {
                if (s[a][b].size() > 0) {
                    senders.add(a);
                    break;
                }
            }
        }
        if (senders.isEmpty()) {
            return Collective.IDLE;
        }
        if (senders.size() == 1) {
            IntList l = uniform(s, senders.get(0));
            if (l != null && l.size() > 0) {
                return Collective.BROADCAST;
            }
        }
        if (senders.size() == p) {
            Integer size = null;
            for (int a = 0; a < p; a++) {
                IntList l = uniform(s, a);
                if (l == null || (size != null && size != l.size())) {
                    return Collective.ALL_TO_ALL;
                }
                size = l.size();
            }
            return Collective.ALL_GATHER;
        }
        return Collective.ALL_TO_ALL;
    }

    private static int[] offsets(IntList elems, int[] where) {
        int[] o = new int[elems.size()];
        for (int i = 0; i < o.length; i++) {
            o[i] = where[elems.get(i)];
        }
        return o;
    }

    private static ElemStep broadcast(IntList[][] s, int k, int[] g, Buf cur, int[][] outLocal) {
        int root = 0;
        while (uniform(s, root) == null || uniform(s, root).size() == 0) {
            root++;
        }
        IntList l = uniform(s, root);
        int[] send = k == root ? offsets(l, cur.where()[g[k]]) : new int[0];
        outLocal[g[k]] = l.toArray();
        return new ElemStep(Collective.BROADCAST, g, cur.name(), "received", send, null, null, root, l.size(),
                k == root ? 0 : l.size());
    }

    private static ElemStep allGather(IntList[][] s, int k, int[] g, Buf cur, int[][] outLocal) {
        IntList all = new IntList();
        for (int a = 0; a < g.length; a++) {
            all.addAll(uniform(s, a));
        }
        IntList mine = uniform(s, k);
        outLocal[g[k]] = all.toArray();
        return new ElemStep(Collective.ALL_GATHER, g, cur.name(), "received", offsets(mine, cur.where()[g[k]]), null,
                null, -1, all.size(), all.size() - mine.size());
    }

    private static ElemStep allToAll(IntList[][] s, int k, int[] g, Buf cur, int[][] outLocal) {
        int p = g.length;
        IntList send = new IntList();
        IntList recv = new IntList();
        int[] sc = new int[p];
        int[] rc = new int[p];
        for (int b = 0; b < p; b++) {
            if (b == k) {
                continue; // a rank never sends to itself: what it holds it copies locally
            }
            sc[b] = s[k][b].size();
            for (int i = 0; i < sc[b]; i++) {
                send.add(cur.where()[g[k]][s[k][b].get(i)]);
            }
            rc[b] = s[b][k].size();
            recv.addAll(s[b][k]);
        }
        outLocal[g[k]] = recv.toArray();
        return new ElemStep(Collective.ALL_TO_ALL, g, cur.name(), "received", send.toArray(), sc, rc, -1, recv.size(),
                recv.size());
    }

    /** dst[o] comes from the current buffer where the rank holds the element, else from the received buffer. */
    private static List<List<ElemCopy>> copies(Buf cur, Buf received, Holdings hd, MeshRanks ranks) {
        List<List<ElemCopy>> out = new ArrayList<>();
        for (int r = 0; r < ranks.size; r++) {
            IntList fromCur = new IntList();
            IntList toCur = new IntList();
            IntList fromRecv = new IntList();
            IntList toRecv = new IntList();
            int[] loc = hd.local[r];
            for (int o = 0; o < loc.length; o++) {
                int x = loc[o];
                if (x < 0) {
                    continue;
                }
                if (cur.where()[r][x] >= 0) {
                    fromCur.add(cur.where()[r][x]);
                    toCur.add(o);
                } else {
                    fromRecv.add(received.where()[r][x]);
                    toRecv.add(o);
                }
            }
            List<ElemCopy> c = new ArrayList<>();
            if (fromCur.size() > 0) {
                c.add(new ElemCopy(cur.name(), fromCur.toArray(), toCur.toArray()));
            }
            if (fromRecv.size() > 0) {
                c.add(new ElemCopy(received.name(), fromRecv.toArray(), toRecv.toArray()));
            }
            out.add(c);
        }
        return out;
    }
}
