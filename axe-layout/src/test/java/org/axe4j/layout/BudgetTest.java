package org.axe4j.layout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.axe4j.layout.picture.TileModel;
import org.junit.jupiter.api.Test;

/** {@link Budget}: caps refused up front with the figure and the cap, deadlines, scoping per thread. */
class BudgetTest {
    private static final Budget SMALL = Budget.DEFAULT.with("max_points", 1000);

    private static AxeException tooLarge(Runnable body) {
        AxeException e = assertThrows(AxeException.class, () -> SMALL.run(() -> {
            body.run();
            return null;
        }));
        assertEquals(AxeException.Kind.TOO_LARGE, e.kind(), e.getMessage());
        assertTrue(e.getMessage().startsWith("too large: "), e.getMessage());
        return e;
    }

    @Test
    void applyOverThePointCapIsRefusedNamingTheFigureAndTheCap() {
        Layout l = Layout.parse("S[2:1] + R[16777216:1@laneid]");
        AxeException e = tooLarge(() -> l.apply(1));
        assertEquals("too large: L(1) of S[2:1] + R[16777216:1@laneid] has 16777216 points, more than the cap of"
                + " 1000 points", e.getMessage());
        // At the cap it answers; the count needs no enumeration and no cap.
        Layout atCap = Layout.parse("S[2:1] + R[1000:1@laneid]");
        assertEquals(1000, SMALL.run(() -> atCap.apply(1)).size());
        assertEquals(16777216L, SMALL.run(() -> l.pointCount(1)));
    }

    @Test
    void everyEnumerationOfTheAlgebraIsCapped() {
        Layout l = Layout.parse("S[8:1] + R[(40,40):(1@a,1@b)]");
        tooLarge(l::replicaSet);
        tooLarge(l::image);
        tooLarge(() -> TileModel.of(l, Shape.of(8)));
        // The backward map searches only the replicas it must: here none are free, so it answers.
        assertEquals(List.of(2L), SMALL.run(() -> l.preimages(Point.of("m", 2, "a", 39, "b", 1))));
        Layout free = Layout.parse("S[8:1] + R[(40,40):(1,40)]");
        tooLarge(() -> free.preimages(Point.of("m", 2)));
    }

    @Test
    void theDeadlineStopsARequestThatKeepsTicking() {
        Budget oneMilli = Budget.DEFAULT.with("max_millis", 1);
        AxeException e = assertThrows(AxeException.class, () -> oneMilli.run(() -> {
            while (true) {
                Budget.tick();
            }
        }));
        assertEquals(AxeException.Kind.TOO_LARGE, e.kind());
        assertEquals("too large: the request ran longer than the time cap of 1 ms", e.getMessage());
    }

    @Test
    void outsideARequestNothingIsCappedAndBudgetsNest() {
        assertEquals(Optional.empty(), Budget.active());
        Budget.requirePoints(Long.MAX_VALUE, () -> "anything");
        Budget outer = Budget.DEFAULT.with("max_points", 10);
        outer.run(() -> {
            assertEquals(Optional.of(outer), Budget.active());
            SMALL.run(() -> {
                Budget.requirePoints(1000, () -> "inner");
                return null;
            });
            assertThrows(AxeException.class, () -> Budget.requirePoints(11, () -> "outer"));
            return null;
        });
        assertEquals(Optional.empty(), Budget.active());
    }

    @Test
    void budgetsArePerThread() throws Exception {
        List<Optional<Budget>> seen = new java.util.ArrayList<>();
        Thread other = new Thread(() -> seen.add(Budget.active()));
        SMALL.run(() -> {
            other.start();
            return null;
        });
        other.join();
        assertEquals(List.of(Optional.empty()), seen);
    }

    @Test
    void capsComeFromTheEnvironmentInPlainDigits() {
        Budget b = Budget.fromEnvironment(Map.of("AXE4J_MAX_POINTS", "12", "AXE4J_MAX_MILLIS", "34"));
        assertEquals(new Budget(12, Budget.DEFAULT.maxAnswerBytes(), Budget.DEFAULT.maxRequestBytes(), 34), b);
        for (String bad : List.of("0", "-1", "1e3", "\u0661\u0662", "99999999999999999999", " 12")) {
            AxeException e = assertThrows(AxeException.class,
                    () -> Budget.fromEnvironment(Map.of("AXE4J_MAX_POINTS", bad)), bad);
            assertEquals(AxeException.Kind.INVALID, e.kind());
        }
        assertEquals("unknown budget cap 'max_bytes' (known: max_points, max_answer_bytes, max_request_bytes, "
                + "max_millis)", assertThrows(AxeException.class, () -> Budget.DEFAULT.with("max_bytes", 1)).getMessage());
    }
}
