package org.axe4j.passes.transform;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Canonicalize;
import org.axe4j.layout.Iter;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Oracle;
import org.axe4j.layout.Property;
import org.axe4j.layout.RandomLayouts;
import org.axe4j.layout.Shape;
import org.junit.jupiter.api.Test;

/**
 * The pass's canonical form (canonical, grouped by the buffer shape) keeps the map, is a fixed point and names no
 * axis the original layout did not use.
 */
class CanonicalizeLayoutsTest {
    private static final Axis P = Axis.of("P");
    private static final Axis F = Axis.of("F");

    @Test
    void canonicalFormForAShapeKeepsTheMapByEnumerationAndIsIdempotent() {
        AtomicInteger grouped = new AtomicInteger();
        Property.forAll("canonicalFor", Math.max(1, Property.CASES / 20), r -> {
            Layout l = RandomLayouts.layout(r);
            Shape shape = RandomLayouts.shapeOf(r, l.size(), 3);
            Long[] dims = shape.dims().toArray(new Long[0]);
            Layout once = checked(l, dims);
            if (!once.equals(Canonicalize.canonicalize(l))) {
                grouped.incrementAndGet();
            }
        });
        assertTrue(grouped.get() > 0, "no case exercised the grouping by shape");
    }

    /** Trainium tiles: each dim on P or F (row-major per axis), unit dims, sometimes extra unit iters. */
    @Test
    void trainiumLayoutsWithUnitDimsKeepTheirPartitionAndFreeAxes() {
        AtomicInteger unitDims = new AtomicInteger();
        Property.forAll("canonicalFor-trn", Math.max(1, Property.CASES / 20), r -> {
            int rank = 1 + r.nextInt(3);
            Long[] dims = new Long[rank];
            Axis[] axes = new Axis[rank];
            long size = 1;
            for (int d = 0; d < rank; d++) {
                dims[d] = r.nextInt(3) == 0 ? 1L : List.of(2L, 4L, 8L, 16L, 128L).get(r.nextInt(5));
                dims[d] = size * dims[d] > Oracle.LIMIT ? 2L : dims[d]; // the oracle enumerates the whole map
                size *= dims[d];
                axes[d] = r.nextBoolean() ? P : F;
                unitDims.addAndGet(dims[d] == 1 ? 1 : 0);
            }
            Layout l = pf(dims, axes, r);
            Layout once = checked(l, dims);
            assertEquals(rank, once.shard().size(), () -> l + " for " + List.of(dims) + " became " + once
                    + ": one iter per dim expected (each dim is one run on its axis)");
            for (int d = 0; d < rank; d++) {
                if (dims[d] == 1) {
                    assertEquals(axes[d], once.shard().get(d).axis(), "unit dim " + d + " of " + l);
                }
            }
        });
        assertTrue(unitDims.get() > 0);
    }

    @Test
    void aPerPartitionColumnKeepsItsFreeUnitIter() {
        Layout column = Layout.shard(Iter.of(128, 1, P), Iter.of(1, 1, F));
        assertEquals(column, CanonicalizeLayouts.canonicalFor(column, new Long[] {128L, 1L}));
        Layout row = Layout.shard(Iter.of(1, 1, P), Iter.of(1024, 1, F));
        assertEquals(row, CanonicalizeLayouts.canonicalFor(row, new Long[] {1L, 1024L}));
        // a unit dim with no iter of its own takes the axis of its neighbour, not the memory axis m
        Layout bare = Layout.shard(Iter.of(128, 1, P));
        assertEquals(Layout.shard(Iter.of(128, 1, P), Iter.of(1, 1, P)),
                CanonicalizeLayouts.canonicalFor(bare, new Long[] {128L, 1L}));
    }

    /** Map kept, idempotent, same canonical form, no new axis; returns the pass's form. */
    private static Layout checked(Layout l, Long[] dims) {
        Layout once = CanonicalizeLayouts.canonicalFor(l, dims);
        assertTrue(Oracle.sameMap(l, once), () -> l + " for " + List.of(dims) + " became " + once);
        assertEquals(once, CanonicalizeLayouts.canonicalFor(once, dims), () -> "not idempotent on " + l);
        assertEquals(Canonicalize.canonicalize(l), Canonicalize.canonicalize(once));
        if (!l.shard().isEmpty() || !l.axes().isEmpty()) {
            assertTrue(l.axes().containsAll(once.axes()), () -> l + " became " + once + ": new axis");
        }
        return once;
    }

    /** Dims on their axis, each axis row-major over its dims; unit iters of random axes sprinkled between. */
    private static Layout pf(Long[] dims, Axis[] axes, Random r) {
        long[] strides = new long[dims.length];
        long nextP = 1;
        long nextF = 1;
        for (int d = dims.length - 1; d >= 0; d--) {
            if (axes[d].equals(P)) {
                strides[d] = nextP;
                nextP *= dims[d];
            } else {
                strides[d] = nextF;
                nextF *= dims[d];
            }
        }
        List<Iter> shard = new ArrayList<>();
        for (int d = 0; d < dims.length; d++) {
            if (dims[d] > 1 && r.nextInt(4) == 0) {
                shard.add(Iter.of(1, 1 + r.nextInt(3), r.nextBoolean() ? P : F)); // inside a real dim: dropped
            }
            shard.add(Iter.of(dims[d], strides[d], axes[d]));
        }
        return Layout.shard(shard.toArray(new Iter[0]));
    }
}
