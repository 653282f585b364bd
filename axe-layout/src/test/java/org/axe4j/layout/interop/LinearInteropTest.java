package org.axe4j.layout.interop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.TreeSet;
import org.axe4j.layout.AxeException;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Iter;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Oracle;
import org.axe4j.layout.Point;
import org.axe4j.layout.Property;
import org.axe4j.layout.RandomLayouts;
import org.axe4j.layout.Result;
import org.axe4j.layout.Shape;
import org.junit.jupiter.api.Test;

/** Linear layouts and Axe layouts describe the same relation between logical coordinates and hardware points. */
class LinearInteropTest {
    private static final List<Axis> HARDWARE = List.of(Axis.of("reg"), Axis.of("laneid"), Axis.of("warpid"), Axis.M);

    /**
     * A power-of-two layout: each chosen axis gets n bits, cut into contiguous chunks in random order; each
     * chunk becomes an iter (2^len, 2^start @axis), some of them replicas; shard iters are shuffled.
     */
    static Layout powerOfTwoLayout(Random r) {
        List<Iter> shard = new ArrayList<>();
        List<Iter> replica = new ArrayList<>();
        int budget = 8;
        for (Axis axis : HARDWARE) {
            if (r.nextInt(3) == 0) {
                continue;
            }
            int n = Math.min(budget, r.nextInt(5));
            budget -= n;
            int start = 0;
            while (start < n) {
                int len = 1 + r.nextInt(n - start);
                Iter it = new Iter(1L << len, 1L << start, axis);
                (r.nextInt(5) == 0 ? replica : shard).add(it);
                start += len;
            }
        }
        Collections.shuffle(shard, r);
        if (r.nextInt(4) == 0) {
            shard.add(r.nextInt(shard.size() + 1), new Iter(1, r.nextInt(5), HARDWARE.get(r.nextInt(4))));
        }
        return new Layout(shard, replica, new TreeMap<>());
    }

    static Shape powerOfTwoShape(Random r, long size) {
        int bits = Long.numberOfTrailingZeros(size);
        int rank = 1 + r.nextInt(3);
        long[] dims = new long[rank];
        for (int k = 0; k < rank; k++) {
            int b = k == rank - 1 ? bits : r.nextInt(bits + 1);
            dims[k] = 1L << b;
            bits -= b;
        }
        return Shape.of(dims);
    }

    /** Every input point of {@code ll}, grouped by the output it maps to (outputs as flat row-major indices). */
    private static Map<Long, TreeSet<Point>> preimagesByOutput(LinearLayout ll, Shape shape) {
        Map<Long, TreeSet<Point>> out = new HashMap<>();
        int n = ll.inputs().size();
        long total = ll.inputSize();
        for (long code = 0; code < total; code++) {
            long[] input = new long[n];
            long rest = code;
            TreeMap<Axis, Long> p = new TreeMap<>();
            for (int i = 0; i < n; i++) {
                input[i] = rest % ll.inputs().get(i).size();
                rest /= ll.inputs().get(i).size();
                p.put(Axis.of(ll.inputs().get(i).name()), input[i]);
            }
            long c = Oracle.flat(shape.toArray(), ll.apply(input));
            out.computeIfAbsent(c, x -> new TreeSet<>()).add(new Point(p));
        }
        return out;
    }

    /** For every logical c: L(c) is exactly the set of hardware points p with ll.apply(p) = c. */
    private static void assertSameRelation(Layout l, Shape shape, LinearLayout ll) {
        List<TreeSet<Point>> table = Oracle.table(l);
        Map<Long, TreeSet<Point>> pre = preimagesByOutput(ll, shape);
        assertEquals(table.size(), pre.size(), "outputs reached by " + ll + " vs size of " + l);
        for (int c = 0; c < table.size(); c++) {
            assertEquals(table.get(c), pre.get((long) c), "logical index " + c + " of " + l + " vs " + ll);
        }
    }

    @Test
    void powerOfTwoLayoutsConvertToTheSameRelation() {
        Property.forAll("linear fromAxe keeps the relation", random -> {
            Layout l = powerOfTwoLayout(random);
            Shape shape = powerOfTwoShape(random, l.size());
            LinearLayout ll = LinearInterop.tryFromAxe(l, shape).orElseThrow();
            assertSameRelation(l, shape, ll);
            for (LinearLayout.Dim in : ll.inputs()) {
                assertEquals(1L << in.bits(), l.spanOn(Axis.of(in.name())), "bits of " + in + " in " + ll);
            }
        });
    }

    @Test
    void axeToLinearToAxeInducesTheSameMap() {
        Property.forAll("linear toAxe(fromAxe(l)) = l", random -> {
            Layout l = powerOfTwoLayout(random);
            Shape shape = powerOfTwoShape(random, l.size());
            ShapedLayout back = LinearInterop.tryToAxe(LinearInterop.fromAxe(l, shape).orElseThrow()).orElseThrow();
            assertEquals(shape, back.shape());
            assertTrue(Oracle.sameMap(l, back.layout()), l + " -> " + back);
        });
    }

    /** A random linear layout whose non-zero bases are a permutation of the output bits (some zero bases too). */
    static LinearLayout singleBitLinearLayout(Random r) {
        int rank = 1 + r.nextInt(3);
        List<LinearLayout.Dim> outs = new ArrayList<>();
        List<long[]> units = new ArrayList<>();
        int total = 0;
        for (int k = 0; k < rank; k++) {
            int bits = r.nextInt(4);
            outs.add(new LinearLayout.Dim("dim" + k, bits));
            for (int b = 0; b < bits; b++) {
                long[] v = new long[rank];
                v[k] = 1L << b;
                units.add(v);
            }
            total += bits;
        }
        List<long[]> pool = new ArrayList<>(units);
        int zeros = r.nextInt(3);
        for (int z = 0; z < zeros; z++) {
            pool.add(new long[rank]);
        }
        Collections.shuffle(pool, r);
        List<LinearLayout.Dim> ins = new ArrayList<>();
        List<List<List<Long>>> bases = new ArrayList<>();
        int next = 0;
        for (int i = 0; i < 3 && next < pool.size(); i++) {
            int bits = i == 2 ? pool.size() - next : 1 + r.nextInt(pool.size() - next);
            ins.add(new LinearLayout.Dim(HARDWARE.get(i).name(), bits));
            List<List<Long>> b = new ArrayList<>();
            for (int j = 0; j < bits; j++) {
                b.add(java.util.Arrays.stream(pool.get(next++)).boxed().toList());
            }
            bases.add(b);
        }
        assertTrue(total + zeros == next);
        return new LinearLayout(ins, outs, bases);
    }

    @Test
    void singleBitLinearLayoutsConvertToAxeAndBack() {
        Property.forAll("linear toAxe keeps the relation and fromAxe returns it", random -> {
            LinearLayout ll = singleBitLinearLayout(random);
            ShapedLayout axe = LinearInterop.tryToAxe(ll).orElseThrow();
            assertSameRelation(axe.layout(), axe.shape(), ll);
            assertEquals(ll, LinearInterop.tryFromAxe(axe.layout(), axe.shape()).orElseThrow());
        });
    }

    @Test
    void xorMixedLinearLayoutsAreRefusedAsSwizzles() {
        Property.forAll("linear toAxe refuses XOR mixing", random -> {
            LinearLayout ll = singleBitLinearLayout(random);
            if (ll.inputs().isEmpty()) {
                return;
            }
            int i = random.nextInt(ll.inputs().size());
            if (ll.inputs().get(i).bits() == 0 || ll.outputs().stream().mapToInt(LinearLayout.Dim::bits).sum() < 2) {
                return;
            }
            // Add a second output bit to one basis: it now mixes two logical bits.
            List<List<List<Long>>> bases = ll.basesAsLists();
            int j = random.nextInt(ll.inputs().get(i).bits());
            List<Long> v = new ArrayList<>(bases.get(i).get(j));
            List<int[]> free = new ArrayList<>();
            for (int k = 0; k < v.size(); k++) {
                for (int b = 0; b < ll.outputs().get(k).bits(); b++) {
                    if ((v.get(k) >> b & 1) == 0) {
                        free.add(new int[] {k, b});
                    }
                }
            }
            if (v.stream().allMatch(x -> x == 0)) {
                int[] f1 = free.remove(random.nextInt(free.size()));
                v.set(f1[0], v.get(f1[0]) | 1L << f1[1]);
            }
            int[] f2 = free.get(random.nextInt(free.size()));
            v.set(f2[0], v.get(f2[0]) | 1L << f2[1]);
            List<List<Long>> in = new ArrayList<>(bases.get(i));
            in.set(j, v);
            bases.set(i, in);
            LinearLayout mixed = new LinearLayout(ll.inputs(), ll.outputs(), bases);
            Result<ShapedLayout> c = LinearInterop.tryToAxe(mixed);
            assertFalse(c.isPresent(), mixed.toString());
            assertTrue(c.reason().contains("XOR mix"), c.reason());
        });
    }

    @Test
    void fromAxeAcceptsExactlyTheBitLinearLayouts() {
        int[] accepted = {0};
        Property.forAll("linear fromAxe accepts iff the image is a full bit box", seeded -> {
            // Consecutive seeds give correlated first draws of java.util.Random: scramble once.
            Random random = new Random(seeded.nextLong() * 0x9E3779B97F4A7C15L);
            Layout l = random.nextBoolean() ? RandomLayouts.layout(random) : powerOfTwoLayout(random);
            Shape shape = random.nextBoolean() ? RandomLayouts.shapeOf(random, l.size(), 3)
                    : Long.bitCount(l.size()) == 1 ? powerOfTwoShape(random, l.size()) : Shape.of(l.size());
            boolean expected = bitLinearByEnumeration(l, shape);
            Result<LinearLayout> c = LinearInterop.tryFromAxe(l, shape);
            assertEquals(expected, c.isPresent(), l + " with " + shape + ": " + c);
            if (c.isPresent()) {
                accepted[0]++;
                assertSameRelation(l, shape, c.orElseThrow());
            }
        });
        assertTrue(accepted[0] > Property.CASES / 5, "too few accepted: " + accepted[0]);
    }

    /**
     * The reference: power-of-two shape, extents and strides (positive; a replica may have stride 0), no
     * offset, and the enumerated image is the full box of [0, span_X) over the axes with one point per
     * (index, replica) pair and every span a power of two.
     */
    private static boolean bitLinearByEnumeration(Layout l, Shape shape) {
        for (long d : shape.dims()) {
            if (Long.bitCount(d) != 1) {
                return false;
            }
        }
        if (!l.offset().isEmpty()) {
            return false;
        }
        long replicas = 1;
        for (Iter it : l.replica()) {
            if (it.stride() == 0 || it.extent() == 1) {
                continue;
            }
            if (Long.bitCount(it.extent()) != 1 || it.stride() < 0 || Long.bitCount(it.stride()) != 1) {
                return false;
            }
            replicas *= it.extent();
        }
        for (Iter it : l.shard()) {
            if (it.extent() > 1 && (Long.bitCount(it.extent()) != 1 || it.stride() <= 0 || Long.bitCount(it.stride()) != 1)) {
                return false;
            }
        }
        TreeSet<Point> image = new TreeSet<>();
        Oracle.table(l).forEach(image::addAll);
        long box = 1;
        for (Axis a : l.axes()) {
            long span = l.spanOn(a);
            if (Long.bitCount(span) != 1) {
                return false;
            }
            box *= span;
        }
        if (image.size() != l.size() * replicas || image.size() != box) {
            return false;
        }
        for (Point p : image) {
            for (Axis a : p.coords().keySet()) {
                if (p.get(a) < 0 || p.get(a) >= l.spanOn(a)) {
                    return false;
                }
            }
        }
        return true;
    }

    @Test
    void columnMajor3x4IsNotBitLinear() {
        // AXE-SPEC 8.4 / paper Appendix G: Axe expresses it, no linear layout does.
        Result<LinearLayout> c = LinearInterop.tryFromAxe(Layout.parse("S[(3,4):(1,3)]"), Shape.of(3, 4));
        assertFalse(c.isPresent());
        assertTrue(c.reason().contains("not bit-linear"), c.reason());
    }

    @Test
    void refusalsNameTheBrokenRule() {
        assertRefused("S[(4,2):(3,1)]", Shape.of(8), "stride 3, not a power of two: the layout is not bit-linear");
        assertRefused("S[(2,3):(3,1)]", Shape.of(6), "not a power of two");
        assertRefused("S[(4,4):(2,1)]", Shape.of(16), "both use bit 1 of axis m: overlapping bits");
        assertRefused("S[4:-1]", Shape.of(4), "negative stride -1");
        assertRefused("S[4:1] + 4", Shape.of(4), "has offset");
        assertRefused("S[4:2]", Shape.of(4), "leaves bit 0 of axis m unused");
        assertRefused("S[4:1] + R[2:2]", Shape.of(4), "overlapping bits");
        assertRefused("S[(2,2):(0,1)]", Shape.of(4), "stride 0");
        assertThrows(AxeException.class, () -> LinearInterop.tryFromAxe(Layout.parse("S[4:1]"), Shape.of(8)));
    }

    private static void assertRefused(String layout, Shape shape, String fragment) {
        Result<LinearLayout> c = LinearInterop.tryFromAxe(Layout.parse(layout), shape);
        assertFalse(c.isPresent(), layout);
        assertTrue(c.reason().contains(fragment), c.reason());
    }

    @Test
    void tritonDocumentationExampleIsASwizzle() {
        // t, w in [0,4): L(w=1) = (0,1), L(w=2) = (0,2), L(t=1) = (1,1), L(t=2) = (2,2); L(t=1, w=3) = (1,2).
        LinearLayout ll = new LinearLayout(
                List.of(new LinearLayout.Dim("t", 2), new LinearLayout.Dim("w", 2)),
                List.of(new LinearLayout.Dim("dim0", 2), new LinearLayout.Dim("dim1", 2)),
                List.of(List.of(List.of(1L, 1L), List.of(2L, 2L)), List.of(List.of(0L, 1L), List.of(0L, 2L))));
        assertArrayEquals(new long[] {1, 2}, ll.apply(1, 3));
        Result<ShapedLayout> c = LinearInterop.tryToAxe(ll);
        assertTrue(c.reason().contains("t=1 -> (1,1) sets 2 output bits: an XOR mix (a swizzle)"),
                c.reason());
    }

    @Test
    void sharedMemorySwizzleFromTheTritonSeedIsRefused() {
        // SwizzledShared vec=1, perPhase=1, maxPhase=4 on 4x4: row r has basis (r, r mod 4): (1,1), (2,2).
        LinearLayout ll = new LinearLayout(List.of(new LinearLayout.Dim("offset", 4)),
                List.of(new LinearLayout.Dim("dim0", 2), new LinearLayout.Dim("dim1", 2)),
                List.of(List.of(List.of(0L, 1L), List.of(0L, 2L), List.of(1L, 1L), List.of(2L, 2L))));
        assertFalse(LinearInterop.toAxe(ll).isPresent());
        // Without the swizzle (maxPhase = 1) the same offsets are the row-major 4x4 layout.
        LinearLayout plain = new LinearLayout(List.of(new LinearLayout.Dim("offset", 4)),
                List.of(new LinearLayout.Dim("dim0", 2), new LinearLayout.Dim("dim1", 2)),
                List.of(List.of(List.of(0L, 1L), List.of(0L, 2L), List.of(1L, 0L), List.of(2L, 0L))));
        assertEquals("S[16:1@offset] with shape (4,4)", LinearInterop.toAxe(plain).orElseThrow().toString());
    }

    @Test
    void amdMfma32x32TileFromTheTritonSeedConverts() {
        // register: (0,1) (0,2) (0,8) (0,16) along rows, lane: (1,0) ... (16,0) along columns, lane 32 -> row 4.
        // Written with outputs (dim0 = row, dim1 = column).
        LinearLayout mfma = new LinearLayout(
                List.of(new LinearLayout.Dim("register", 4), new LinearLayout.Dim("lane", 6)),
                List.of(new LinearLayout.Dim("dim0", 5), new LinearLayout.Dim("dim1", 5)),
                List.of(List.of(List.of(1L, 0L), List.of(2L, 0L), List.of(8L, 0L), List.of(16L, 0L)),
                        List.of(List.of(0L, 1L), List.of(0L, 2L), List.of(0L, 4L), List.of(0L, 8L), List.of(0L, 16L),
                                List.of(4L, 0L))));
        ShapedLayout axe = LinearInterop.toAxe(mfma).orElseThrow();
        // Rows: 16,8 from register bits 3,2; 4 from lane bit 5; 2,1 from register bits 1,0. Columns: lane 0..31.
        assertEquals("S[(4,2,4,32):(4@register,32@lane,1@register,1@lane)] with shape (32,32)", axe.toString());
        // Row 4 holds lanes 32..63, row 8 holds lanes 0..31 again (register 4), as in the seed's table.
        assertEquals(List.of(Point.of("lane", 32 + 5, "register", 0)), axe.layout().apply(axe.shape(), 4, 5));
        assertEquals(List.of(Point.of("lane", 5, "register", 4)), axe.layout().apply(axe.shape(), 8, 5));
        assertSameRelation(axe.layout(), axe.shape(), mfma);
    }

    @Test
    void zerosTimesIdentityIsABroadcast() {
        // Triton: zeros1D(4, i, o) * identity1D(2, i, o) is x -> x / 4 on [0, 8): the low two bits are replicas.
        LinearLayout ll = new LinearLayout(List.of(new LinearLayout.Dim("i", 3)), List.of(new LinearLayout.Dim("dim0", 1)),
                List.of(List.of(List.of(0L), List.of(0L), List.of(1L))));
        ShapedLayout axe = LinearInterop.toAxe(ll).orElseThrow();
        assertEquals("S[2:4@i] + R[4:1@i] with shape (2)", axe.toString());
        assertEquals(ll, LinearInterop.fromAxe(axe.layout(), axe.shape()).orElseThrow());
    }

    @Test
    void unproducedOutputBitsAndRepeatedBasesAreRefused() {
        LinearLayout gap = new LinearLayout(List.of(new LinearLayout.Dim("i", 1)), List.of(new LinearLayout.Dim("o", 2)),
                List.of(List.of(List.of(2L))));
        assertTrue(LinearInterop.tryToAxe(gap).reason().contains("o bit 0 of"));
        LinearLayout twice = new LinearLayout(List.of(new LinearLayout.Dim("i", 2)), List.of(new LinearLayout.Dim("o", 1)),
                List.of(List.of(List.of(1L), List.of(1L))));
        assertTrue(LinearInterop.tryToAxe(twice).reason().contains("not injective"));
    }

    @Test
    void tensorCoreExampleWithoutItsOffsetConverts() {
        // S[(8,2,4,2):(4@laneid,1@warpid,1@laneid,1@reg)] + R[2:2@warpid]: warpid bits 0 (shard), 1 (replica).
        Layout l = Layout.parse("S[(8,2,4,2):(4@laneid,1@warpid,1@laneid,1@reg)] + R[2:2@warpid]");
        LinearLayout ll = LinearInterop.fromAxe(l, Shape.of(8, 16)).orElseThrow();
        assertEquals("[reg: (0,1); laneid: (0,2) (0,4) (1,0) (2,0) (4,0); warpid: (0,8) (0,0)] -> (dim0:3, dim1:4)",
                ll.toString());
        assertSameRelation(l, Shape.of(8, 16), ll);
        // The paper's version adds R[2:4@warpid] + 5@warpid: the offset is refused.
        assertFalse(LinearInterop.fromAxe(Layout.parse(PAPER_TENSOR_CORE), Shape.of(8, 16)).isPresent());
    }

    private static final String PAPER_TENSOR_CORE =
            "S[(8,2,4,2):(4@laneid,1@warpid,1@laneid,1@reg)] + R[2:4@warpid] + 5@warpid";

    @Test
    void linearLayoutValidatesItsBases() {
        List<LinearLayout.Dim> in = List.of(new LinearLayout.Dim("i", 1));
        List<LinearLayout.Dim> out = List.of(new LinearLayout.Dim("o", 1));
        assertTrue(LinearLayout.checkInvariants(in, out, List.of(List.of(List.of(2L)))).orElseThrow()
                .contains("outside [0, 2)"));
        assertTrue(LinearLayout.tryCreate(in, out, List.of(List.of())).isEmpty());
        assertThrows(AxeException.class, () -> new LinearLayout(in, List.of(new LinearLayout.Dim("o", 1),
                new LinearLayout.Dim("o", 1)), List.of(List.of(List.of(1L, 0L)))));
        assertThrows(AxeException.class, () -> new LinearLayout.Dim("bad name", 1));
        LinearLayout a = new LinearLayout(in, out, List.of(List.of(List.of(1L))));
        assertEquals(a, LinearLayout.tryCreate(in, out, List.of(List.of(List.of(1L)))).orElseThrow());
        assertEquals(a.hashCode(), new LinearLayout(in, out, List.of(List.of(List.of(1L)))).hashCode());
    }
}
