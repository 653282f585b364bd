package org.axe4j.passes.transform;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicInteger;
import org.axe4j.layout.Canonicalize;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Oracle;
import org.axe4j.layout.Property;
import org.axe4j.layout.RandomLayouts;
import org.axe4j.layout.Shape;
import org.junit.jupiter.api.Test;

/** The pass's canonical form (canonical, grouped by the buffer shape) keeps the map and is a fixed point. */
class CanonicalizeLayoutsTest {
    @Test
    void canonicalFormForAShapeKeepsTheMapByEnumerationAndIsIdempotent() {
        AtomicInteger grouped = new AtomicInteger();
        Property.forAll("canonicalFor", Math.max(1, Property.CASES / 20), r -> {
            Layout l = RandomLayouts.layout(r);
            Shape shape = RandomLayouts.shapeOf(r, l.size(), 3);
            Long[] dims = shape.dims().toArray(new Long[0]);
            Layout once = CanonicalizeLayouts.canonicalFor(l, dims);
            assertTrue(Oracle.sameMap(l, once), () -> l + " for " + shape + " became " + once);
            assertEquals(once, CanonicalizeLayouts.canonicalFor(once, dims), () -> "not idempotent on " + l);
            assertEquals(Canonicalize.canonicalize(l), Canonicalize.canonicalize(once));
            if (!once.equals(Canonicalize.canonicalize(l))) {
                grouped.incrementAndGet();
            }
        });
        assertTrue(grouped.get() > 0, "no case exercised the grouping by shape");
    }
}
