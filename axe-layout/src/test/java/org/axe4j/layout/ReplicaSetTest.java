package org.axe4j.layout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** {@link ReplicaSet} (count, membership, lazy ascending enumeration) against the enumerated replica points. */
class ReplicaSetTest {
    /** Up to 4 replica iters, often on one axis, with overlapping, gapped, zero and negative strides. */
    static List<Iter> replicas(Random r) {
        List<Iter> out = new ArrayList<>();
        int n = r.nextInt(5);
        for (int i = 0; i < n; i++) {
            long e = 1 + r.nextInt(r.nextBoolean() ? 4 : 24);
            long s = switch (r.nextInt(5)) {
                case 0 -> 0;
                case 1 -> -(1 + r.nextInt(9));
                case 2 -> 1L << r.nextInt(6);
                default -> 1 + r.nextInt(30);
            };
            out.add(new Iter(e, s, r.nextInt(3) == 0 ? RandomLayouts.axis(r) : Axis.M));
        }
        return out;
    }

    private static List<Point> all(Iterator<Point> it) {
        List<Point> out = new ArrayList<>();
        it.forEachRemaining(out::add);
        return out;
    }

    @Test
    void enumerationIsTheSortedDistinctReplicaPoints() {
        Property.forAll("replicas() == oracle", r -> {
            Layout l = new Layout(List.of(), replicas(r), new TreeMap<>());
            List<Point> expected = Oracle.replicaPoints(l);
            ReplicaSet rs = l.replicas();
            assertEquals(expected.size(), rs.count(), l.toString());
            assertEquals(expected, all(rs.iterator()), l.toString());
            assertEquals(expected, l.replicaSet(), l.toString());
        });
    }

    @Test
    void iterationFromAnIndexIsTheSuffix() {
        Property.forAll("iterator(start) == suffix", r -> {
            Layout l = new Layout(List.of(), replicas(r), new TreeMap<>());
            List<Point> expected = Oracle.replicaPoints(l);
            int start = r.nextInt(expected.size() + 2);
            List<Point> suffix = start >= expected.size() ? List.of() : expected.subList(start, expected.size());
            assertEquals(suffix, all(l.replicas().iterator(start)), l + " from " + start);
        });
    }

    @Test
    void membershipMatchesTheEnumeration() {
        Property.forAll("contains == oracle", r -> {
            Layout l = new Layout(List.of(), replicas(r), new TreeMap<>());
            List<Point> expected = Oracle.replicaPoints(l);
            ReplicaSet rs = l.replicas();
            for (Point p : expected) {
                assertTrue(rs.contains(p), l + " holds " + p);
            }
            Point probe = expected.get(r.nextInt(expected.size())).plus(RandomLayouts.axis(r), r.nextInt(7) - 3);
            assertEquals(expected.contains(probe), rs.contains(probe), l + " at " + probe);
        });
    }

    @Test
    void overlappingProgressionsAreCountedWithoutEnumeratingTheirCombinations() {
        // 4096 * 4096 combinations, 8191 distinct values: one run.
        Layout dense = Layout.parse("S[2:1] + R[(4096,4096):(1,1)]");
        assertEquals(8191, dense.replicas().count());
        assertEquals(8191, dense.pointCount(1));
        // Two axes, 2^24 combinations and as many points: counted, never enumerated.
        Layout wide = Layout.parse("S[8:1] + R[(4096,4096):(1@a,1@b)]");
        assertEquals(1L << 24, wide.replicas().count());
        assertTrue(wide.replicas().contains(Point.of("a", 4095, "b", 17)));
        assertFalse(wide.replicas().contains(Point.of("a", 4096)));
        // A page from deep inside is read without walking to it.
        Iterator<Point> page = wide.replicas().iterator((1L << 24) - 2);
        assertEquals(Point.of("a", 4095, "b", 4094), page.next());
        assertEquals(Point.of("a", 4095, "b", 4095), page.next());
        assertFalse(page.hasNext());
    }

    @Test
    void pointsStreamsApplysOrder() {
        Property.forAll("points(x) == apply(x)", r -> {
            Layout l = new Layout(RandomLayouts.shard(r, 3), replicas(r), RandomLayouts.offset(r));
            long x = r.nextInt((int) l.size());
            assertEquals(l.apply(x), all(l.points(x)), l + " at " + x);
            assertEquals(l.apply(x).size(), l.pointCount(x), l + " at " + x);
        });
    }

    @Test
    void preimagesFixTheReplicaOnAxesTheShardDoesNotMove() {
        // The shard moves m only; a and b must come from the replica alone, so one replica is searched.
        Layout l = Layout.parse("S[8:1] + R[(4096,4096):(1@a,1@b)]");
        assertEquals(List.of(3L), l.preimages(Point.of("m", 3, "a", 7, "b", 4095)));
        assertEquals(List.of(), l.preimages(Point.of("m", 3, "a", 4096)));
        assertEquals(List.of(), l.preimages(Point.of("m", 3, "c", 1)));
        assertEquals(java.util.OptionalLong.of(3), l.inverse(Point.of("m", 3)));
    }

    @Test
    void theBackwardMapSearchesOnlyItersThatCount() {
        // 200,000 extent-1 iters once made the digit search recurse 200,000 deep.
        int n = 200_000;
        Layout l = Layout.parse("S[(" + "1,".repeat(n - 1) + "8):(" + "3,".repeat(n - 1) + "1)] + R[2:4@warpid]");
        assertEquals(List.of(3L), l.preimages(Point.of("m", 3, "warpid", 4)));
        assertEquals(java.util.OptionalLong.of(5), l.inverse(Point.of("m", 5)));
    }

    @Test
    void pointsBeyondSixtyFourBitsHaveNoPreimage() {
        Layout l = Layout.parse("S[8:1] - 5");
        assertEquals(List.of(), l.preimages(Point.of("m", Long.MAX_VALUE)));
        assertEquals(List.of(), l.preimages(Point.of("m", Long.MIN_VALUE)));
        Layout r = Layout.parse("S[8:1] + R[2:-3]");
        assertEquals(List.of(), r.preimages(Point.of("m", Long.MAX_VALUE)));
        assertEquals(List.of(0L, 3L), r.preimages(Point.of("m", 0)));
    }

    @Test
    void outsideABudgetTheEnumerationLimitStillHolds() {
        Layout huge = Layout.parse("S[2:1] + R[16777217:1@laneid]");
        AxeException e = assertThrows(AxeException.class, () -> huge.apply(0));
        assertEquals(AxeException.Kind.INVALID, e.kind());
        assertTrue(e.getMessage().contains("16777217 points, more than the enumeration limit"), e.getMessage());
        assertEquals(16777217, huge.pointCount(0));
    }
}
