package org.axe4j.schedules;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Iter;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Point;
import org.axe4j.layout.Property;
import org.axe4j.layout.Shape;
import org.junit.jupiter.api.Test;

/** The affine address of every accepted region equals the layout's own map, element by element and replica by replica. */
class AffineAccessTest {

    /** A buffer shape and a memory layout whose iters refine the shape's dims (each dim split into 1..2 iters, permuted strides). */
    static Operand randomOperand(Random r, String role) {
        int rank = 1 + r.nextInt(3);
        long[] shape = new long[rank];
        List<Long> extents = new ArrayList<>();
        for (int d = 0; d < rank; d++) {
            long inner = 1 + r.nextInt(4);
            long outer = 1 + r.nextInt(4);
            shape[d] = inner * outer;
            if (r.nextBoolean() && inner > 1 && outer > 1) {
                extents.add(outer);
                extents.add(inner);
            } else {
                extents.add(shape[d]);
            }
        }
        // strides: a random permutation of a compact column order, optionally padded.
        int n = extents.size();
        List<Integer> order = new ArrayList<>();
        for (int k = 0; k < n; k++) {
            order.add(k);
        }
        java.util.Collections.shuffle(order, r);
        long[] strides = new long[n];
        int cpuIter = r.nextInt(4) == 0 ? r.nextInt(n) : -1; // sometimes one digit goes to the worker axis
        long next = 1;
        for (int k : order) {
            if (k == cpuIter) {
                strides[k] = 1;
                continue;
            }
            strides[k] = next;
            next *= extents.get(k) + r.nextInt(2);
        }
        List<Iter> shard = new ArrayList<>();
        for (int k = 0; k < n; k++) {
            shard.add(new Iter(extents.get(k), strides[k], k == cpuIter ? AffineAccess.CPU : Axis.M));
        }
        List<Iter> replica = r.nextInt(4) == 0 ? List.of(new Iter(2, next, Axis.M)) : List.of();
        Map<Axis, Long> offset = r.nextBoolean() ? Map.of(Axis.M, (long) r.nextInt(5)) : Map.of();
        Layout layout = Layout.of(shard, replica, offset);
        long[] start = new long[rank];
        long[] extent = new long[rank];
        for (int d = 0; d < rank; d++) {
            start[d] = r.nextInt((int) shape[d]);
            extent[d] = 1 + r.nextInt((int) (shape[d] - start[d]));
            if (r.nextBoolean()) {
                start[d] = 0;
                extent[d] = shape[d];
            }
        }
        return new Operand(role, "X", "float32", shape, start, extent, layout);
    }

    @Test
    void acceptedRegionsAddressLikeTheLayout() {
        int[] accepted = {0};
        Property.forAll("affine access = layout map", r -> {
            Operand op = randomOperand(r, "dst");
            AffineAccess access;
            try {
                access = AffineAccess.of(op);
            } catch (Declined declined) {
                assertTrue(declined.getMessage().contains("crosses a digit"), declined.getMessage());
                return;
            }
            accepted[0]++;
            Shape shape = Shape.of(op.shape());
            int rank = op.shape().length;
            long[] coord = new long[rank];
            long total = op.elements();
            for (long flat = 0; flat < total; flat++) {
                long rest = flat;
                long addr = access.base();
                for (int d = rank - 1; d >= 0; d--) {
                    long i = rest % op.extent()[d];
                    rest /= op.extent()[d];
                    coord[d] = op.start()[d] + i;
                    for (AffineAccess.Piece p : access.dims().get(d)) {
                        addr += (i % p.extent()) * p.stride();
                        i /= p.extent();
                    }
                }
                // the point (m, cpu = w) is the shared-memory address m + w * span_m(L)
                List<Long> expected = new ArrayList<>();
                long slab = op.layout().spanOn(Axis.M);
                for (Point p : op.layout().apply(shape, coord)) {
                    expected.add(p.get(Axis.M) + p.get(AffineAccess.CPU) * slab);
                }
                expected.sort(Long::compare);
                List<Long> got = new ArrayList<>();
                for (long rep : access.replicas()) {
                    got.add(addr + rep);
                }
                got.sort(Long::compare);
                assertEquals(expected, got, op + " at " + java.util.Arrays.toString(coord));
            }
        });
        assertTrue(accepted[0] > Property.CASES / 2, "accepted " + accepted[0]);
    }

    @Test
    void wholeBufferRegionsAreAlwaysAccepted() {
        Property.forAll("whole region accepted", r -> {
            Operand op = randomOperand(r, "dst");
            Operand whole = new Operand("dst", "X", "float32", op.shape(), new long[op.shape().length], op.shape(),
                    op.layout());
            AffineAccess.of(whole);
        });
    }

    @Test
    void nonMemoryAxesAreDeclinedWithTheAxisNamed() {
        Layout l = Layout.parse("S[(4,8):(1@laneid,1)]");
        Operand op = new Operand("dst", "X", "float32", new long[] {4, 8}, new long[] {0, 0}, new long[] {4, 8}, l);
        Declined d = org.junit.jupiter.api.Assertions.assertThrows(Declined.class, () -> AffineAccess.of(op));
        assertTrue(d.getMessage().contains("laneid is neither the CPU memory axis m nor the worker axis cpu"),
                d.getMessage());
    }

    @Test
    void refinementOfTwoRadicesKeepsBothAddressMaps() {
        Property.forAll("common refinement", r -> {
            long a = 1 + r.nextInt(6);
            long b = 1 + r.nextInt(6);
            long extent = a * b;
            long s1 = 1 + r.nextInt(5);
            long s2 = 1 + r.nextInt(50);
            List<AffineAccess.Piece> x = List.of(new AffineAccess.Piece(a, s1), new AffineAccess.Piece(b, s2));
            List<AffineAccess.Piece> y = List.of(new AffineAccess.Piece(extent, 3));
            List<LoopNest.Loop> loops = LoopNest.refine(List.of(x, y), extent, false, "test");
            TreeMap<Long, Long> seen = new TreeMap<>();
            long[] counters = new long[loops.size()];
            for (long i = 0; i < extent; i++) {
                long rest = i;
                long ax = 0;
                long ay = 0;
                for (int k = 0; k < loops.size(); k++) {
                    counters[k] = rest % loops.get(k).extent();
                    rest /= loops.get(k).extent();
                    ax += counters[k] * loops.get(k).strides()[0];
                    ay += counters[k] * loops.get(k).strides()[1];
                }
                assertEquals((i % a) * s1 + (i / a) * s2, ax);
                assertEquals(i * 3, ay);
                seen.put(i, ax);
            }
            assertEquals(extent, seen.size());
        });
    }

    @Test
    void tiledRegionExampleOfThePackageDocumentation() {
        Layout tiled = Layout.parse("S[(2,4,2,4):(32,4,16,1)]");
        AffineAccess a = AffineAccess.of(new Operand("src0", "A", "float32", new long[] {8, 8}, new long[] {1, 4},
                new long[] {2, 4}, tiled));
        assertEquals(20, a.base());
        assertEquals(List.of(new AffineAccess.Piece(2, 4)), a.dims().get(0));
        assertEquals(List.of(new AffineAccess.Piece(4, 1)), a.dims().get(1));
        assertEquals(List.of(0L), a.replicas());
    }

    @Test
    void runTimeStartsNeedADimWalkedByOneStrideOrAFixedLowPart() {
        Layout rowMajor = Layout.parse("S[(6,40):(40,1)]");
        Operand row = new Operand("src0", "A", "float32", new long[] {6, 40}, new long[] {0, 0}, new long[] {1, 40},
                rowMajor, 3, new boolean[] {true, false});
        AffineAccess a = AffineAccess.of(row);
        assertEquals(3, a.base());
        assertEquals(List.of(new AffineAccess.StartTerm(1, 0, 40)), a.startTerms().get(0));
        assertEquals(List.of(new AffineAccess.Piece(40, 1)), a.dims().get(1));
        assertEquals(new Modular(40, 0), a.startOffset());

        // rows split as (2 blocks of 4 rows: stride 32)(4 rows: stride 4): a start nothing is known of may fall inside
        // a block; a start known to be 4 n is a whole block (floor(s / 4) * 32), 2 n a row pair inside one, 2 n + 1
        // a row pair that crosses a block at n = 1
        Layout tiled = Layout.parse("S[(2,4,2,4):(32,4,16,1)]");
        Operand split = new Operand("src0", "A", "float32", new long[] {8, 8}, new long[] {0, 0}, new long[] {2, 8},
                tiled, 0, new boolean[] {true, false});
        Declined d = org.junit.jupiter.api.Assertions.assertThrows(Declined.class, () -> AffineAccess.of(split));
        assertTrue(d.getMessage().contains("dim 0 starts at a run-time index 1n, so the region (2 elements past the "
                + "start's known part of 1) may cross digit (4, stride 4)"), d.getMessage());
        AffineAccess blocks = AffineAccess.of(split.withRunTimeStart(0, new Modular(4, 0)));
        assertEquals(List.of(new AffineAccess.StartTerm(4, 0, 32)), blocks.startTerms().get(0));
        assertEquals(new Modular(32, 0), blocks.startOffset());
        AffineAccess pairs = AffineAccess.of(split.withRunTimeStart(0, new Modular(2, 0)));
        assertEquals(List.of(new AffineAccess.StartTerm(1, 4, 4), new AffineAccess.StartTerm(4, 0, 32)),
                pairs.startTerms().get(0));
        assertEquals(8, pairs.startOffsetAt(new long[] {2, 0}));
        assertEquals(32 + 8, pairs.startOffsetAt(new long[] {6, 0}));
        assertEquals(List.of(new AffineAccess.Piece(2, 4)), pairs.dims().get(0));
        Declined odd = org.junit.jupiter.api.Assertions.assertThrows(Declined.class,
                () -> AffineAccess.of(split.withRunTimeStart(0, new Modular(2, 1))));
        assertTrue(odd.getMessage().contains("may cross digit (4, stride 4)"), odd.getMessage());
    }

    /** A buffer of rank 1 or 2 whose dim 0 is split into one to three digits, strides permuted and padded. */
    static Operand splitOperand(Random r) {
        int digits = 1 + r.nextInt(3);
        List<Long> extents = new ArrayList<>();
        long rows = 1;
        for (int k = 0; k < digits; k++) {
            long e = new long[] {2, 3, 4, 8}[r.nextInt(4)];
            extents.add(e);
            rows *= e;
        }
        long cols = new long[] {1, 4, 6}[r.nextInt(3)];
        if (cols > 1) {
            extents.add(cols);
        }
        List<Integer> order = new ArrayList<>();
        for (int k = 0; k < extents.size(); k++) {
            order.add(k);
        }
        java.util.Collections.shuffle(order, r);
        long[] strides = new long[extents.size()];
        long next = 1;
        for (int k : order) {
            strides[k] = next;
            next *= extents.get(k) + (r.nextInt(3) == 0 ? 1 : 0);
        }
        List<Iter> shard = new ArrayList<>();
        for (int k = 0; k < extents.size(); k++) {
            shard.add(new Iter(extents.get(k), strides[k], Axis.M));
        }
        long[] shape = cols > 1 ? new long[] {rows, cols} : new long[] {rows};
        long[] start = new long[shape.length];
        long[] extent = shape.clone();
        extent[0] = Math.min(rows, new long[] {1, 2, 4, rows, rows / 2 + 1}[r.nextInt(5)]);
        start[0] = r.nextInt((int) (rows - extent[0] + 1));
        if (r.nextInt(3) == 0) {
            start[0] = start[0] / extent[0] * extent[0]; // a tile index times the tile
        }
        return new Operand("src0", "X", "float32", shape, start, extent, Layout.of(shard, List.of(), Map.of()));
    }

    /**
     * A run-time start s = c n + b on dim 0: when accepted, at every value s takes in the buffer, every region element
     * is at base + the start terms + the loops' address, as the layout says; that base is one of {@code baseValues};
     * the layout's addresses counted from {@code lowStart} plus the terms are the same (the ldmatrix and descriptor
     * rules rely on it). A tile at a multiple of its extent inside the innermost digit is always accepted.
     */
    @Test
    void runTimeStartsAddressLikeTheLayoutAtEveryValueTheStartTakes() {
        int[] counts = new int[3]; // accepted, accepted with digit terms, declined
        Property.forAll("affine access at run-time starts = layout map", r -> {
            Operand op = r.nextBoolean() ? splitOperand(r) : randomOperand(r, "src0");
            if (AffineAccess.distributed(op)) {
                return;
            }
            long e = op.extent()[0];
            long room = op.shape()[0] - e;
            long c = new long[] {1, 2, 3, 4, 6, 8, e, 2 * e, op.shape()[0]}[r.nextInt(9)];
            Modular s = new Modular(c, op.start()[0]);
            Operand rt = op.withRunTimeStart(0, s);
            AffineAccess a;
            try {
                a = AffineAccess.of(rt);
            } catch (Declined declined) {
                counts[2]++;
                assertTrue(declined.getMessage().contains("run-time index") || declined.getMessage().contains(
                        "crosses a digit"), declined.getMessage());
                List<List<AffineAccess.Piece>> radix = AffineAccess.groupByDim(op);
                boolean tile = c % e == 0 && op.start()[0] % e == 0 && !radix.get(0).isEmpty()
                        && radix.get(0).get(0).extent() % e == 0 && acceptsConstant(op);
                assertTrue(!tile, "a tile at a multiple of its extent inside the innermost digit was declined: "
                        + declined.getMessage());
                return;
            }
            counts[0]++;
            if (a.startTerms().get(0).size() > 1 || a.startTerms().get(0).get(0).divisor() > 1) {
                counts[1]++;
            }
            Shape shape = Shape.of(op.shape());
            long[] low = a.lowStart(rt);
            for (long v : s.valuesIn(0, room + 1)) {
                long[] starts = op.start().clone();
                starts[0] = v;
                long base = a.base() + a.startOffsetAt(starts);
                assertTrue(a.baseValues().contains(base), a.baseValues() + " misses the base " + base + " at " + v);
                for (long flat = 0; flat < op.elements(); flat++) {
                    long[] i = new long[op.shape().length];
                    long rest = flat;
                    long addr = base;
                    for (int d = op.shape().length - 1; d >= 0; d--) {
                        i[d] = rest % op.extent()[d];
                        rest /= op.extent()[d];
                        long k = i[d];
                        for (AffineAccess.Piece p : a.dims().get(d)) {
                            addr += (k % p.extent()) * p.stride();
                            k /= p.extent();
                        }
                    }
                    long want = addressAt(op, shape, starts, i);
                    assertEquals(want, addr, rt + " at start " + v + ", element " + java.util.Arrays.toString(i));
                    assertEquals(want, addressAt(op, shape, low, i) + a.startOffsetAt(starts), "lowStart at " + v);
                }
            }
        });
        assertTrue(counts[0] > Property.CASES / 3, "accepted " + java.util.Arrays.toString(counts));
        assertTrue(counts[1] > Property.CASES / 20, "with digit terms " + java.util.Arrays.toString(counts));
        assertTrue(counts[2] > Property.CASES / 20, "declined " + java.util.Arrays.toString(counts));
    }

    static boolean acceptsConstant(Operand op) {
        try {
            AffineAccess.of(op);
            return true;
        } catch (Declined declined) {
            return false;
        }
    }

    /** The layout's address (first replica) of region element {@code i} from {@code start}. */
    static long addressAt(Operand op, Shape shape, long[] start, long[] i) {
        long[] coord = new long[start.length];
        for (int d = 0; d < coord.length; d++) {
            coord[d] = start[d] + i[d];
        }
        return op.elemOffset() + op.layout().apply(shape, coord).stream().mapToLong(p -> p.get(Axis.M)).min()
                .getAsLong();
    }
}
