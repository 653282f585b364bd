package org.axe4j.layout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class PointAndAxisTest {
    @Test
    void pointsDropZerosAndAddComponentwise() {
        Point p = Point.of("laneid", 3, "m", 0, "warpid", -2);
        assertEquals("{laneid:3, warpid:-2}", p.toString());
        assertEquals(Point.of("laneid", 4, "warpid", -2), p.plus(Point.of("laneid", 1)));
        assertEquals(Point.ZERO, p.minus(p));
        assertEquals(0, p.get("reg"));
    }

    @Test
    void pointOrderIsATotalOrderConsistentWithEquals() {
        Property.forAll("compareTo is antisymmetric, transitive, consistent with equals", 2_000, r -> {
            List<Point> ps = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                ps.add(Point.of(RandomLayouts.axis(r), r.nextInt(5) - 2, RandomLayouts.axis(r), r.nextInt(5) - 2));
            }
            Point a = ps.get(0);
            Point b = ps.get(1);
            Point c = ps.get(2);
            assertEquals(Integer.signum(a.compareTo(b)), -Integer.signum(b.compareTo(a)));
            assertEquals(a.equals(b), a.compareTo(b) == 0);
            if (a.compareTo(b) <= 0 && b.compareTo(c) <= 0) {
                assertTrue(a.compareTo(c) <= 0);
            }
        });
    }

    @Test
    void pointsOrderAsVectors() {
        assertTrue(Point.of("m", -1).compareTo(Point.ZERO) < 0);
        assertTrue(Point.ZERO.compareTo(Point.of("m", 1)) < 0);
        assertTrue(Point.of("laneid", 1).compareTo(Point.of("m", 5)) > 0);
    }

    @Test
    void registryKnowsHardwareAxes() {
        assertEquals(AxisKind.THREAD, Axis.of("laneid").kind());
        assertEquals(Optional.of(AxisScope.WARP), Axis.of("laneid").scope());
        assertEquals(AxisKind.DEVICE, Axis.of("gpuid").kind());
        assertEquals(AxisKind.MEMORY, Axis.M.kind());
        assertEquals(AxisKind.UNKNOWN, Axis.of("my_axis").kind());
        assertTrue(AxisScope.WARP.isInside(AxisScope.CTA));
        AxeException e = assertThrows(AxeException.class, () -> Point.of("laneid"));
        assertTrue(e.getMessage().contains("axis/value pairs"));
    }
}
