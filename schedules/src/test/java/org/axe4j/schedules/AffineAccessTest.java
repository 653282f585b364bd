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
    void runTimeStartsNeedADimWalkedByOneStride() {
        Layout rowMajor = Layout.parse("S[(6,40):(40,1)]");
        Operand row = new Operand("src0", "A", "float32", new long[] {6, 40}, new long[] {0, 0}, new long[] {1, 40},
                rowMajor, 3, new boolean[] {true, false});
        AffineAccess a = AffineAccess.of(row);
        assertEquals(3, a.base());
        assertEquals(java.util.Map.of(0, 40L), a.startStrides());
        assertEquals(List.of(new AffineAccess.Piece(40, 1)), a.dims().get(1));

        Layout tiled = Layout.parse("S[(2,4,2,4):(32,4,16,1)]");
        Operand split = new Operand("src0", "A", "float32", new long[] {8, 8}, new long[] {0, 0}, new long[] {2, 8},
                tiled, 0, new boolean[] {true, false});
        Declined d = org.junit.jupiter.api.Assertions.assertThrows(Declined.class, () -> AffineAccess.of(split));
        assertTrue(d.getMessage().contains("dim 0 starts at a run-time index"), d.getMessage());
    }

    @Test
    void vectorLengthsPreferWholeRegisters() {
        assertEquals(12, LoopNest.vectorSplit(12, 16));
        assertEquals(8, LoopNest.vectorSplit(40, 16));
        assertEquals(16, LoopNest.vectorSplit(96, 16));
        assertEquals(7, LoopNest.vectorSplit(21, 16));
        assertEquals(0, LoopNest.vectorSplit(37, 16));
    }

    @Test
    void digitsMapEqualsTheLayoutMapEverywhere() {
        Property.forAll("digits map = layout map", r -> {
            Operand op = randomOperand(r, "dst");
            java.util.Map<String, Object> digits = ElementwiseRules.digitMap(op);
            long[] rowStrides = (long[]) digits.get("row_strides");
            @SuppressWarnings("unchecked")
            List<List<Long>> iters = (List<List<Long>>) digits.get("iters");
            @SuppressWarnings("unchecked")
            List<Long> replicas = (List<Long>) digits.get("replicas");
            Shape shape = Shape.of(op.shape());
            long slab = op.layout().spanOn(Axis.M);
            for (long x = 0; x < shape.size(); x++) {
                long[] coord = shape.unflatten(x);
                long flat = 0;
                for (int d = 0; d < coord.length; d++) {
                    flat += coord[d] * rowStrides[d];
                }
                long addr = (Long) digits.get("base");
                for (List<Long> it : iters) {
                    addr += (flat / it.get(2)) % it.get(0) * it.get(1);
                }
                List<Long> got = new ArrayList<>();
                for (long rep : replicas) {
                    got.add(addr + rep);
                }
                got.sort(Long::compare);
                List<Long> expected = new ArrayList<>();
                for (Point p : op.layout().apply(shape, coord)) {
                    expected.add(p.get(Axis.M) + p.get(AffineAccess.CPU) * slab);
                }
                expected.sort(Long::compare);
                assertEquals(expected, got, op + " at " + java.util.Arrays.toString(coord));
            }
        });
    }
}
