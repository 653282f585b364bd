package org.axe4j.passes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.axe4j.layout.Equivalence;
import org.axe4j.layout.IndexForm;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Property;
import org.axe4j.layout.RandomLayouts;
import org.axe4j.layout.Region;
import org.axe4j.layout.Result;
import org.axe4j.layout.Shape;
import org.axe4j.layout.Slice;
import org.junit.jupiter.api.Test;

/**
 * The alignment proof of {@link DigitOffsetSlice}: wherever it holds, the slice less the digit formula at the start
 * is one map at every start the region admits (checked by slicing at each), on random layouts, shapes and boxes.
 */
class DigitOffsetSliceTest {
    @Test
    void anAlignedBoxHasOneBodyAtEveryStart() {
        int[] aligned = {0};
        int[] notAligned = {0};
        Property.forAll("digit offset alignment", 400, r -> {
            Layout l = RandomLayouts.layout(r);
            if (l.size() > 512) {
                return;
            }
            Shape shape = RandomLayouts.shapeOf(r, l.size(), 2);
            int dim = r.nextInt(shape.rank());
            long d = shape.dims().get(dim);
            long width = r.nextBoolean() ? 1 : 1 + r.nextInt((int) d);
            long step = 1 + r.nextInt(8);
            long first = r.nextInt((int) Math.min(step, d - width + 1));
            long rowStride = 1;
            for (int i = dim + 1; i < shape.rank(); i++) {
                rowStride *= shape.dims().get(i);
            }
            long[] begin = new long[shape.rank()];
            long[] end = new long[shape.rank()];
            long reach = 0;
            for (int i = 0; i < shape.rank(); i++) {
                end[i] = shape.dims().get(i);
                long stride = shape.size() / Shape.of(java.util.Arrays.copyOfRange(shape.toArray(), 0, i + 1)).size();
                reach += (i == dim ? width - 1 : shape.dims().get(i) - 1) * stride;
            }
            if (!DigitOffsetSlice.aligned(l, step * rowStride, first * rowStride, reach)) {
                notAligned[0]++;
                return;
            }
            aligned[0]++;
            IndexForm form = IndexForm.of(l);
            Layout body = null;
            for (long b = first; b + width <= d; b += step) {
                begin[dim] = b;
                end[dim] = b + width;
                long[][] pairs = new long[shape.rank()][];
                for (int i = 0; i < shape.rank(); i++) {
                    pairs[i] = new long[] {begin[i], end[i]};
                }
                Result<Layout> at = Slice.trySlice(l, shape, Region.of(pairs));
                assertTrue(at.isPresent() || body == null, l + " over " + shape + " at " + b + ": " + at);
                if (at.isEmpty()) {
                    return; // no slice at the first start either: the answer is None
                }
                Layout less = DigitOffsetSlice.lessDelta(at.get(), form, b * rowStride);
                if (body == null) {
                    body = less;
                } else {
                    assertTrue(Equivalence.equivalent(body, less), l + " over " + shape + " width " + width
                            + " step " + step + ": " + body + " at " + first + ", " + less + " at " + b);
                }
            }
        });
        assertTrue(aligned[0] > 100 && notAligned[0] > 20, aligned[0] + " aligned, " + notAligned[0] + " not");
    }

    @Test
    void alignmentNeedsADigitBoundaryDividingTheStepAndHoldingTheBox() {
        Layout l = Layout.parse("S[(4,4):(1,4)]");
        assertTrue(DigitOffsetSlice.aligned(l, 1, 5, 0)); // one element
        assertTrue(DigitOffsetSlice.aligned(l, 4, 4, 3)); // whole inner digits: [4v, 4v + 4)
        // [2v, 2v + 2): 4 does not divide the step 2, but the inner iter (4, 4) splits into (2, 8), (2, 4): boundary 2
        assertTrue(DigitOffsetSlice.aligned(l, 2, 2, 1));
        assertTrue(DigitOffsetSlice.aligned(Layout.parse("S[(64,64):(1,64)]"), 2, 0, 1));
        assertFalse(DigitOffsetSlice.aligned(l, 1, 0, 1)); // [v, v + 2) crosses the boundary 4 at v = 3
        assertFalse(DigitOffsetSlice.aligned(l, 2, 1, 2)); // [2v + 1, 2v + 4) crosses it at every v
        assertEquals(Layout.parse("S[2:4]"), DigitOffsetSlice.lessDelta(Layout.parse("S[2:4] + 9"), IndexForm.of(l), 6));
    }
}
