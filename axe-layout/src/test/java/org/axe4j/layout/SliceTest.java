package org.axe4j.layout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** Slice (AXE-SPEC section 7): every slice returned agrees with the layout on the box, by enumeration. */
class SliceTest {
    // ---- brute-force references ------------------------------------------------------------

    /** Asserts {@code sliced(y) = l(b + y)} for every y of the box, through the oracle and through apply. */
    static void assertAgreesOnBox(Layout l, Shape s, Region box, Layout sliced) {
        Shape w = box.extents();
        assertTrue(sliced.admits(w), sliced + " does not admit " + w);
        List<TreeSet<Point>> whole = Oracle.table(l);
        List<TreeSet<Point>> part = Oracle.table(sliced);
        long[] y = new long[w.rank()];
        for (long z = 0; z < w.size(); z++) {
            long[] c = new long[y.length];
            for (int k = 0; k < y.length; k++) {
                c[k] = box.begin(k) + y[k];
            }
            TreeSet<Point> expected = whole.get((int) Oracle.flat(s.toArray(), c));
            String where = l + " by " + s + " on " + box + " -> " + sliced + " at y=" + java.util.Arrays.toString(y);
            assertEquals(expected, part.get((int) Oracle.flat(w.toArray(), y)), where);
            assertEquals(new ArrayList<>(expected), sliced.apply(w, y), where);
            for (int k = y.length - 1; k >= 0; k--) { // odometer over the box
                if (++y[k] < w.dim(k)) {
                    break;
                }
                y[k] = 0;
            }
        }
    }

    /** {@code y -> D(b + y) - D(b)} over the box in row-major order, from the oracle's table. */
    static Point[] restrictedShard(Layout l, Shape s, Region box) {
        List<TreeSet<Point>> bare = Oracle.table(l.withReplica(List.of()).withOffset(Map.of()));
        Shape w = box.extents();
        Point[] g = new Point[(int) w.size()];
        Point origin = bare.get((int) Oracle.flat(s.toArray(), box.beginArray())).first();
        for (int z = 0; z < g.length; z++) {
            long[] c = w.unflatten(z);
            for (int k = 0; k < c.length; k++) {
                c[k] += box.begin(k);
            }
            g[z] = bare.get((int) Oracle.flat(s.toArray(), c)).first().minus(origin);
        }
        return g;
    }

    /**
     * Whether some shard reproduces {@code g} (g(0) = 0): tries every ordered factorisation of its length,
     * with strides read at the digit weights. A slice exists exactly when this holds, since any slice has
     * {@code D'(y) = D(b+y) - D(b)}. Independent of {@link Slice#factor}.
     */
    static boolean representable(Point[] g) {
        for (List<Long> extents : factorisations(g.length)) {
            if (reproduces(g, extents)) {
                return true;
            }
        }
        return false;
    }

    private static boolean reproduces(Point[] g, List<Long> extents) {
        int n = extents.size();
        long[] weight = new long[n];
        long acc = 1;
        for (int j = n - 1; j >= 0; j--) {
            weight[j] = acc;
            acc *= extents.get(j);
        }
        Point[] stride = new Point[n];
        for (int j = 0; j < n; j++) {
            stride[j] = g[(int) weight[j]];
            if (stride[j].coords().size() > 1) {
                return false; // an iter moves one axis
            }
        }
        for (int x = 0; x < g.length; x++) {
            Point p = Point.ZERO;
            for (int j = 0; j < n; j++) {
                long d = (x / weight[j]) % extents.get(j);
                for (Map.Entry<Axis, Long> e : stride[j].coords().entrySet()) {
                    p = p.plus(e.getKey(), d * e.getValue());
                }
            }
            if (!p.equals(g[x])) {
                return false;
            }
        }
        return true;
    }

    /** Every ordered list of factors >= 2 whose product is {@code n} ({@code []} for 1). */
    static List<List<Long>> factorisations(long n) {
        List<List<Long>> out = new ArrayList<>();
        if (n == 1) {
            out.add(List.of());
            return out;
        }
        for (long d = 2; d <= n; d++) {
            if (n % d == 0) {
                for (List<Long> rest : factorisations(n / d)) {
                    List<Long> f = new ArrayList<>();
                    f.add(d);
                    f.addAll(rest);
                    out.add(f);
                }
            }
        }
        return out;
    }

    /** A random non-empty box: often a full dimension or a single index, otherwise any range. */
    static Region randomBox(Random r, Shape s) {
        long[] b = new long[s.rank()];
        long[] w = new long[s.rank()];
        for (int k = 0; k < s.rank(); k++) {
            long n = s.dim(k);
            switch (r.nextInt(6)) {
                case 0 -> w[k] = n;
                case 1 -> {
                    w[k] = 1;
                    b[k] = r.nextLong(n);
                }
                default -> {
                    b[k] = r.nextLong(n);
                    w[k] = 1 + r.nextLong(n - b[k]);
                }
            }
        }
        return Region.at(b, w);
    }

    // ---- properties ------------------------------------------------------------------------

    @Test
    void everySliceAgreesWithTheLayoutOnTheBox() {
        int[] counts = new int[2]; // sliced, not representable
        Property.forAll("slice(L,S,box)(y) == L(b+y)", r -> {
            Layout l = RandomLayouts.layout(r);
            Shape s = RandomLayouts.shapeOf(r, l.size(), 4);
            Region box = randomBox(r, s);
            Result<Layout> sliced = Slice.trySlice(l, s, box);
            if (sliced.isEmpty()) {
                counts[1]++;
                AxeException e = assertThrows(AxeException.class, () -> Slice.slice(l, s, box));
                assertEquals(AxeException.Kind.NOT_REPRESENTABLE, e.kind());
                assertTrue(e.getMessage().startsWith("slice of layout " + l + " by shape " + s + " on region " + box),
                        e.getMessage());
                return;
            }
            counts[0]++;
            assertAgreesOnBox(l, s, box, sliced.get());
            assertEquals(l.replica(), sliced.get().replica());
            if (Group.tryGroup(l, s).isPresent()) { // one block per dimension, so the slice groups by the widths
                assertTrue(Group.tryGroup(sliced.get(), box.extents()).isPresent(), sliced.get() + " by " + box.extents());
            }
            Result<Layout> built = Slice.trySliceByConstruction(l, s, box);
            built.ifPresent(b -> assertAgreesOnBox(l, s, box, b));
        });
        System.out.printf("slice on random boxes: %d sliced, %d not representable%n", counts[0], counts[1]);
        assertTrue(counts[0] > Property.CASES / 4, "sliced " + counts[0]);
        assertTrue(counts[1] > Property.CASES / 20, "not representable " + counts[1]);
    }

    @Test
    void sliceExistsExactlyWhenSomeShardReproducesTheBox() {
        int[] counts = new int[4]; // representable, not representable, constructions found, grouped representable
        Property.forAll("slice found <=> a shard reproduces D(b+y)-D(b)", r -> {
            Layout l = RandomLayouts.layout(r);
            Shape s = RandomLayouts.shapeOf(r, l.size(), 4);
            Region box = randomBox(r, s);
            if (box.extents().size() > 96) {
                box = Region.at(box.beginArray(), shrink(r, box, s, 96));
            }
            Point[] g = restrictedShard(l, s, box);
            boolean exists = representable(g);
            Result<Layout> sliced = Slice.trySlice(l, s, box);
            assertEquals(exists, sliced.isPresent(), l + " by " + s + " on " + box + " -> " + sliced);
            if (exists) {
                counts[0]++;
                assertAgreesOnBox(l, s, box, sliced.get());
                if (Group.tryGroup(l, s).isPresent()) {
                    counts[3]++;
                    if (Slice.trySliceByConstruction(l, s, box).isPresent()) {
                        counts[2]++;
                    }
                }
            } else {
                counts[1]++;
            }
        });
        System.out.printf("slice completeness: %d representable boxes (all sliced), %d not representable;"
                        + " constructions alone cover %d of %d grouped representable (%.1f%%)%n",
                counts[0], counts[1], counts[2], counts[3], 100.0 * counts[2] / Math.max(1, counts[3]));
        assertTrue(counts[0] > Property.CASES / 4 && counts[1] > Property.CASES / 20, java.util.Arrays.toString(counts));
        assertTrue(counts[2] > counts[3] * 3 / 4, "constructions cover too few: " + java.util.Arrays.toString(counts));
    }

    /** Widths no larger than the box's, with a product of at most {@code limit}. */
    private static long[] shrink(Random r, Region box, Shape s, long limit) {
        long[] w = new long[box.rank()];
        long product = 1;
        for (int k = 0; k < w.length; k++) {
            w[k] = box.width(k);
            product *= w[k];
        }
        while (product > limit) {
            int k = r.nextInt(w.length);
            if (w[k] > 1) {
                product /= w[k];
                w[k] = 1 + r.nextLong(w[k] - 1);
                product *= w[k];
            }
        }
        return w;
    }

    /** Boxes built from the block structure, one per form; the constructions must slice every one. */
    @Test
    void constructionsSliceEveryBoxBuiltFromTheBlocks() {
        int[] kinds = new int[5]; // aligned, no wrap, one wrap, repeated wrap, skipped (jump moves two axes)
        Property.forAll("constructed boxes are sliced by the constructions", r -> {
            Layout l = RandomLayouts.layout(r);
            Shape s = RandomLayouts.shapeOf(r, l.size(), 2); // long blocks give the wrap forms room
            Result<Grouped> grouped = Group.tryGroup(l, s);
            if (grouped.isEmpty()) {
                return;
            }
            Grouped g = grouped.get();
            long[] b = new long[s.rank()];
            long[] w = new long[s.rank()];
            long[] jumpAt = new long[s.rank()];
            int[] used = new int[s.rank()];
            for (int k = 0; k < s.rank(); k++) {
                used[k] = constructedRange(r, g.block(k), b, w, jumpAt, k);
            }
            Region box = Region.at(b, w);
            for (int k = 0; k < s.rank(); k++) {
                List<TreeSet<Point>> t = Oracle.table(g.blockLayout(k));
                Point jump = t.get((int) (b[k] + jumpAt[k])).first().minus(t.get((int) b[k]).first());
                if (jump.coords().size() > 1) {
                    kinds[4]++;
                    return;
                }
            }
            Result<Layout> sliced = Slice.trySliceByConstruction(l, s, box);
            assertTrue(sliced.isPresent(), l + " by " + s + " on " + box + " (forms " + java.util.Arrays.toString(used)
                    + ")");
            assertAgreesOnBox(l, s, box, sliced.get());
            for (int u : used) {
                kinds[u]++;
            }
        });
        System.out.printf("constructed ranges sliced: %d aligned, %d no-wrap, %d one-wrap, %d repeated-wrap;"
                + " %d boxes skipped (jump across a carry moves two axes)%n", kinds[0], kinds[1], kinds[2], kinds[3], kinds[4]);
        for (int i = 0; i < 4; i++) {
            assertTrue(kinds[i] > Property.CASES / 50, "form " + i + " built only " + kinds[i] + " times");
        }
    }

    /**
     * Chooses {@code [b_k, b_k + w_k)} in a block by one of the forms, from its digits: 0 aligned
     * (whole cycles of a suffix), 1 no wrap, 2 one wrap, 3 repeated wrap. Returns the form used and sets
     * {@code jumpAt[k]}, the local index whose value minus the first is the jump across a carry (the
     * stride of an iter of the slice, so it must move one axis).
     */
    private static int constructedRange(Random r, List<Iter> block, long[] b, long[] w, long[] jumpAt, int k) {
        int n = block.size();
        long total = 1;
        for (Iter it : block) {
            total *= it.extent();
        }
        int form = r.nextInt(4);
        List<Integer> pivots = new ArrayList<>(); // the iters that can serve as the pivot of that form
        for (int j = 0; j < n; j++) {
            boolean eligible = switch (form) {
                case 2 -> j > 0; // some slower digit must take the carry
                case 3 -> j > 0 && block.get(j).extent() % 2 == 0 && block.get(j - 1).extent() >= 3;
                default -> true;
            };
            if (eligible) {
                pivots.add(j);
            }
        }
        if (pivots.isEmpty()) {
            form = 0;
            for (int j = 0; j < n; j++) {
                pivots.add(j);
            }
        }
        int p = pivots.isEmpty() ? -1 : pivots.get(r.nextInt(pivots.size()));
        long inner = 1; // product of the extents after the pivot
        for (int j = p + 1; j < n; j++) {
            inner *= block.get(j).extent();
        }
        long e = p < 0 ? 1 : block.get(p).extent();
        long higher = total / (inner * e); // the number of values of the digits before the pivot
        switch (form) {
            case 0 -> { // a divisor m of the pivot times whole cycles after it, begin a multiple of the width
                List<Long> divisors = new ArrayList<>();
                for (long m = 1; m <= e; m++) {
                    if (e % m == 0) {
                        divisors.add(m);
                    }
                }
                w[k] = divisors.get(r.nextInt(divisors.size())) * inner;
                b[k] = r.nextLong(total / w[k]) * w[k];
            }
            case 1 -> { // the pivot counts beta .. beta + m - 1 under fixed slower digits
                long beta = r.nextLong(e);
                long m = 1 + r.nextLong(e - beta);
                w[k] = m * inner;
                b[k] = (r.nextLong(higher) * e + beta) * inner;
            }
            case 2 -> { // beta .. e-1, carry, 0 .. e-beta-1
                long beta = 1 + r.nextLong(e - 1);
                w[k] = 2 * (e - beta) * inner;
                jumpAt[k] = w[k] / 2;
                b[k] = (r.nextLong(higher - 1) * e + beta) * inner;
            }
            default -> { // e = 2 beta, A rotated cycles, next digit from beta' to beta' + A without carry
                long next = block.get(p - 1).extent();
                long repeats = 2 + r.nextLong(next - 2);
                long nextBeta = r.nextLong(next - repeats);
                long above = higher / next;
                w[k] = repeats * e * inner;
                jumpAt[k] = e / 2 * inner;
                b[k] = ((r.nextLong(above) * next + nextBeta) * e + e / 2) * inner;
            }
        }
        return form;
    }

    @Test
    void theWholeShapeSlicesToTheGroupedLayout() {
        Property.forAll("slice on the full box == group(L,S)", r -> {
            Layout l = RandomLayouts.layout(r);
            Shape s = RandomLayouts.shapeOf(r, l.size(), 4);
            Result<Grouped> g = Group.tryGroup(l, s);
            if (g.isPresent()) {
                assertEquals(g.get().layout(), Slice.slice(l, s, Region.full(s)));
            }
        });
    }

    @Test
    void aSingleElementKeepsOnlyReplicasAndOffset() {
        Property.forAll("slice on one element == L(b) as offset", r -> {
            Layout l = RandomLayouts.layout(r);
            Shape s = RandomLayouts.shapeOf(r, l.size(), 4);
            long[] c = s.unflatten(r.nextLong(s.size()));
            long[] ones = new long[c.length];
            java.util.Arrays.fill(ones, 1);
            Layout one = Slice.slice(l, s, Region.at(c, ones));
            assertEquals(List.of(), one.shard());
            assertEquals(l.replica(), one.replica());
            assertEquals(new ArrayList<>(Oracle.table(l).get((int) Oracle.flat(s.toArray(), c))), one.apply(0));
        });
    }

    // ---- worked examples -------------------------------------------------------------------

    @Test
    void tensorCoreRowBlockAndColumnHalf() {
        Layout tc = Layout.parse(PaperExamplesTest.TENSOR_CORE);
        Shape s = Shape.of(8, 16);
        // Rows 2..3: the row iter (8,4@laneid) keeps 2 values from digit 2, adding 2*4 = 8 to laneid.
        Layout rows = Slice.slice(tc, s, Region.parse("[2:4, 0:16]"));
        assertEquals(Layout.parse("S[(2,2,4,2):(4@laneid,1@warpid,1@laneid,1@reg)] + R[2:4@warpid] + 8@laneid"
                + " + 5@warpid"), rows);
        // Columns 8..15: (4@laneid,2@reg) are peeled whole, the warpid digit stays at 1.
        Layout cols = Slice.slice(tc, s, Region.parse("[0:8, 8:16]"));
        assertEquals(Layout.parse("S[(8,4,2):(4@laneid,1@laneid,1@reg)] + R[2:4@warpid] + 6@warpid"), cols);
        // (0,1) of the column half is (0,9); of the block [2:4, 8:16] it is the spec's (2,9).
        Layout block = Slice.slice(tc, s, Region.parse("[2:4, 8:16]"));
        assertEquals(tc.apply(s, 2, 9), block.apply(Shape.of(2, 8), 0, 1));
        assertEquals(List.of(Point.of("laneid", 8, "reg", 1, "warpid", 6), Point.of("laneid", 8, "reg", 1, "warpid", 10)),
                block.apply(Shape.of(2, 8), 0, 1));
        // One element: no iters, the whole image in the offset, the replicas kept.
        Layout one = Slice.slice(tc, s, Region.parse("[2:3, 9:10]"));
        assertEquals(Layout.of(List.of(), tc.replica(), Map.of(Axis.of("laneid"), 8L, Axis.of("reg"), 1L,
                Axis.of("warpid"), 6L)), one);
    }

    @Test
    void globalTileSubBox() {
        Shape s = Shape.of(64, 128);
        Region box = Region.parse("[32:64, 0:64]");
        // Row-major 64x128: the sub-box starts at 32*128 = 4096.
        assertEquals(Layout.parse("S[(32,64):(128,1)] + 4096"), Slice.slice(Layout.parse("S[(64,128):(128,1)]"), s, box));
        // Fully sharded on the 2x2 mesh: the sub-box is device 1's shard.
        Layout sharded = Layout.parse("S[(2,32,2,64):(1@gpuid,128@m,2@gpuid,1@m)]");
        assertEquals(Layout.parse("S[(32,64):(128,1)] + 1@gpuid"), Slice.slice(sharded, s, box));
        assertEquals(Layout.parse("S[(2,32,64):(1@gpuid,128,1)] + 2@gpuid"),
                Slice.slice(sharded, s, Region.parse("[0:64, 64:128]")));
        // Shard + replicate: the replicas pass through.
        Layout replicated = Layout.parse("S[(2,32,128):(1@gpuid,128@m,1@m)] + R[2:2@gpuid]");
        assertEquals(Layout.parse("S[(32,64):(128,1)] + R[2:2@gpuid] + 1@gpuid"), Slice.slice(replicated, s, box));
        for (Layout l : List.of(sharded, replicated)) {
            assertAgreesOnBox(l, s, box, Slice.slice(l, s, box));
        }
    }

    @Test
    void wrapsAcrossCarries() {
        Shape flat = Shape.of(64);
        Layout columnMajor = Layout.parse("S[(8,8):(1,8)]");
        // [4:12]: q = gcd(8,4,8) = 4 peels (4,8); the pivot (2,32) wraps once from digit 1:
        // jump f(8) - f(4) = 1 - 32 = -31. TIRx gives the same.
        assertEquals(Layout.parse("S[(2,4):(-31,8)] + 32"), Slice.slice(columnMajor, flat, Region.parse("[4:12]")));
        // [3:13]: two runs of 5 around the carry, jump f(8) - f(3) = 1 - 24.
        assertEquals(Layout.parse("S[(2,5):(-23,8)] + 24"), Slice.slice(columnMajor, flat, Region.parse("[3:13]")));
        // [4:20]: after peeling (4,8), (2,32) wraps twice from digit 1 while (8,1) counts 0..2:
        // (2,1),(2,1-32),(4,8). TIRx answers None here.
        Layout repeated = Slice.slice(columnMajor, flat, Region.parse("[4:20]"));
        assertEquals(Layout.parse("S[(2,2,4):(1,-31,8)] + 32"), repeated);
        assertAgreesOnBox(columnMajor, flat, Region.parse("[4:20]"), repeated);
        // [30:34] of (4,4,4):(1,100,10): the carry from 31 = (1,3,3) to 32 = (2,0,0) ripples through two
        // digits; the jump read from the block is 2 - 321 = -319. (TIRx answers S[(2,2):(80,10)] + 321,
        // which maps y = 2 to 401 instead of 2.)
        Layout ripple = Layout.parse("S[(4,4,4):(1,100,10)]");
        Layout sliced = Slice.slice(ripple, flat, Region.parse("[30:34]"));
        assertEquals(Layout.parse("S[(2,2):(-319,10)] + 321"), sliced);
        assertAgreesOnBox(ripple, flat, Region.parse("[30:34]"), sliced);
    }

    @Test
    void coincidingStridesAreFoundByReadingTheValues() {
        // (2,5),(2,1),(4,1): the carry from (0,1,3) to (1,0,0) adds 5 - 1 - 3 = 1, the pivot's own stride,
        // so [6:9] is the straight run 3, 4, 5; no construction sees it (3 is not 2*(4-2)).
        Layout l = Layout.parse("S[(2,2,4):(5,1,1)]");
        Region box = Region.parse("[6:9]");
        assertTrue(Slice.trySliceByConstruction(l, Shape.of(16), box).reason().startsWith(
                "slice of layout S[(2,2,4):(5,1,1)] by shape (16) on region [6:9] is not representable: dimension 0:"));
        assertEquals(Layout.parse("S[3:1] + 3"), Slice.slice(l, Shape.of(16), box));
        // A layout that cannot be grouped by (2,3) still slices: its first row is 0, 3.
        Layout notGrouped = Layout.parse("S[(3,2):(1,3)]");
        assertEquals(Layout.parse("S[2:3]"), Slice.slice(notGrouped, Shape.of(2, 3), Region.parse("[0:1, 0:2]")));
        assertEquals(notGrouped, Slice.slice(notGrouped, Shape.of(2, 3), Region.parse("[0:2, 0:3]")));
    }

    @Test
    void negativeAndZeroStridesPassThrough() {
        Layout l = Layout.parse("S[(4,8):(-8,-1)] + R[2:3@laneid] + 5@laneid");
        // Rows 1..2, columns 2..5: offset D(1,2) = -8 - 2 = -10.
        assertEquals(Layout.parse("S[(2,4):(-8,-1)] + R[2:3@laneid] + 5@laneid - 10"),
                Slice.slice(l, Shape.of(4, 8), Region.parse("[1:3, 2:6]")));
        Layout broadcast = Layout.parse("S[(4,4):(0,1)]");
        // c mod 4 on [2:10]: 2,3,0,1,2,3,0,1 = (2,0),(2,-2),(2,1) + 2 (the repeated wrap).
        assertEquals(Layout.parse("S[(2,2,2):(0,-2,1)] + 2"), Slice.slice(broadcast, Shape.of(16), Region.parse("[2:10]")));
    }

    @Test
    void largeShapesSliceWithoutEnumeration() {
        // A 2^20 x 4096 row-major tensor: the box [2^19 : 2^19+256, 1024:1088] starts at 2^19*4096 + 1024.
        Layout global = Layout.parse("S[(1048576,4096):(4096,1)]");
        Shape s = Shape.of(1048576, 4096);
        Region box = Region.parse("[524288:524544, 1024:1088]");
        Layout sliced = Slice.slice(global, s, box);
        assertEquals(Layout.parse("S[(256,64):(4096,1)] + 2147484672"), sliced);
        Random r = new Random(7);
        for (int i = 0; i < 1000; i++) {
            long y0 = r.nextLong(256);
            long y1 = r.nextLong(64);
            assertEquals(global.apply(s, 524288 + y0, 1024 + y1), sliced.apply(box.extents(), y0, y1));
        }
        // Column-major 4 x 100000 read flat: [50000:250000] peels (50000,4) and wraps (2,200000) twice
        // while (4,1) counts 0..2: (2,1),(2,1-200000),(50000,4).
        Layout columns = Layout.parse("S[(4,100000):(1,4)]");
        Layout wrapped = Slice.slice(columns, Shape.of(400000), Region.parse("[50000:250000]"));
        assertEquals(Layout.parse("S[(2,2,50000):(1,-199999,4)] + 200000"), wrapped);
        for (int i = 0; i < 1000; i++) {
            long y = r.nextLong(200000);
            assertEquals(columns.apply(50000 + y), wrapped.apply(y));
        }
        // [50000:200000] is three runs of 50000 starting at 200000, 1, 200001: no construction, too wide to read.
        AxeException wide = assertThrows(AxeException.class,
                () -> Slice.slice(columns, Shape.of(400000), Region.parse("[50000:200000]")));
        assertEquals("slice of layout S[(4,100000):(1,4)] by shape (400000) on region [50000:200000] is not representable:"
                + " dimension 0: range [50000, 200000) of block [(4,1), (100000,4)]: pivot iter (2,200000) (after peeling"
                + " [(50000,4)]) counts 3 values from digit 1: they neither stay within one cycle (1 + 3 > 2) nor split into"
                + " two runs of 1 around one carry; widths above 65536 are not read one by one", wide.getMessage());
    }

    /** Uniform ranges in every dimension (no bias to full or single-index dimensions), measured only. */
    @Test
    void successRateOnUniformRanges() {
        int[] counts = new int[3]; // tried, sliced, sliced by the constructions
        Property.forAll("slice on uniform ranges agrees with L", r -> {
            Layout l = RandomLayouts.layout(r);
            Shape s = RandomLayouts.shapeOf(r, l.size(), 3);
            long[] b = new long[s.rank()];
            long[] w = new long[s.rank()];
            for (int k = 0; k < s.rank(); k++) {
                b[k] = r.nextLong(s.dim(k));
                w[k] = 1 + r.nextLong(s.dim(k) - b[k]);
            }
            Region box = Region.at(b, w);
            counts[0]++;
            Result<Layout> sliced = Slice.trySlice(l, s, box);
            if (sliced.isPresent()) {
                counts[1]++;
                assertAgreesOnBox(l, s, box, sliced.get());
                if (Slice.trySliceByConstruction(l, s, box).isPresent()) {
                    counts[2]++;
                }
            }
        });
        System.out.printf("slice on uniform ranges: %d of %d sliced (%.1f%%), %d by the constructions alone%n",
                counts[1], counts[0], 100.0 * counts[1] / counts[0], counts[2]);
        assertTrue(counts[1] > 0 && counts[1] < counts[0], java.util.Arrays.toString(counts));
    }

    // ---- errors ----------------------------------------------------------------------------

    @Test
    void notRepresentableNamesDimensionIterAndReason() {
        // Rows 16..47 of the sharded mesh layout straddle the two devices: the step from row 31 to row 32
        // goes to the next gpuid and back 16 rows of m at once, which no iter does.
        Layout sharded = Layout.parse("S[(2,32,2,64):(1@gpuid,128@m,2@gpuid,1@m)]");
        AxeException e = assertThrows(AxeException.class,
                () -> Slice.slice(sharded, Shape.of(64, 128), Region.parse("[16:48, 0:128]")));
        assertEquals(AxeException.Kind.NOT_REPRESENTABLE, e.kind());
        assertEquals("slice of layout S[(2,32,2,64):(1@gpuid,128,2@gpuid,1)] by shape (64,128) on region [16:48, 0:128]"
                + " is not representable: dimension 0: range [16, 48) of block [(2,1@gpuid), (32,128)]: pivot iter"
                + " (2,2048) (after peeling [(16,128)]) wraps once from digit 1, and the jump {gpuid:1, m:-2048} across"
                + " its carry moves more than one axis; reading its 32 values: the step {gpuid:1, m:-2048} moves more"
                + " than one axis", e.getMessage());
        assertEquals(e.getMessage(), Slice.trySlice(sharded, Shape.of(64, 128), Region.parse("[16:48, 0:128]")).reason());
        // Four values 1,2,3,0 of c mod 4: a run of 3 cannot tile a width of 4.
        AxeException run = assertThrows(AxeException.class,
                () -> Slice.slice(Layout.parse("S[(4,4):(0,1)]"), Shape.of(16), Region.parse("[1:5]")));
        assertEquals("slice of layout S[(4,4):(0,1)] by shape (16) on region [1:5] is not representable: dimension 0:"
                + " range [1, 5) of block [(4,0), (4,1)]: pivot iter (4,1) (after peeling []) counts 4 values from digit 1:"
                + " they neither stay within one cycle (1 + 4 > 4) nor split into two runs of 3 around one carry;"
                + " reading its 4 values: the values advance by {m:1} for 3 steps, and 3 does not divide 4", run.getMessage());
    }

    @Test
    void badOperandsAreInvalid() {
        Layout l = Layout.parse("S[(8,8):(8,1)]");
        AxeException outside = assertThrows(AxeException.class,
                () -> Slice.slice(l, Shape.of(8, 8), Region.parse("[2:6, 0:9]")));
        assertEquals(AxeException.Kind.INVALID, outside.kind());
        assertEquals("slice of layout S[(8,8):(8,1)] by shape (8,8): region [2:6, 0:9] lies outside shape (8,8):"
                + " dimension 1 ends at 9 > 8", outside.getMessage());
        AxeException rank = assertThrows(AxeException.class, () -> Slice.trySlice(l, Shape.of(8, 8), Region.parse("[2:6]")));
        assertEquals("slice of layout S[(8,8):(8,1)] by shape (8,8): region [2:6] has rank 1 but shape (8,8) has rank 2",
                rank.getMessage());
        AxeException admitted = assertThrows(AxeException.class,
                () -> Slice.slice(l, Shape.of(8, 4), Region.parse("[0:1, 0:1]")));
        assertEquals(AxeException.Kind.INVALID, admitted.kind());
        assertEquals("slice of layout S[(8,8):(8,1)]: shape (8,4) (size 32) is not admitted by the layout (size 64)",
                admitted.getMessage());
    }

    @Test
    void regionsAreNonEmptyBoxesWithATextForm() {
        Region r = Region.of(new long[] {2, 6}, new long[] {0, 8});
        assertEquals("[2:6, 0:8]", r.toString());
        assertEquals(r, Region.parse(r.toString()));
        assertEquals(Shape.of(4, 8), r.extents());
        assertTrue(r.within(Shape.of(6, 8)));
        assertFalse(r.within(Shape.of(8, 7)));
        assertFalse(r.within(Shape.of(8)));
        assertEquals("region [2:6, 0:8] lies outside shape (5,8): dimension 0 ends at 6 > 5",
                assertThrows(AxeException.class, () -> r.requireWithin(Shape.of(5, 8))).getMessage());
        assertEquals(Region.parse("[0:3, 0:4]"), Region.full(Shape.of(3, 4)));
        assertEquals("region dimension 1 is [4:4): a box must be non-empty (begin < end)",
                assertThrows(AxeException.class, () -> Region.parse("[0:2, 4:4]")).getMessage());
        assertEquals("region dimension 0 begins at -1: a begin must be >= 0",
                assertThrows(AxeException.class, () -> Region.of(new long[] {-1, 2})).getMessage());
        AxeException parse = assertThrows(AxeException.class, () -> Region.parse("[0:2, 4]"));
        assertEquals(AxeException.Kind.PARSE, parse.kind());
        assertEquals("cannot parse region: expected ':' but found ']' at column 8\n  [0:2, 4]\n         ^",
                parse.getMessage());
        AxeException arabic = assertThrows(AxeException.class, () -> Region.parse("[0:\u0662]"));
        assertEquals(AxeException.Kind.PARSE, arabic.kind());
        assertTrue(arabic.getMessage().contains("U+0662"), arabic.getMessage());
        assertEquals(0, Region.parse("[]").rank());
    }
}
