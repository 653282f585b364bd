package org.axe4j.layout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

class TileOfTest {
    /** One generated question: is {@code l} (by {@code t}) a tile with the given factor? */
    record Question(Layout l, Shape t, Layout outer, Shape ta, Layout inner, Shape tb, String kind) {}

    /**
     * Tiles, and layouts near tiles: a direct sum, a tile with another factor, a tile with one shard stride
     * moved, two shard iters swapped, a replica added, or the offset moved.
     */
    static Question question(Random r) {
        int rank = 1 + r.nextInt(3);
        Shape ta = TileOracle.shape(r, rank, 12);
        Shape tb = TileOracle.shape(r, rank, 12);
        Layout a = TileOracle.grouped(r, ta);
        Layout b = TileOracle.grouped(r, tb);
        Shape t = Tile.tiledShape(ta, tb);
        Layout tile = Tile.tile(a, ta, b, tb);
        return switch (r.nextInt(8)) {
            case 0, 1 -> new Question(tile, t, a, ta, b, tb, "tile");
            case 2 -> new Question(DirectSum.directSum(a, ta, b, tb), t, a, ta, b, tb, "direct sum");
            case 3 -> new Question(r.nextBoolean() ? Tile.tile(TileOracle.grouped(r, ta), ta, b, tb)
                    : Tile.tile(a, ta, TileOracle.grouped(r, tb), tb), t, a, ta, b, tb, "other factor");
            case 4 -> {
                List<Iter> d = new ArrayList<>(tile.shard());
                if (d.isEmpty()) {
                    yield new Question(tile, t, a, ta, b, tb, "tile");
                }
                int i = r.nextInt(d.size());
                d.set(i, d.get(i).withStride(d.get(i).stride() + (r.nextBoolean() ? 1 : -1)));
                yield new Question(tile.withShard(d), t, a, ta, b, tb, "stride moved");
            }
            case 5 -> {
                List<Iter> d = new ArrayList<>(tile.shard());
                if (d.size() < 2) {
                    yield new Question(tile, t, a, ta, b, tb, "tile");
                }
                int i = r.nextInt(d.size() - 1);
                d.set(i, tile.shard().get(i + 1));
                d.set(i + 1, tile.shard().get(i));
                yield new Question(tile.withShard(d), t, a, ta, b, tb, "iters swapped");
            }
            case 6 -> {
                List<Iter> rep = new ArrayList<>(tile.replica());
                rep.add(new Iter(2, 1 + r.nextInt(6), TileOracle.axis(r)));
                yield new Question(tile.withReplica(rep), t, a, ta, b, tb, "replica added");
            }
            default -> {
                TreeMap<Axis, Long> o = new TreeMap<>(tile.offset());
                o.merge(TileOracle.axis(r), (long) (r.nextBoolean() ? 1 : -1), Long::sum);
                yield new Question(tile.withOffset(o), t, a, ta, b, tb, "offset moved");
            }
        };
    }

    @Test
    void outerOfEveryTileIsFoundAndIsTheOuterMap() {
        Property.forAll("outer(A (x) B, B) == A as maps, whatever iters write L and B", r -> {
            Question q = question(r);
            Layout l = TileOracle.rewrite(r, Tile.tile(q.outer, q.ta, q.inner, q.tb));
            Layout given = TileOracle.rewrite(r, q.inner); // the same inner map, written differently
            Result<Layout> m = TileOf.outer(l, q.t, given, q.tb);
            assertTrue(m.isPresent(), "no outer for " + l + " over " + q.inner + ": " + m.reason());
            Layout found = m.orElseThrow();
            assertTrue(found.admits(q.ta));
            // The outer map is identifiable: L(x,0) = s⊙A(x) + B(0) with B(0) inside a box of size span(B).
            assertTrue(Oracle.sameMap(found, q.outer), found + " vs " + q.outer);
            assertEquals(Oracle.table(l), TileOracle.expected(found, q.ta, given, q.tb, true));
        });
    }

    @Test
    void innerOfEveryTileIsFoundAndIsTheInnerMap() {
        Property.forAll("inner(A (x) B, A) == B as maps, whatever iters write L and A", r -> {
            Question q = question(r);
            Layout l = TileOracle.rewrite(r, Tile.tile(q.outer, q.ta, q.inner, q.tb));
            Layout given = TileOracle.rewrite(r, q.outer);
            Result<Layout> m = TileOf.inner(l, q.t, given, q.ta);
            assertTrue(m.isPresent(), "no inner for " + l + " under " + q.outer + ": " + m.reason());
            Layout found = m.orElseThrow();
            assertTrue(found.admits(q.tb));
            // The inner map is identifiable too: its shard from L's inner digits, its span from widths, its replicas by division.
            assertTrue(Oracle.sameMap(found, q.inner), found + " vs " + q.inner);
            assertEquals(Oracle.table(l), TileOracle.expected(given, q.ta, found, q.tb, true));
        });
    }

    @Test
    void outerAgreesWithTheBruteForceDecision() {
        int[] counts = new int[4]; // found, none, undecided-found, undecided-none
        Map<String, int[]> byKind = new TreeMap<>();
        Property.forAll("outer(L, B) is present iff some A has L == A (x) B (by enumeration)", r -> {
            Question q = question(r);
            Result<Layout> m = TileOf.outer(q.l, q.t, q.inner, q.tb);
            TileOracle.Verdict v = TileOracle.outerExists(q.l, q.t, q.inner, q.tb);
            if (m.isPresent()) {
                assertEquals(Oracle.table(q.l), TileOracle.expected(m.get(), q.ta, q.inner, q.tb, true),
                        q.kind + ": " + m.get() + " does not rebuild " + q.l);
                assertTrue(v != TileOracle.Verdict.NONE, q.kind + ": found " + m.get() + " but enumeration says none");
            } else {
                assertTrue(v != TileOracle.Verdict.EXISTS, q.kind + ": " + q.l + " over " + q.inner + " has an outer by"
                        + " enumeration, but: " + m.reason());
            }
            count(counts, m.isPresent(), v);
            byKind.computeIfAbsent(q.kind, k -> new int[2])[m.isPresent() ? 0 : 1]++;
        });
        report("outer", counts, byKind);
    }

    @Test
    void innerAgreesWithTheBruteForceDecision() {
        int[] counts = new int[4];
        Map<String, int[]> byKind = new TreeMap<>();
        Property.forAll("inner(L, A) is present iff some B has L == A (x) B (by enumeration)", r -> {
            Question q = question(r);
            Result<Layout> m = TileOf.inner(q.l, q.t, q.outer, q.ta);
            TileOracle.Verdict v = TileOracle.innerExists(q.l, q.t, q.outer, q.ta);
            if (m.isPresent()) {
                assertEquals(Oracle.table(q.l), TileOracle.expected(q.outer, q.ta, m.get(), q.tb, true),
                        q.kind + ": " + m.get() + " does not rebuild " + q.l);
                assertTrue(v != TileOracle.Verdict.NONE, q.kind + ": found " + m.get() + " but enumeration says none");
            } else {
                assertTrue(v != TileOracle.Verdict.EXISTS, q.kind + ": " + q.l + " under " + q.outer + " has an inner by"
                        + " enumeration, but: " + m.reason());
            }
            count(counts, m.isPresent(), v);
            byKind.computeIfAbsent(q.kind, k -> new int[2])[m.isPresent() ? 0 : 1]++;
        });
        report("inner", counts, byKind);
    }

    private static void count(int[] counts, boolean found, TileOracle.Verdict v) {
        if (v == TileOracle.Verdict.UNDECIDED) {
            counts[found ? 2 : 3]++;
        } else {
            counts[found ? 0 : 1]++;
        }
    }

    private static void report(String which, int[] counts, Map<String, int[]> byKind) {
        System.out.printf("tile-of %s: %d found (enumeration agrees), %d none (enumeration agrees), undecided by the"
                + " bounded enumeration: %d found, %d none%n", which, counts[0], counts[1], counts[2], counts[3]);
        byKind.forEach((kind, fn) -> System.out.printf("  %-14s found %5d  none %5d%n", kind, fn[0], fn[1]));
        // Both answers must be common, or the agreement above would prove little.
        assertTrue(counts[0] > Property.CASES / 5 && counts[1] > Property.CASES / 5, java.util.Arrays.toString(counts));
    }

    @Test
    void equivalenceIsExactOnTileVariants() {
        int[] same = {0};
        Property.forAll("Equivalence.equivalent(a, b) == Oracle.sameMap(a, b)", r -> {
            Layout a = TileTest.small(r);
            Layout b = variant(r, a);
            boolean expected = Oracle.sameMap(a, b);
            assertEquals(expected, Equivalence.equivalent(a, b), a + " vs " + b);
            same[0] += expected ? 1 : 0;
        });
        assertTrue(same[0] > Property.CASES / 5 && same[0] < Property.CASES * 4 / 5, "same " + same[0]);
    }

    /** A layout that often, but not always, has the same map: re-split, zero strides moved, replicas rewritten, or perturbed. */
    private static Layout variant(Random r, Layout a) {
        return switch (r.nextInt(6)) {
            case 0 -> Group.tryGroup(a, RandomLayouts.shapeOf(r, a.size(), 4)).map(Grouped::layout).orElse(a);
            case 1 -> { // a zero stride on another axis, and extent-1 iters inserted
                List<Iter> d = new ArrayList<>();
                for (Iter it : a.shard()) {
                    d.add(it.stride() == 0 ? new Iter(it.extent(), 0, TileOracle.axis(r)) : it);
                    if (r.nextInt(3) == 0) {
                        d.add(new Iter(1, r.nextInt(5), TileOracle.axis(r)));
                    }
                }
                yield a.withShard(d);
            }
            case 2 -> { // a negative replica stride flipped into the offset: (f, t) == (f, -t) + (f-1)t
                List<Iter> rep = new ArrayList<>();
                TreeMap<Axis, Long> o = new TreeMap<>(a.offset());
                for (Iter it : a.replica()) {
                    if (it.stride() < 0) {
                        rep.add(it.withStride(-it.stride()));
                        o.merge(it.axis(), (it.extent() - 1) * it.stride(), Long::sum);
                    } else {
                        rep.add(it);
                    }
                }
                java.util.Collections.reverse(rep);
                yield new Layout(a.shard(), rep, o);
            }
            case 3 -> a.withShard(mutate(r, a.shard()));
            case 4 -> {
                List<Iter> rep = new ArrayList<>(a.replica());
                rep.add(new Iter(1 + r.nextInt(3), r.nextInt(4), TileOracle.axis(r)));
                yield a.withReplica(rep);
            }
            default -> Layout.of(a.shard(), a.replica(), r.nextBoolean() ? Map.of() : RandomLayouts.offset(r));
        };
    }

    private static List<Iter> mutate(Random r, List<Iter> d) {
        List<Iter> out = new ArrayList<>(d);
        if (!out.isEmpty()) {
            int i = r.nextInt(out.size());
            out.set(i, out.get(i).withStride(out.get(i).stride() + 1));
        }
        return out;
    }

    @Test
    void progressionSumsAreFoundWheneverTheyExist() {
        Property.forAll("sumOfProgressions finds a decomposition of every sum, and only true ones", r -> {
            TreeSet<Long> y = new TreeSet<>(List.of(0L));
            int n = r.nextInt(4);
            for (int i = 0; i < n; i++) {
                long t = 1 + r.nextInt(8);
                long f = 2 + r.nextInt(3);
                TreeSet<Long> next = new TreeSet<>();
                for (long u : y) {
                    for (long j = 0; j < f; j++) {
                        next.add(u + j * t);
                    }
                }
                y = next;
            }
            if (r.nextBoolean()) { // perturb: drop or add one value (keeping 0 the minimum)
                long v = 1 + r.nextInt((int) (y.last() + 2));
                if (!y.remove(v)) {
                    y.add(v);
                }
                check(y, TileOracle.isOffsetPlusReplicas(points(y)));
                return;
            }
            Optional<List<long[]>> found = TileOf.sumOfProgressions(y);
            assertTrue(found.isPresent(), "no decomposition of " + y);
            assertEquals(y, sum(found.get()));
        });
    }

    private static void check(TreeSet<Long> y, TileOracle.Verdict v) {
        Optional<List<long[]>> found = TileOf.sumOfProgressions(y);
        found.ifPresent(ps -> assertEquals(y, sum(ps)));
        if (v == TileOracle.Verdict.EXISTS) {
            assertTrue(found.isPresent(), "bounded brute force decomposes " + y + " but the search does not");
        }
        if (v == TileOracle.Verdict.NONE) {
            assertFalse(found.isPresent());
        }
    }

    private static TreeSet<Point> points(TreeSet<Long> y) {
        TreeSet<Point> out = new TreeSet<>();
        y.forEach(v -> out.add(Point.of("m", v)));
        return out;
    }

    private static TreeSet<Long> sum(List<long[]> progressions) {
        TreeSet<Long> s = new TreeSet<>(List.of(0L));
        for (long[] ft : progressions) {
            TreeSet<Long> next = new TreeSet<>();
            for (long u : s) {
                for (long j = 0; j < ft[0]; j++) {
                    next.add(u + j * ft[1]);
                }
            }
            s = next;
        }
        return s;
    }

    @Test
    void overlappingReplicasNeedTheSearchNotTheGreedyStep() {
        // {0,1} + {0,3} + {0,4} = {0,1,3,4,5,7,8}: after {0,1} and {0,3}, the next missing value 5 is no stride.
        TreeSet<Long> y = new TreeSet<>(List.of(0L, 1L, 3L, 4L, 5L, 7L, 8L));
        assertEquals(y, sum(TileOf.sumOfProgressions(y).orElseThrow()));
        assertTrue(TileOf.sumOfProgressions(new TreeSet<>(List.of(0L, 1L, 3L))).isEmpty());
    }

    @Test
    void tensorCoreTileOverTheWarpAtom() {
        Layout l = Layout.parse(PaperExamplesTest.TENSOR_CORE);
        Shape t = Shape.of(8, 16);
        Layout atom = Layout.parse("S[(8,4,2):(4@laneid,1@laneid,1@reg)]");
        Layout outer = TileOf.outer(l, t, atom, Shape.of(8, 8)).orElseThrow();
        assertEquals(Layout.parse("S[2:1@warpid] + R[2:4@warpid] + 5@warpid"), outer);
        // And back: the warp atom is the inner layout under that outer one.
        assertEquals(atom, TileOf.inner(l, t, outer, Shape.of(1, 2)).orElseThrow());
        // The atom split differently is not a factor: 2 registers first, then 4 lanes.
        Result<Layout> m = TileOf.outer(l, t, Layout.parse("S[(8,2,4):(4@laneid,1@reg,1@laneid)]"), Shape.of(8, 8));
        assertFalse(m.isPresent());
        assertEquals("dimension 1: the inner digits of " + l + " are [(4,1@laneid), (2,1@reg)], not the inner"
                + " layout's block [(2,1@reg), (4,1@laneid)]", m.reason());
    }

    @Test
    void trainiumBufferIsTwoPartitionTilesSideBySide() {
        // SBUF S[(2,128,512):(512@F,1@P,1@F)] by (256,512): rows 0..127 and 128..255 are two (128,512) P x F tiles;
        // span_F of the tile is 512, so the outer digit (2, 1@F) lands at 512@F.
        Layout sbuf = Layout.parse("S[(2,128,512):(512@F,1@P,1@F)]");
        Shape t = Shape.of(256, 512);
        Layout partitionTile = Layout.parse("S[(128,512):(1@P,1@F)]");
        Layout outer = TileOf.outer(sbuf, t, partitionTile, Shape.of(128, 512)).orElseThrow();
        assertEquals(Layout.parse("S[2:1@F]"), outer);
        assertEquals(sbuf, Tile.tile(outer, Shape.of(2, 1), partitionTile, Shape.of(128, 512)));
        assertEquals(partitionTile, TileOf.inner(sbuf, t, outer, Shape.of(2, 1)).orElseThrow());
        // Blackwell tensor memory, the same pattern on (Lane, Col) with 112 columns.
        Layout tmem = Layout.parse("S[(2,128,112):(112@Col,1@Lane,1@Col)]");
        assertEquals(Layout.parse("S[2:1@Col]"), TileOf.outer(tmem, Shape.of(256, 112),
                Layout.parse("S[(128,112):(1@Lane,1@Col)]"), Shape.of(128, 112)).orElseThrow());
        // Tiled by columns instead, (128,1024) over (128,512), the digits are in the wrong order: no outer.
        Result<Layout> byColumns = TileOf.outer(sbuf, Shape.of(128, 1024), partitionTile, Shape.of(128, 512));
        assertFalse(byColumns.isPresent());
    }

    @Test
    void blockLayoutRecoversTheGridAndTheTile() {
        Layout l = Layout.parse("S[(6,8):(8,1)]"); // row-major 6x8 is no grid of contiguous tiles
        assertTrue(TileOf.outer(l, Shape.of(6, 8), Layout.parse("S[(3,4):(4,1)]"), Shape.of(3, 4)).isEmpty());
        // With the inner 3x4 tile as a window of the row-major matrix (row stride 8), it is: span = 1 + 16 + 3 = 20.
        Layout window = Layout.parse("S[(3,4):(8,1)]");
        Layout blocked = Layout.parse("S[(2,3,2,4):(24,8,4,1)]");
        assertTrue(TileOf.outer(blocked, Shape.of(6, 8), window, Shape.of(3, 4)).isEmpty(), "24 and 4 are no multiples of 20");
        Layout grid = TileOf.outer(Layout.parse("S[(2,3,2,4):(24,4,12,1)]"), Shape.of(6, 8),
                Layout.parse("S[(3,4):(4,1)]"), Shape.of(3, 4)).orElseThrow();
        assertEquals(Layout.parse("S[(2,2):(2,1)]"), grid);
    }

    @Test
    void replicasAndOffsetSplitBetweenTheFactors() {
        // span(B) = 12 on m; L's replica (2,36) is the outer's (2,3) scaled, (2,5) is the inner's.
        Layout l = Layout.parse("S[(2,4):(1@laneid,2)] + R[(2,2):(36,5)] + 19");
        Layout b = Layout.parse("S[4:2] + R[2:5] + 7");
        assertEquals(Layout.parse("S[2:1@laneid] + R[2:3] + 1"), TileOf.outer(l, Shape.of(8), b, Shape.of(4)).orElseThrow());
        // The same map with B's replica written as (2,-5) and the offset raised by 5: R_L no longer holds B's iter
        // (2,5), so the outer set {1, 4} is read off the replica set and written as 1 + R[2:3].
        Layout flipped = Layout.parse("S[(2,4):(1@laneid,2)] + R[(2,2):(36,-5)] + 24");
        assertTrue(Oracle.sameMap(l, flipped));
        Layout outer = TileOf.outer(flipped, Shape.of(8), b, Shape.of(4)).orElseThrow();
        assertEquals(Layout.parse("S[2:1@laneid] + R[2:3] + 1"), outer);
        // An offset 20 = 12 * 1 + 8 needs O_B = 8: with B's offset 7 the outer offset would be 13/12.
        Result<Layout> off = TileOf.outer(l.withOffset(Map.of(Axis.M, 20L)), Shape.of(8), b, Shape.of(4));
        assertFalse(off.isPresent(), off.reason());
    }

    @Test
    void aFactorThatCannotBeGroupedTilesNothing() {
        // S[(3,2):(1,3)] by (2,3) has no grouping (dimension 0 would end inside the iter of extent 3): empty, not an error.
        Layout l = Layout.parse("S[(3,2):(1,3)]");
        Result<Layout> outer = TileOf.outer(l, Shape.of(2, 3), l, Shape.of(2, 3));
        assertFalse(outer.isPresent());
        assertEquals("inner layout S[(3,2):(1,3)] cannot be grouped by (2,3), so it tiles nothing", outer.reason());
        Result<Layout> inner = TileOf.inner(l, Shape.of(2, 3), l, Shape.of(2, 3));
        assertEquals("outer layout S[(3,2):(1,3)] cannot be grouped by (2,3), so it tiles nothing", inner.reason());
        // A layout not separable over the interleaved shape (1,2,3,1): its first 2 rows do not split off.
        Result<Layout> split = TileOf.outer(l, Shape.of(2, 3), Layout.parse("S[2:1]"), Shape.of(2, 1));
        assertEquals("layout S[(3,2):(1,3)] is not separable over the interleaved shape (1,2,3,1)", split.reason());
    }

    @Test
    void errorsNameTheOperationTheShapesAndTheRule() {
        Layout l = Layout.parse("S[(2,3,2,4):(24,4,12,1)]");
        Layout b = Layout.parse("S[(3,4):(4,1)]");
        AxeException rank = assertThrows(AxeException.class, () -> TileOf.outer(l, Shape.of(48), b, Shape.of(3, 4)));
        assertEquals("tileOf.outer: shape (48) of S[(2,3,2,4):(24,4,12,1)] has rank 1 but inner shape (3,4) of"
                + " S[(3,4):(4,1)] has rank 2; the ranks must be equal", rank.getMessage());
        AxeException divide = assertThrows(AxeException.class, () -> TileOf.outer(l, Shape.of(6, 8), b, Shape.of(4, 3)));
        assertEquals("tileOf.outer: inner shape (4,3) does not divide shape (6,8) of S[(2,3,2,4):(24,4,12,1)]"
                + " (dimension 0: 4 does not divide 6)", divide.getMessage());
        AxeException admitted = assertThrows(AxeException.class, () -> TileOf.inner(l, Shape.of(6, 6), b, Shape.of(3, 4)));
        assertEquals("tileOf.inner: tiled layout S[(2,3,2,4):(24,4,12,1)] (size 48) does not admit shape (6,6) (size 36)",
                admitted.getMessage());
        assertEquals(AxeException.Kind.INVALID, admitted.kind());
    }
}
