package org.axe4j.mesh;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.axe4j.layout.AxeException;

/**
 * Plans a redistribution cell by cell ({@link Cells}): plan time and size depend on the number of cells and
 * ranks, not on the tensor size. Every plan meets the lower bound {@link Plan#minimumElements}:
 * <ul>
 *   <li>not partial: each (piece, needer lacking it) gets one sender among the holders. A piece is cut along
 *       its outermost free digit into one chunk per holder and each chunk goes to the least-loaded holder (ties:
 *       fewest differing mesh dims, then lowest rank), so replicated data is sent by all its holders.</li>
 *   <li>partial with p summands: each element is reduced in ONE partial group holding it, one containing a
 *       needer when there is one (a piece that several such groups hold is cut among them, each part to the
 *       least-loaded group). Within it the piece is cut into blocks owned by the group's
 *       needers (all members when it has none) and reduced by a variable-count reduce-scatter (member k receives
 *       {@code (p-1) * b_k}); owners then forward blocks to the other needers in the exchange. Per element:
 *       {@code (p-1) + |D| - [D meets H]}.</li>
 * </ul>
 * Steps: (1) reduce per partial group, (2) one exchange over the sub-groups spanned by the mesh dims where
 * senders and receivers differ (all-gather, broadcast or all-to-all by pattern), (3) local copies.
 */
public final class SymbolicPlanner {
    private SymbolicPlanner() {}

    /** A chunk of a piece sent from one rank to another, packed from {@code fromBox} of the sender's buffer. */
    private record Transfer(int from, int to, Cells.Piece chunk, Box fromBox) {}

    /** Where a received chunk lands in the receiver's buffer. */
    private record Segment(long offset, Cells.Piece chunk) {}

    /** The plan, or null when the layouts have no common refinement. */
    static Plan plan(DistTensor src, DistTensor dst, int elementBytes) {
        MeshRanks ranks = new MeshRanks(src.mesh());
        Refinement ref = Refinement.of(src, dst, ranks);
        if (ref == null) {
            return null;
        }
        Cells cells = new Cells(ref, src, dst, ranks);
        return new SymbolicPlanner.Build(cells, elementBytes).plan();
    }

    private static final class Build {
        final Cells cells;
        final DistTensor src;
        final DistTensor dst;
        final MeshRanks ranks;
        final int n;
        final int elementBytes;
        final long p;
        final List<Plan.Step> steps = new ArrayList<>();
        final List<List<RankStep>> rankSteps = new ArrayList<>();
        final List<List<BoxPair>> fromCur = new ArrayList<>();
        final List<List<BoxPair>> fromReceived = new ArrayList<>();
        final List<Transfer> transfers = new ArrayList<>();
        final int[][] coords;

        Build(Cells cells, int elementBytes) {
            this.cells = cells;
            this.src = cells.src;
            this.dst = cells.dst;
            this.ranks = cells.ranks;
            this.n = ranks.size;
            this.elementBytes = elementBytes;
            long q = 1;
            for (int j : src.partialDims()) {
                q *= src.mesh().dim(j);
            }
            this.p = q;
            coords = new int[n][];
            for (int r = 0; r < n; r++) {
                rankSteps.add(new ArrayList<>());
                fromCur.add(new ArrayList<>());
                fromReceived.add(new ArrayList<>());
                coords[r] = ranks.coord(r);
            }
        }

        Plan plan() {
            long minimum = 0;
            for (Cells.Piece piece : cells.pieces) {
                int[] d = piece.cell().ranks(1);
                int[] h = piece.cell().ranks(0);
                boolean meets = Arrays.stream(d).anyMatch(r -> contains(h, r));
                long missing = Arrays.stream(d).filter(r -> !contains(h, r)).count();
                minimum += (p > 1 ? (p - 1) + d.length - (meets ? 1 : 0) : missing) * piece.size();
            }
            String cur = "src";
            if (p > 1) {
                reduce();
                cur = "reduced";
            } else {
                assignSenders();
            }
            exchange(cur);
            List<List<Copy>> copies = new ArrayList<>();
            for (int r = 0; r < n; r++) {
                List<Copy> c = new ArrayList<>();
                if (!fromCur.get(r).isEmpty()) {
                    c.add(new Copy(cur, fromCur.get(r)));
                }
                if (!fromReceived.get(r).isEmpty()) {
                    c.add(new Copy("received", fromReceived.get(r)));
                }
                copies.add(c);
            }
            return new Plan(src, dst, elementBytes, Plan.SYMBOLIC, "", steps, rankSteps, copies, maps(),
                    shards(src, 0), shards(dst, 1), minimum);
        }

        /** Not partial: copies where the needer holds the piece, chunks from balanced senders elsewhere. */
        private void assignSenders() {
            long[] load = new long[n];
            for (Cells.Piece piece : cells.pieces) {
                Cells.Cell cell = piece.cell();
                int[] holders = cell.ranks(0);
                List<Cells.Piece> chunks = null;
                for (Cells.Placement need : cell.at[1]) {
                    Cells.Placement have = cell.on(0, need.rank());
                    if (have != null) {
                        fromCur.get(need.rank()).add(new BoxPair(cells.box(piece, 0, have.base()),
                                cells.box(piece, 1, need.base())));
                    }
                }
                for (int r : cell.ranks(1)) {
                    if (contains(holders, r)) {
                        continue;
                    }
                    if (chunks == null) {
                        chunks = Cells.split(piece, holders.length);
                    }
                    for (Cells.Piece chunk : chunks) {
                        int best = -1;
                        for (int h : holders) {
                            if (best < 0 || load[h] < load[best] || load[h] == load[best]
                                    && differing(coords[h], coords[r]) < differing(coords[best], coords[r])) {
                                best = h;
                            }
                        }
                        load[best] += chunk.size();
                        transfers.add(new Transfer(best, r, chunk, cells.box(chunk, 0, cell.on(0, best).base())));
                    }
                }
            }
        }

        /** Partial: one group per piece, blocks owned by its needers, variable-count reduce-scatter. */
        private void reduce() {
            List<Integer> dims = src.partialDims();
            int[] groupOf = new int[n];
            List<int[]> groups = new ArrayList<>();
            int[] groupIndex = new int[n];
            Arrays.fill(groupIndex, -1);
            for (int r = 0; r < n; r++) {
                int[] g = ranks.group(r, dims);
                if (groupIndex[g[0]] < 0) {
                    groupIndex[g[0]] = groups.size();
                    groups.add(g);
                }
                groupOf[r] = groupIndex[g[0]];
            }
            long[] load = new long[groups.size()];
            // blocks[g][k]: the blocks member k of group g owns, in order
            List<List<List<Cells.Piece>>> blocks = new ArrayList<>();
            for (int[] g : groups) {
                List<List<Cells.Piece>> b = new ArrayList<>();
                for (int k = 0; k < g.length; k++) {
                    b.add(new ArrayList<>());
                }
                blocks.add(b);
            }
            for (Cells.Piece piece : cells.pieces) {
                int[] d = piece.cell().ranks(1);
                TreeSet<Integer> candidates = new TreeSet<>();
                TreeSet<Integer> withNeeder = new TreeSet<>();
                for (int h : piece.cell().ranks(0)) {
                    candidates.add(groupOf[h]);
                    if (contains(d, h)) {
                        withNeeder.add(groupOf[h]);
                    }
                }
                List<Integer> pool = List.copyOf(withNeeder.isEmpty() ? candidates : withNeeder);
                // several groups can reduce it: cut it among them, each part to the least-loaded group
                for (Cells.Piece part : Cells.split(piece, pool.size())) {
                    int best = -1;
                    for (int g : pool) {
                        if (best < 0 || load[g] < load[best]) {
                            best = g;
                        }
                    }
                    load[best] += part.size();
                    int[] members = groups.get(best);
                    List<Integer> owners = new ArrayList<>();
                    for (int k = 0; k < members.length; k++) {
                        if (contains(d, members[k])) {
                            owners.add(k);
                        }
                    }
                    if (owners.isEmpty()) {
                        for (int k = 0; k < members.length; k++) {
                            owners.add(k);
                        }
                    }
                    List<Cells.Piece> blocksOfPart = Cells.split(part, owners.size());
                    for (int i = 0; i < blocksOfPart.size(); i++) {
                        blocks.get(best).get(owners.get(i)).add(blocksOfPart.get(i));
                    }
                }
            }
            Set<Collective> kinds = EnumSet.noneOf(Collective.class);
            RankStep[] mine = new RankStep[n];
            for (int gi = 0; gi < groups.size(); gi++) {
                int[] g = groups.get(gi);
                long[] counts = new long[g.length];
                for (int k = 0; k < g.length; k++) {
                    for (Cells.Piece b : blocks.get(gi).get(k)) {
                        counts[k] += b.size();
                    }
                }
                boolean idle = Arrays.stream(counts).allMatch(c -> c == 0);
                kinds.add(idle ? Collective.IDLE : Collective.REDUCE_SCATTER);
                for (int k = 0; k < g.length; k++) {
                    int r = g[k];
                    List<Box> send = new ArrayList<>();
                    for (List<Cells.Piece> owned : blocks.get(gi)) {
                        for (Cells.Piece b : owned) {
                            send.add(cells.box(b, 0, b.cell().on(0, r).base()));
                        }
                    }
                    mine[r] = new RankStep(idle ? Collective.IDLE : Collective.REDUCE_SCATTER, g, "src", "reduced",
                            idle ? List.of() : send, counts, counts, -1, counts[k], (p - 1) * counts[k]);
                    long at = 0;
                    for (Cells.Piece b : blocks.get(gi).get(k)) {
                        Box reduced = cells.compact(b, at);
                        at += b.size();
                        for (Cells.Placement need : b.cell().at[1]) {
                            if (need.rank() == r) {
                                fromCur.get(r).add(new BoxPair(reduced, cells.box(b, 1, need.base())));
                            }
                        }
                        for (int other : b.cell().ranks(1)) {
                            if (other != r) {
                                transfers.add(new Transfer(r, other, b, reduced));
                            }
                        }
                    }
                }
            }
            for (int r = 0; r < n; r++) {
                rankSteps.get(r).add(mine[r]);
            }
            steps.add(new Plan.Step(kinds, dims, "reduced"));
        }

        private void exchange(String cur) {
            TreeSet<Integer> dimSet = new TreeSet<>();
            for (Transfer t : transfers) {
                for (int j = 0; j < coords[t.from()].length; j++) {
                    if (coords[t.from()][j] != coords[t.to()][j]) {
                        dimSet.add(j);
                    }
                }
            }
            if (dimSet.isEmpty()) {
                return;
            }
            List<Integer> dims = List.copyOf(dimSet);
            int[] memberOf = new int[n];
            int[][] groupOf = new int[n][];
            for (int r = 0; r < n; r++) {
                groupOf[r] = ranks.group(r, dims);
                for (int k = 0; k < groupOf[r].length; k++) {
                    if (groupOf[r][k] == r) {
                        memberOf[r] = k;
                    }
                }
            }
            // s[r][k]: what rank r sends to member k of its group, in creation order
            List<List<List<Transfer>>> s = new ArrayList<>();
            for (int r = 0; r < n; r++) {
                List<List<Transfer>> row = new ArrayList<>();
                for (int k = 0; k < groupOf[r].length; k++) {
                    row.add(new ArrayList<>());
                }
                s.add(row);
            }
            for (Transfer t : transfers) {
                s.get(t.from()).get(memberOf[t.to()]).add(t);
            }
            Set<Collective> kinds = EnumSet.noneOf(Collective.class);
            RankStep[] mine = new RankStep[n];
            boolean[] done = new boolean[n];
            for (int r0 = 0; r0 < n; r0++) {
                int[] g = groupOf[r0];
                if (done[g[0]]) {
                    continue;
                }
                done[g[0]] = true;
                Collective kind = classify(g, s);
                kinds.add(kind);
                for (int k = 0; k < g.length; k++) {
                    mine[g[k]] = member(kind, g, k, s, cur);
                }
            }
            for (int r = 0; r < n; r++) {
                rankSteps.get(r).add(mine[r]);
            }
            steps.add(new Plan.Step(kinds, dims, "received"));
        }

        /** The chunks member a sends to every other member, or null when they differ. */
        private static List<Transfer> uniform(int[] g, int a, List<List<List<Transfer>>> s) {
            List<Transfer> first = null;
            for (int b = 0; b < g.length; b++) {
                if (b == a) {
                    continue;
                }
                List<Transfer> l = s.get(g[a]).get(b);
                if (first == null) {
                    first = l;
                } else if (!sameChunks(first, l)) {
                    return null;
                }
            }
            return first == null ? List.of() : first;
        }

        private static boolean sameChunks(List<Transfer> a, List<Transfer> b) {
            if (a.size() != b.size()) {
                return false;
            }
            for (int i = 0; i < a.size(); i++) {
                if (a.get(i).chunk() != b.get(i).chunk()) {
                    return false;
                }
            }
            return true;
        }

        private static long size(List<Transfer> l) {
            return l.stream().mapToLong(t -> t.chunk().size()).sum();
        }

        private static Collective classify(int[] g, List<List<List<Transfer>>> s) {
            List<Integer> senders = new ArrayList<>();
            for (int a = 0; a < g.length; a++) {
                if (s.get(g[a]).stream().anyMatch(l -> !l.isEmpty())) {
                    senders.add(a);
                }
            }
            if (senders.isEmpty()) {
                return Collective.IDLE;
            }
            if (senders.size() == 1) {
                List<Transfer> l = uniform(g, senders.get(0), s);
                return l != null && !l.isEmpty() ? Collective.BROADCAST : Collective.ALL_TO_ALL;
            }
            if (senders.size() == g.length) {
                Long size = null;
                for (int a = 0; a < g.length; a++) {
                    List<Transfer> l = uniform(g, a, s);
                    if (l == null || size != null && size != size(l)) {
                        return Collective.ALL_TO_ALL;
                    }
                    size = size(l);
                }
                return Collective.ALL_GATHER;
            }
            return Collective.ALL_TO_ALL;
        }

        private RankStep member(Collective kind, int[] g, int k, List<List<List<Transfer>>> s, String cur) {
            int r = g[k];
            int pg = g.length;
            switch (kind) {
                case IDLE:
                    return new RankStep(kind, g, cur, "received", List.of(), null, null, -1, 0, 0);
                case BROADCAST: {
                    int root = 0;
                    while (s.get(g[root]).stream().allMatch(List::isEmpty)) {
                        root++;
                    }
                    List<Transfer> l = uniform(g, root, s);
                    long total = size(l);
                    if (k != root) {
                        receive(r, 0, l);
                    }
                    return new RankStep(kind, g, cur, "received", k == root ? boxes(l) : List.of(), null, null, root,
                            total, k == root ? 0 : total);
                }
                case ALL_GATHER: {
                    long at = 0;
                    for (int a = 0; a < pg; a++) {
                        List<Transfer> l = uniform(g, a, s);
                        if (a != k) {
                            receive(r, at, l);
                        }
                        at += size(l);
                    }
                    List<Transfer> own = uniform(g, k, s);
                    return new RankStep(kind, g, cur, "received", boxes(own), null, null, -1, at, at - size(own));
                }
                default: {
                    List<Box> send = new ArrayList<>();
                    long[] sc = new long[pg];
                    long[] rc = new long[pg];
                    long at = 0;
                    for (int b = 0; b < pg; b++) {
                        List<Transfer> out = s.get(r).get(b);
                        send.addAll(boxes(out));
                        sc[b] = size(out);
                        List<Transfer> in = s.get(g[b]).get(k);
                        rc[b] = size(in);
                        receive(r, at, in);
                        at += rc[b];
                    }
                    return new RankStep(Collective.ALL_TO_ALL, g, cur, "received", send, sc, rc, -1, at, at);
                }
            }
        }

        private static List<Box> boxes(List<Transfer> l) {
            return l.stream().map(Transfer::fromBox).toList();
        }

        /** Copies from the received buffer for chunks landing at {@code at}, in order. */
        private void receive(int r, long at, List<Transfer> l) {
            for (Transfer t : l) {
                Box from = cells.compact(t.chunk(), at);
                for (Cells.Placement need : t.chunk().cell().at[1]) {
                    if (need.rank() == r) {
                        fromReceived.get(r).add(new BoxPair(from, cells.box(t.chunk(), 1, need.base())));
                    }
                }
                at += t.chunk().size();
            }
        }

        private List<RankMaps> maps() {
            long[] srcSize = new long[n];
            long[] dstSize = new long[n];
            List<List<BoxPair>> sg = new ArrayList<>();
            List<List<BoxPair>> dg = new ArrayList<>();
            List<List<BoxPair>> naive = new ArrayList<>();
            for (int r = 0; r < n; r++) {
                sg.add(new ArrayList<>());
                dg.add(new ArrayList<>());
                naive.add(new ArrayList<>());
            }
            for (Cells.Piece piece : cells.pieces) {
                Box global = cells.globalBox(piece);
                for (int l = 0; l < 2; l++) {
                    for (Cells.Placement pl : piece.cell().at[l]) {
                        Box local = cells.box(piece, l, pl.base());
                        long[] size = l == 0 ? srcSize : dstSize;
                        size[pl.rank()] = Math.max(size[pl.rank()], local.max() + 1);
                        (l == 0 ? sg : dg).get(pl.rank()).add(new BoxPair(local, global));
                    }
                }
                int first = piece.cell().ranks(0)[0];
                int[] contributors = p > 1 ? ranks.group(first, src.partialDims()) : new int[] {first};
                for (int r : contributors) {
                    naive.get(r).add(new BoxPair(cells.box(piece, 0, piece.cell().on(0, r).base()), global));
                }
            }
            List<RankMaps> out = new ArrayList<>();
            for (int r = 0; r < n; r++) {
                out.add(new RankMaps(srcSize[r], dstSize[r], sg.get(r), dg.get(r), naive.get(r)));
            }
            return out;
        }

        private List<LocalShard> shards(DistTensor t, int l) {
            return LocalShard.of(t, cells, l, ranks);
        }
    }

    static boolean contains(int[] a, int v) {
        for (int x : a) {
            if (x == v) {
                return true;
            }
        }
        return false;
    }

    static int differing(int[] a, int[] b) {
        int d = 0;
        for (int i = 0; i < a.length; i++) {
            d += a[i] != b[i] ? 1 : 0;
        }
        return d;
    }

    /** Rejects what no planner can do: different meshes or shapes, a partial destination, a bad element size. */
    static void checkRequest(DistTensor src, DistTensor dst, int elementBytes) {
        if (!src.mesh().equals(dst.mesh())) {
            throw new AxeException(AxeException.Kind.INVALID, "redistribute: source mesh " + src.mesh()
                    + " differs from destination mesh " + dst.mesh());
        }
        if (!src.globalShape().equals(dst.globalShape())) {
            throw new AxeException(AxeException.Kind.INVALID, "redistribute: source global shape " + src.globalShape()
                    + " differs from destination global shape " + dst.globalShape());
        }
        if (dst.isPartial()) {
            throw new AxeException(AxeException.Kind.INVALID, "redistribute: destination " + dst
                    + " is partial; a plan produces reduced values (partial dims must be empty)");
        }
        if (elementBytes < 1) {
            throw new AxeException(AxeException.Kind.INVALID, "redistribute: element size " + elementBytes + " bytes");
        }
    }
}
