package org.axe4j.layout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class EquivalenceTest {
    private static boolean equivalent(String a, String b) {
        return Equivalence.equivalent(Layout.parse(a), Layout.parse(b));
    }

    private static boolean canonicalFormsEqual(Layout a, Layout b) {
        return Canonicalize.canonicalize(a).equals(Canonicalize.canonicalize(b));
    }

    /** Tallies of generated pairs, printed and checked so that every kind of case is exercised. */
    private static final class Tally {
        final AtomicInteger same = new AtomicInteger();
        final AtomicInteger different = new AtomicInteger();
        /** Same map although the canonical forms differ: decided by comparing replica sets. */
        final AtomicInteger sameBeyondCanonical = new AtomicInteger();
        /** Outside the gap condition, with equal canonical shards and offsets: replica sets compared. */
        final AtomicInteger outsideGapSetCompared = new AtomicInteger();

        void count(Layout a, Layout b, boolean sameMap) {
            (sameMap ? same : different).incrementAndGet();
            Layout ca = Canonicalize.canonicalize(a);
            Layout cb = Canonicalize.canonicalize(b);
            if (sameMap && !ca.equals(cb)) {
                sameBeyondCanonical.incrementAndGet();
            }
            if (!ca.equals(cb) && ca.size() == cb.size() && ca.shard().equals(cb.shard())
                    && ca.offset().equals(cb.offset())
                    && !(Equivalence.satisfiesGapCondition(a) && Equivalence.satisfiesGapCondition(b))) {
                outsideGapSetCompared.incrementAndGet();
            }
        }

        @Override
        public String toString() {
            return "same=" + same + " different=" + different + " sameBeyondCanonical=" + sameBeyondCanonical
                    + " outsideGapSetCompared=" + outsideGapSetCompared;
        }
    }

    private static void check(Tally tally, Layout a, Layout b) {
        boolean expected = Oracle.sameMap(a, b);
        assertEquals(expected, Equivalence.equivalent(a, b), a + "  vs  " + b);
        assertEquals(expected, Equivalence.equivalent(b, a), b + "  vs  " + a);
        if (canonicalFormsEqual(a, b)) {
            assertTrue(expected, "equal canonical forms but different maps: " + a + "  vs  " + b);
        }
        tally.count(a, b, expected);
    }

    // ---- worked examples ----------------------------------------------------------------------

    @Test
    void workedExamples() {
        assertTrue(equivalent("S[(2,4):(4,1)]", "S[8:1]"));
        assertTrue(equivalent("S[4:1] + R[2:-3@warpid]", "S[4:1] + R[2:3@warpid] - 3@warpid"));
        // {0,1}+{0,1} = {0,1,2}.
        assertTrue(equivalent("S[2:4] + R[(2,2):(1,1)]", "S[2:4] + R[3:1]"));
        assertFalse(equivalent("S[2:4] + R[(2,2):(1,1)]", "S[2:4] + R[(2,2):(1,2)]"));
        // Stride-0 shard iters: same map on any axis.
        assertTrue(equivalent("S[(2,2,3):(0@warpid,0@reg,1@laneid)]", "S[(4,3):(0,1@laneid)]"));
        // Sizes differ.
        assertFalse(equivalent("S[8:1]", "S[4:1]"));
        // Same image, different order of elements: not the same map.
        assertFalse(equivalent("S[(2,4):(4,1)]", "S[(2,4):(1,2)]"));
        // Offset on another axis.
        assertFalse(equivalent("S[8:1] + 1@laneid", "S[8:1] + 1@warpid"));
    }

    @Test
    void overlappingReplicaSetsAreComparedExactly() {
        // Outside GC, different canonical lists can have the same set:
        //   {0,2,4,6,8,10} + {0,3} = {0,2,4} + {0,3,6,9} = {0,2,3,...,11,13}.
        assertEquals(setOf(new long[] {6, 2, 2, 3}), setOf(new long[] {3, 2, 4, 3}));
        assertNotEquals(Canonicalize.canonicalize(Layout.parse("S[2:1] + R[(6,2):(2,3)]")),
                Canonicalize.canonicalize(Layout.parse("S[2:1] + R[(3,4):(2,3)]")));
        assertTrue(equivalent("S[2:1] + R[(6,2):(2,3)]", "S[2:1] + R[(3,4):(2,3)]"));
        //   {0,2,...,12} + {0,3} = {0,2,4,6} + {0,3,6,9} = {0,2,4} + {0,3,6} + {0,5} = {0,2,3,...,13,15}.
        assertEquals(setOf(new long[] {7, 2, 2, 3}), setOf(new long[] {3, 2, 3, 3, 2, 5}));
        assertEquals(setOf(new long[] {7, 2, 2, 3}), setOf(new long[] {4, 2, 4, 3}));
        assertTrue(equivalent("S[1:1] + R[(7,2):(2,3)] + 1", "S[1:1] + R[(3,3,2):(-2,3,5)] + 5"));
        assertTrue(equivalent("S[1:1] + R[(4,4):(2,3@m)]", "S[1:1] + R[(2,3,3):(5,3,2)]"));
        // Same maximum 13, smallest stride 2 and gcd 1, yet 3 is in the first set only ({0,2,4,6,8}+{0,5}).
        assertEquals(setOf(new long[] {6, 2, 2, 3}).last(), setOf(new long[] {5, 2, 2, 5}).last());
        assertFalse(equivalent("S[1:1] + R[(6,2):(2,3)]", "S[1:1] + R[(5,2):(2,5)]"));
    }

    private static TreeSet<Long> setOf(long[] extentStridePairs) {
        TreeSet<Long> set = new TreeSet<>(List.of(0L));
        for (int i = 0; i < extentStridePairs.length; i += 2) {
            TreeSet<Long> next = new TreeSet<>();
            for (long v : set) {
                for (long k = 0; k < extentStridePairs[i]; k++) {
                    next.add(v + k * extentStridePairs[i + 1]);
                }
            }
            set = next;
        }
        return set;
    }

    @Test
    void refusesOnlyWhenTheReplicaSetIsTooLargeToCompare() {
        // Outside GC ((3,2),(2,3) overlap), tops differ, and each set has about 3 * 2^21 runs.
        long big = 1L << 20;
        long top = 100 * (1L << 21) + 50;
        Layout a = Layout.parse("S[1:1] + R[(3,2," + (big + 1) + ",2):(2,3,100," + (top - 100) + ")]");
        Layout b = Layout.parse("S[1:1] + R[(3,2," + big + ",2):(2,3,100," + top + ")]");
        AxeException e = assertThrows(AxeException.class, () -> Equivalence.equivalent(a, b));
        assertTrue(e.getMessage().contains("cannot be decided within limits"), e.getMessage());
        // Too many runs again, but the sets differ low down (3 is in the first only): the largest window
        // that fits shows it.
        Layout f = Layout.parse("S[1:1] + R[(3,2," + 2 * big + "):(2,3,100)]");
        Layout g = Layout.parse("S[1:1] + R[(2,2," + big + ",2):(2,4,100," + (100 * big + 1) + ")]");
        assertFalse(Equivalence.equivalent(f, g));
        // The same sets up to a huge separated top iter are peeled and decided.
        Layout c = Layout.parse("S[1:1] + R[(3,2," + big + "):(2,3,100)]");
        Layout d = Layout.parse("S[1:1] + R[(2,2," + big + "):(2,5,100)]");
        assertFalse(Equivalence.equivalent(c, d));
        // {0,2,...,10} + {0,3} = {0,2,4} + {0,3,6,9}, under a common separated top 100*[0, 2^20).
        Layout e1 = Layout.parse("S[1:1] + R[(6,2," + big + "):(2,3,100)]");
        Layout e2 = Layout.parse("S[1:1] + R[(" + big + ",3,4):(100,2,3)]");
        assertNotEquals(Canonicalize.canonicalize(e1), Canonicalize.canonicalize(e2));
        assertTrue(Equivalence.equivalent(e1, e2));
    }

    @Test
    void gapConditionListsAreDeterminedByTheirSet() {
        // Theorem A.12, over all lists of 1..3 iters with extents 2..4 and strides 1..9 on one axis: two
        // canonical lists that both satisfy GC and have the same set of sums are equal.
        List<Iter> atoms = new ArrayList<>();
        for (long f = 2; f <= 4; f++) {
            for (long t = 1; t <= 9; t++) {
                atoms.add(Iter.of(f, t));
            }
        }
        Map<TreeSet<Long>, Layout> bySet = new java.util.HashMap<>();
        int gcLists = 0;
        int shared = 0;
        for (int i = 0; i < atoms.size(); i++) {
            for (int j = i; j <= atoms.size(); j++) {
                for (int k = j; k <= atoms.size(); k++) {
                    List<Iter> rep = new ArrayList<>(List.of(atoms.get(i)));
                    if (j < atoms.size()) {
                        rep.add(atoms.get(j));
                    }
                    if (k < atoms.size() && j < atoms.size()) {
                        rep.add(atoms.get(k));
                    }
                    Layout c = Canonicalize.canonicalize(Layout.of(List.of(), rep, Map.of()));
                    if (!Equivalence.satisfiesGapCondition(c)) {
                        continue;
                    }
                    gcLists++;
                    long[] pairs = new long[2 * c.replica().size()];
                    for (int q = 0; q < c.replica().size(); q++) {
                        pairs[2 * q] = c.replica().get(q).extent();
                        pairs[2 * q + 1] = c.replica().get(q).stride();
                    }
                    Layout seen = bySet.putIfAbsent(setOf(pairs), c);
                    if (seen != null) {
                        shared++;
                        assertEquals(seen, c, "two GC lists with one set, from " + rep);
                    }
                }
            }
        }
        assertTrue(gcLists > 1000 && shared > 1000, gcLists + " GC lists, " + shared + " repeated sets");
    }

    // ---- properties ---------------------------------------------------------------------------

    @Test
    void equivalentUnderMapPreservingRewrites() {
        Tally tally = new Tally();
        Property.forAll("rewrites keep the map and equivalent() says so", r -> {
            Layout a = r.nextBoolean() ? RandomLayouts.layout(r) : MapPreservingRewrites.mergeRich(r);
            Layout b = MapPreservingRewrites.rewrite(r, a, 1 + r.nextInt(8));
            assertTrue(Oracle.sameMap(a, b), "the rewrite changed the map: " + a + "  ->  " + b);
            check(tally, a, b);
        });
        System.out.println("rewrites: " + tally);
        assertEquals(0, tally.different.get());
    }

    @Test
    void equivalentMatchesOracleOnPerturbations() {
        Tally tally = new Tally();
        Property.forAll("equivalent == oracle on perturbed pairs", r -> {
            Layout a = r.nextBoolean() ? RandomLayouts.layout(r) : MapPreservingRewrites.mergeRich(r);
            Layout b = MapPreservingRewrites.perturb(r, MapPreservingRewrites.rewrite(r, a, r.nextInt(4)));
            check(tally, a, b);
        });
        System.out.println("perturbations: " + tally);
        assertTrue(tally.same.get() > 0 && tally.different.get() > Property.CASES / 4, tally.toString());
    }

    @Test
    void equivalentMatchesOracleOnIndependentPairs() {
        Tally tally = new Tally();
        Property.forAll("equivalent == oracle on independent pairs", r -> {
            Layout a = RandomLayouts.layout(r);
            Layout b = RandomLayouts.layout(r);
            check(tally, a, b);
            // Independent pairs of one small size: random strides in -2..2 over the same extents.
            Layout c = smallOfExtents(r, List.of(2L, 3L));
            Layout d = smallOfExtents(r, List.of(2L, 3L));
            check(tally, c, d);
        });
        System.out.println("independent: " + tally);
        assertTrue(tally.same.get() > Property.CASES / 200 && tally.different.get() > 0, tally.toString());
    }

    private static Layout smallOfExtents(Random r, List<Long> extents) {
        List<Iter> d = new ArrayList<>();
        for (long e : extents) {
            d.add(new Iter(e, r.nextInt(5) - 2, r.nextInt(4) == 0 ? Axis.of("laneid") : Axis.M));
        }
        if (r.nextBoolean()) {
            d.add(r.nextInt(d.size() + 1), new Iter(1, r.nextInt(3), Axis.M));
        }
        List<Iter> rep = new ArrayList<>();
        if (r.nextInt(3) == 0) {
            rep.add(new Iter(1 + r.nextInt(3), r.nextInt(5) - 2, Axis.M));
        }
        TreeMap<Axis, Long> off = new TreeMap<>();
        off.put(Axis.M, (long) r.nextInt(3) - 1);
        return new Layout(d, rep, off);
    }

    @Test
    void equivalentMatchesOracleOutsideTheGapCondition() {
        Tally tally = new Tally();
        AtomicInteger outsideGap = new AtomicInteger();
        Property.forAll("equivalent == oracle on overlapping replica sets", r -> {
            List<Iter> shard = RandomLayouts.shard(r, 2);
            TreeMap<Axis, Long> offset = RandomLayouts.offset(r);
            Layout a = MapPreservingRewrites.overlappingReplicas(r, shard, offset);
            // b is a rewrite of a (same map by construction), or another replica list on the same shard whose
            // replica sets have the same bounding box, or even the same set (both found by search), so that
            // only the exact set comparison can tell them apart.
            Layout b = switch (r.nextInt(3)) {
                case 0 -> MapPreservingRewrites.rewrite(r, a, 1 + r.nextInt(6));
                case 1 -> MapPreservingRewrites.sameBoundingBox(r, a, false);
                default -> MapPreservingRewrites.sameBoundingBox(r, a, true);
            };
            b = MapPreservingRewrites.rewrite(r, b, r.nextInt(3));
            if (!MapPreservingRewrites.fitsOracle(a) || !MapPreservingRewrites.fitsOracle(b)) {
                return;
            }
            if (!Equivalence.satisfiesGapCondition(a) || !Equivalence.satisfiesGapCondition(b)) {
                outsideGap.incrementAndGet();
            }
            check(tally, a, b);
        });
        System.out.println("outside GC: " + tally + " pairsOutsideGap=" + outsideGap);
        assertTrue(outsideGap.get() > Property.CASES / 4, outsideGap + " pairs outside GC");
        assertTrue(tally.outsideGapSetCompared.get() > Property.CASES / 10, tally.toString());
        assertTrue(tally.sameBeyondCanonical.get() > 0, "no pair had the same map and different canonical forms: "
                + tally);
    }

    @Test
    void canonicalFormsDecideEquivalenceUnderTheGapCondition() {
        AtomicInteger equal = new AtomicInteger();
        AtomicInteger unequal = new AtomicInteger();
        AtomicInteger withReplicas = new AtomicInteger();
        Property.forAll("under GC: canonical forms equal iff maps equal (Theorem A.14)", r -> {
            Layout a = r.nextBoolean() ? RandomLayouts.layout(r) : MapPreservingRewrites.mergeRich(r);
            Layout b = switch (r.nextInt(3)) {
                case 0 -> MapPreservingRewrites.rewrite(r, a, 1 + r.nextInt(8));
                case 1 -> MapPreservingRewrites.perturb(r, MapPreservingRewrites.rewrite(r, a, r.nextInt(4)));
                default -> MapPreservingRewrites.rewrite(r, RandomLayouts.layout(r), r.nextInt(3));
            };
            if (!Equivalence.satisfiesGapCondition(a) || !Equivalence.satisfiesGapCondition(b)) {
                return;
            }
            boolean sameMap = Oracle.sameMap(a, b);
            assertEquals(sameMap, canonicalFormsEqual(a, b), a + "  vs  " + b);
            (sameMap ? equal : unequal).incrementAndGet();
            if (sameMap && !Canonicalize.canonicalize(a).replica().isEmpty()) {
                withReplicas.incrementAndGet();
            }
        });
        System.out.println("GC pairs: equal=" + equal + " unequal=" + unequal + " equalWithReplicas=" + withReplicas);
        assertTrue(equal.get() > Property.CASES / 5 && unequal.get() > Property.CASES / 5 && withReplicas.get() > 0,
                equal + " equal, " + unequal + " unequal, " + withReplicas + " with replicas");
    }

    @Test
    void gapConditionMeansOrderedDigitSums() {
        // GC <=> reading the replica digits of one axis with the largest stride most significant, the sum
        // t_1 d_1 + ... + t_n d_n strictly increases: checked by enumerating the digits in that order.
        AtomicInteger holds = new AtomicInteger();
        AtomicInteger fails = new AtomicInteger();
        Property.forAll("satisfiesGapCondition == ordered enumeration", r -> {
            Layout l = r.nextBoolean() ? RandomLayouts.layout(r)
                    : MapPreservingRewrites.overlappingReplicas(r, List.of(), new TreeMap<>());
            Layout c = Canonicalize.canonicalize(l);
            boolean ordered = true;
            Map<Axis, List<Iter>> byAxis = new TreeMap<>();
            for (Iter it : c.replica()) {
                byAxis.computeIfAbsent(it.axis(), x -> new ArrayList<>()).add(0, it); // largest stride first
            }
            for (List<Iter> iters : byAxis.values()) {
                Layout digits = Layout.of(iters, List.of(), Map.of());
                long prev = -1;
                for (TreeSet<Point> p : Oracle.table(digits)) {
                    long v = p.first().get(iters.get(0).axis());
                    ordered &= v > prev;
                    prev = v;
                }
            }
            assertEquals(ordered, Equivalence.satisfiesGapCondition(l), c.toString());
            (ordered ? holds : fails).incrementAndGet();
        });
        assertTrue(holds.get() > 0 && fails.get() > 0, holds + " hold, " + fails + " fail");
    }
}
