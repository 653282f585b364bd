package org.axe4j.bench.jvm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.FloatBuffer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The parts of {@code make bench-jvm} that are not timing: the A/B order of the rounds, the statistics of their
 * ratios, and the allclose check every workload passes before it is timed.
 */
class AbRoundsAndCompareTest {
    @Test
    void roundsAlternateWhichSideGoesFirstAndCountWholeCalls() throws Exception {
        List<String> order = new ArrayList<>();
        AbRounds ab = AbRounds.measure(() -> order.add("a"), () -> order.add("b"), 4, 0, 3);
        // a zero-length round still makes minCalls calls: a a a b b b, then b b b a a a, ...
        assertEquals(List.of("a", "a", "a", "b", "b", "b", "b", "b", "b", "a", "a", "a",
                "a", "a", "a", "b", "b", "b", "b", "b", "b", "a", "a", "a"), order);
        assertEquals(4, ab.ratesA().length);
        assertTrue(ab.ratesA()[0] > 0 && ab.ratesB()[3] > 0);
    }

    @Test
    void ratiosAreRoundByRoundWithMedianAndSpread() {
        AbRounds ab = new AbRounds(new double[] {10, 30, 20, 40}, new double[] {10, 10, 10, 10});
        assertArrayEquals(new double[] {1, 3, 2, 4}, ab.ratios());
        assertEquals(2.5, AbRounds.median(ab.ratios()));
        assertEquals(2.0, AbRounds.median(new double[] {3, 1, 2}));
        assertEquals(1.0, AbRounds.min(ab.ratios()));
        assertEquals(4.0, AbRounds.max(ab.ratios()));
    }

    @Test
    void compareFollowsAllcloseAndNamesTheFirstElementOutside() {
        FloatBuffer want = FloatBuffer.wrap(new float[] {1f, -2f, 100f});
        // |got - want| <= atol + rtol |want|: 100.5 is 0.5 off, inside 0.01 + 0.01 * 100 = 1.01
        double worst = Compare.worst(FloatBuffer.wrap(new float[] {1f, -2f, 100.5f}), want, 0.01, 0.01, "w");
        assertEquals(0.5 / 1.01, worst, 1e-6);
        IllegalStateException e = assertThrows(IllegalStateException.class, () ->
                Compare.worst(FloatBuffer.wrap(new float[] {1f, -2.1f, 100f}), want, 0.01, 0.01, "softmax: x"));
        assertTrue(e.getMessage().startsWith("softmax: x: element 1 is -2.0999"), e.getMessage());
        assertThrows(IllegalStateException.class, () ->
                Compare.worst(FloatBuffer.wrap(new float[] {1f, Float.NaN, 100f}), want, 0.01, 0.01, "nan"));
        e = assertThrows(IllegalStateException.class, () ->
                Compare.worst(FloatBuffer.wrap(new float[] {1f}), want, 0.01, 0.01, "short"));
        assertTrue(e.getMessage().contains("1 elements, expected 3"), e.getMessage());
    }
}
