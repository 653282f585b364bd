package org.axe4j.passes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Iter;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Point;
import org.axe4j.layout.Property;
import org.axe4j.layout.RandomLayouts;
import org.axe4j.tvm.Axe4jGlobals;
import org.axe4j.tvm.Tvm;
import org.axe4j.tvm.TvmObject;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** axe4j.layout.span (TIRx's meaning) against enumeration, and against TIRx where every stride is non-negative. */
class TirxSpanTest {
    @BeforeAll
    static void install() {
        Axe4jGlobals.install();
    }

    @Test
    void spanIsOnePastTheLargestCoordinateAndTirxsWhereStridesAreNonNegative() {
        int[] compared = {0};
        Property.forAll("TIRx span", 300, r -> {
            Layout l = RandomLayouts.layout(r);
            if (l.size() > 256 || l.replicaCount() > 16) {
                return;
            }
            try (TvmObject t = TirxLayouts.toTvm(l)) {
                long memory = 1;
                boolean memoryNonNegative = true;
                for (Axis a : l.axes()) {
                    long max = Long.MIN_VALUE;
                    for (long x = 0; x < l.size(); x++) {
                        for (Point p : l.apply(x)) {
                            max = Math.max(max, p.get(a));
                        }
                    }
                    Object ours = Tvm.call("axe4j.layout.span", t, a.name());
                    assertEquals(max + 1, ours, l + " on " + a);
                    boolean nonNegative = nonNegative(l, a);
                    TirxCalls.Answer<Long> theirs = TirxCalls.span(t, a);
                    if (nonNegative && theirs.answered()) {
                        assertEquals(theirs.value(), ours, l + " on " + a + " (TIRx)");
                        compared[0]++;
                    }
                    if (a.isMemory()) {
                        memory += max;
                        memoryNonNegative &= nonNegative;
                    }
                }
                if (!l.axes().contains(Axis.M)) {
                    memory += l.offsetOn(Axis.M);
                }
                assertEquals(memory, Tvm.call("axe4j.layout.span", t, null), l.toString());
            }
        });
        assertTrue(compared[0] > 100, compared[0] + " spans compared with TIRx");
    }

    @Test
    void theMemoryAxesAddAsTirxAddsThemAndImageSpanKeepsAxe4jsMeaning() {
        // TIRx: S[(4,4):(2@TCol,1)] has span 10 = 1 + 3*2 + 3*1 (TCol and m are both memory axes).
        try (TvmObject t = TirxLayouts.toTvm(Layout.parse("S[(4,4):(2@TCol,1)] + 3@laneid"))) {
            assertEquals(10L, Tvm.call("axe4j.layout.span", t, null));
            assertEquals(TirxLayouts.integer(Tvm.call("tirx.LayoutGetSpan", t, null), null, "span"),
                    Tvm.call("axe4j.layout.span", t, null));
            assertEquals(4L, Tvm.call("axe4j.layout.span", t, "laneid"));
            assertEquals(1L, Tvm.call("axe4j.layout.image_span", t, "laneid"));
        }
        // A negative stride: one past the largest coordinate is 1 + 0; TIRx's signed sum gives -5.
        assertEquals(1L, Tvm.call("axe4j.layout.span", "S[4:-2]", "m"));
        assertEquals(7L, Tvm.call("axe4j.layout.image_span", "S[4:-2]", "m"));
    }

    private static boolean nonNegative(Layout l, Axis a) {
        for (List<Iter> part : List.of(l.shard(), l.replica())) {
            for (Iter it : part) {
                if (it.axis().equals(a) && it.stride() < 0) {
                    return false;
                }
            }
        }
        return true;
    }
}
