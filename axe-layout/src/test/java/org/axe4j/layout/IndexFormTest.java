package org.axe4j.layout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The base point as a formula in the index, and the shift of a symbolic region start, against enumeration. */
class IndexFormTest {
    private static final int CASES = 500;

    @Test
    void theFormulaIsTheBasePointAtEveryIndex() {
        Property.forAll("IndexForm = D(x) + O", CASES, r -> {
            Layout l = RandomLayouts.layout(r);
            if (l.size() > 1024) {
                return;
            }
            IndexForm f = IndexForm.of(l);
            assertEquals(l.axes(), f.digits().keySet(), l.toString());
            for (long x = 0; x < l.size(); x++) {
                assertEquals(l.base(x), f.evaluate(x), l + " at " + x + ": " + f);
            }
        });
    }

    @Test
    void theOutermostDigitHasNoModAndUnitOrZeroStrideItersAreLeftOut() {
        IndexForm f = IndexForm.of(Layout.parse("S[(1,4,2,4):(7,1,0,100)] + 30"));
        assertEquals(List.of(new IndexForm.Digit(8, 4, 1, true), new IndexForm.Digit(1, 4, 100, false)),
                f.digits().get(Axis.M));
        assertEquals(30L, f.offset().get(Axis.M));
        // Chained iters are one digit: S[(4,8):(8,1)] is x; the chain stops at another axis.
        assertEquals(List.of(new IndexForm.Digit(1, 32, 1, true)),
                IndexForm.of(Layout.parse("S[(4,8):(8,1)]")).digits().get(Axis.M));
        IndexForm split = IndexForm.of(Layout.parse("S[(2,4,8):(32,8@laneid,1)]"));
        assertEquals(List.of(new IndexForm.Digit(32, 2, 32, true), new IndexForm.Digit(1, 8, 1, false)),
                split.digits().get(Axis.M));
        assertEquals(List.of(new IndexForm.Digit(8, 4, 8, false)), split.digits().get(Axis.of("laneid")));
    }

    /**
     * Wherever a shift is found, moving a box by t times the symbolic step moves every image point by the shift
     * times t, for every t that keeps the box inside the shape; a layout on which the step does not act as a
     * translation gets none.
     */
    @Test
    void aShiftMovesEveryPointOfTheBoxByItsMultiple() {
        AtomicInteger found = new AtomicInteger();
        AtomicInteger moved = new AtomicInteger();
        Property.forAll("IndexForm.startShift", CASES, r -> {
            Layout l = r.nextBoolean() ? RandomLayouts.layout(r) : compact(r);
            if (l.size() > 2048) {
                return;
            }
            Shape s = RandomLayouts.shapeOf(r, l.size(), 3);
            int rank = s.rank();
            long[] step = new long[rank];
            long[] begin = new long[rank];
            long[] width = new long[rank];
            long flatStep = 0;
            for (int i = 0; i < rank; i++) {
                long d = s.dims().get(i);
                step[i] = r.nextInt(3) == 0 ? 0 : 1 + r.nextInt((int) Math.min(d, 8));
                width[i] = 1 + r.nextInt((int) d);
                begin[i] = r.nextInt((int) (d - width[i] + 1));
                flatStep += step[i] * stride(s, i);
            }
            Result<IndexForm.Shift> shift = IndexForm.startShift(l, new long[] {flatStep});
            if (shift.isEmpty()) {
                return;
            }
            found.incrementAndGet();
            IndexForm.Shift sh = shift.get();
            for (long t = -4; t <= 4; t++) {
                long[] moved0 = new long[rank];
                boolean inside = true;
                for (int i = 0; i < rank; i++) {
                    moved0[i] = begin[i] + step[i] * t;
                    inside &= moved0[i] >= 0 && moved0[i] + width[i] <= s.dims().get(i);
                }
                if (!inside) {
                    continue;
                }
                Point by = new Point(new TreeMap<>(java.util.Map.of(sh.axis(), sh.coefficient(flatStep) * t)));
                for (long y = 0; y < product(width); y++) {
                    long[] c = Shape.of(width).unflatten(y);
                    long[] at = new long[rank];
                    long[] at0 = new long[rank];
                    for (int i = 0; i < rank; i++) {
                        at[i] = moved0[i] + c[i];
                        at0[i] = begin[i] + c[i];
                    }
                    assertEquals(l.base(s.flatten(at0)).plus(by), l.base(s.flatten(at)),
                            l + " over " + s + ", step " + java.util.Arrays.toString(step) + " * " + t + ", " + sh);
                }
                moved.incrementAndGet();
            }
        });
        assertTrue(found.get() > CASES / 4 && moved.get() > CASES, found + " shifts, " + moved + " moved boxes");
    }

    @Test
    void aStepTheLayoutDoesNotTranslateHasNoShift() {
        // S[(4,4):(1,4)] (column-major 4x4): a start moving by 2 rows lands in the middle of the outer iter, whose
        // digit wraps: no offset moves the box by the same amount for every value.
        Result<IndexForm.Shift> none = IndexForm.startShift(Layout.parse("S[(4,4):(1,4)]"), new long[] {2});
        assertTrue(none.isEmpty());
        assertTrue(none.reason().contains("S[(4,4):(1,4)]"), none.reason());
        // A multiple of 4 moves the outer digit only: stride 1 per 4.
        IndexForm.Shift four = IndexForm.startShift(Layout.parse("S[(4,4):(1,4)]"), new long[] {4, 8}).get();
        assertEquals(new IndexForm.Shift(Axis.M, 4, 1), four);
        assertEquals(2L, four.coefficient(8));
        // TIRx's staged buffer: [stage:stage+1, :, :] of (3, 128, 128) is 16384 * stage.
        IndexForm.Shift stage = IndexForm.startShift(Layout.parse("S[(3,128,128):(16384,128,1)]"),
                new long[] {16384}).get();
        assertEquals(16384L, stage.coefficient(16384));
        // A compact shard is linear in the whole index: the innermost iter reads any step.
        assertEquals(new IndexForm.Shift(Axis.M, 1, 1),
                IndexForm.startShift(Layout.parse("S[(2,3,4):(12,4,1)]"), new long[] {4}).get());
    }

    /** Row-major compact strides over random extents, sometimes scaled: the shape stage buffers have. */
    private static Layout compact(Random r) {
        List<Iter> shard = new ArrayList<>();
        long stride = 1 + r.nextInt(2);
        for (int k = 0, n = 1 + r.nextInt(3); k < n; k++) {
            long e = 1 + r.nextInt(6);
            shard.add(0, new Iter(e, stride, Axis.M));
            stride *= e;
        }
        return new Layout(shard, List.of(), RandomLayouts.offset(r));
    }

    private static long stride(Shape s, int i) {
        long p = 1;
        for (int j = i + 1; j < s.rank(); j++) {
            p *= s.dims().get(j);
        }
        return p;
    }

    private static long product(long[] v) {
        long p = 1;
        for (long x : v) {
            p *= x;
        }
        return p;
    }
}
