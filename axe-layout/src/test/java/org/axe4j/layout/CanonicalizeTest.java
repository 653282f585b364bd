package org.axe4j.layout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class CanonicalizeTest {
    private static Layout canon(String text) {
        return Canonicalize.canonicalize(Layout.parse(text));
    }

    // ---- worked examples ----------------------------------------------------------------------

    @Test
    void adjacentChainMergesIntoOneIter() {
        // (2,4),(4,1): 4 = 4*1, so D1 gives (2*4, 1).
        assertEquals(Layout.parse("S[8:1]"), canon("S[(2,4):(4,1)]"));
        // (2,24),(3,8),(4,2),(1,7): D0 drops (1,7); 8 = 4*2 then 24 = 12*2.
        assertEquals(Layout.parse("S[24:2]"), canon("S[(2,3,4,1):(24,8,2,7)]"));
    }

    @Test
    void negativeReplicaStrideMovesIntoTheOffset() {
        // {0,-3} = -3 + {0,3}.
        assertEquals(Layout.parse("S[4:1] + R[2:3@warpid] - 3@warpid"), canon("S[4:1] + R[2:-3@warpid]"));
        // {0,-2,-4} + 5 = 1 + {0,2,4}.
        assertEquals(Layout.parse("S[4:1] + R[3:2] + 1"), canon("S[4:1] + R[3:-2] + 5"));
        // {0,-2} + 2@laneid = {0, 2}@laneid: the offset becomes zero and is dropped.
        assertEquals(Layout.parse("S[4:1] + R[2:2@laneid]"), canon("S[4:1] + R[2:-2@laneid] + 2@laneid"));
    }

    @Test
    void progressionsMergeExactlyWhenTheirSumIsAProgression() {
        // {0,1} + {0,1} = {0,1,2}: equal strides, c = 1.
        assertEquals(Layout.parse("S[1:1] + R[3:1]"), canon("S[1:1] + R[(2,2):(1,1)]"));
        // {0,1} + {0,2} = [0,4) (paper's c = f1), then [0,4) + {0,2,4} = [0,8) (c = 2 < f1 = 4).
        assertEquals(Layout.parse("S[1:1] + R[8:1]"), canon("S[1:1] + R[(2,2,3):(1,2,2)]"));
        // {0,1,2} + {0,4}: 4 > 3 leaves a gap at 3; nothing merges.
        assertEquals(Layout.parse("S[1:1] + R[(3,2):(1,4)]"), canon("S[1:1] + R[(2,3):(4,1)]"));
        // {0,2,4} + {0,3}: 3 is no multiple of 2.
        assertEquals(Layout.parse("S[1:1] + R[(3,2):(2,3)]"), canon("S[1:1] + R[(2,3):(3,2)]"));
    }

    @Test
    void trivialItersAndZeroStridesDisappear() {
        assertEquals(Layout.parse("S[1:1]"), canon("S[(1,1):(5,7@laneid)] + R[(1,4):(3,0@warpid)]"));
        // Stride-0 shard iters lose their axis, then merge: 0 = 2*0.
        assertEquals(Layout.parse("S[(4,3):(0,1@laneid)]"), canon("S[(2,2,3):(0@warpid,0@reg,1@laneid)]"));
    }

    @Test
    void paperLayoutsKeepOrMergeAsExpected() {
        String tc = "S[(8,2,4,2):(4@laneid,1@warpid,1@laneid,1@reg)] + R[2:4@warpid] + 5@warpid";
        assertEquals(Layout.parse(tc), canon(tc)); // no neighbours on one axis: already canonical
        // (32,128),(128,1) on m: 128 = 128*1, so the local buffer is one run of 4096.
        assertEquals(Layout.parse("S[(2,4096):(1@gpuid,1)] + R[2:2@gpuid]"),
                canon("S[(2,32,128):(1@gpuid,128@m,1@m)] + R[2:2@gpuid]"));
        assertEquals(Layout.parse("S[(2,32,2,64):(1@gpuid,128,2@gpuid,1)]"), canon("S[(2,32,2,64):(1@gpuid,128,2@gpuid,1)]"));
        assertEquals(Layout.parse("S[(2,128,512):(512@F,1@P,1@F)]"), canon("S[(2,128,512):(512@F,1@P,1@F)]"));
    }

    @Test
    void replicasAreOrderedByAxisThenStrideThenExtent() {
        Layout c = canon("S[2:1] + R[(2,3,2,2):(9@warpid,5@laneid,4@warpid,7@laneid)]");
        assertEquals("S[2:1] + R[(3,2,2,2):(5@laneid,7@laneid,4@warpid,9@warpid)]", c.toString());
    }

    @Test
    void unrepresentableCanonicalFormIsReportedWithTheLayout() {
        // C1 would need offset -2^62 next to a reach of 2^62 on m: past the 64-bit bound of a layout.
        Layout l = Layout.parse("S[1:1] + R[2:-4611686018427387904]");
        AxeException e = org.junit.jupiter.api.Assertions.assertThrows(AxeException.class,
                () -> Canonicalize.canonicalize(l));
        assertTrue(e.getMessage().startsWith("canonicalize of " + l + ": "), e.getMessage());
        assertTrue(e.getMessage().contains("overflows 64 bits"), e.getMessage());
    }

    // ---- the C2 rule is exact: proved over all small cases ------------------------------------

    @Test
    void progressionMergeIsDefinedExactlyWhenTheSumSetIsAProgression() {
        int merged = 0;
        int refused = 0;
        for (long f1 = 2; f1 <= 7; f1++) {
            for (long f2 = 2; f2 <= 7; f2++) {
                for (long t1 = 1; t1 <= 12; t1++) {
                    for (long t2 = t1; t2 <= 40; t2++) {
                        Iter p = Iter.of(f1, t1);
                        Iter q = Iter.of(f2, t2);
                        TreeSet<Long> sum = new TreeSet<>();
                        for (long i = 0; i < f1; i++) {
                            for (long j = 0; j < f2; j++) {
                                sum.add(i * t1 + j * t2);
                            }
                        }
                        Optional<Iter> m = Canonicalize.mergeProgressions(p, q);
                        assertEquals(isProgressionFromZero(sum), m.isPresent(), p + " " + q + " " + sum);
                        if (m.isPresent()) {
                            merged++;
                            TreeSet<Long> one = new TreeSet<>();
                            for (long i = 0; i < m.get().extent(); i++) {
                                one.add(i * m.get().stride());
                            }
                            assertEquals(sum, one, p + " " + q + " -> " + m.get());
                        } else {
                            refused++;
                        }
                    }
                }
            }
        }
        assertTrue(merged > 1000 && refused > 1000, merged + " merged, " + refused + " refused");
    }

    private static boolean isProgressionFromZero(TreeSet<Long> set) {
        List<Long> xs = new ArrayList<>(set);
        long step = xs.get(1);
        for (int i = 0; i < xs.size(); i++) {
            if (xs.get(i) != i * step) {
                return false;
            }
        }
        return true;
    }

    // ---- a normalized shard is determined by its function (Theorem A.8 with DZ) --------------

    @Test
    void normalizedShardIsDeterminedByItsFunction() {
        // Every shard of up to 3 iters with extents 1..3, strides -2..3, axes {m, laneid}: layouts with the
        // same size and the same D(x) for all x must have the same canonical shard.
        List<Iter> atoms = new ArrayList<>();
        for (long e = 1; e <= 3; e++) {
            for (long s = -2; s <= 3; s++) {
                atoms.add(Iter.of(e, s, Axis.M));
                atoms.add(Iter.of(e, s, "laneid"));
            }
        }
        Map<List<TreeSet<Point>>, Layout> byFunction = new HashMap<>();
        List<List<Iter>> shards = new ArrayList<>(List.of(List.of()));
        for (int len = 1; len <= 3; len++) {
            List<List<Iter>> longer = new ArrayList<>();
            for (List<Iter> s : shards) {
                if (s.size() == len - 1) {
                    for (Iter a : atoms) {
                        List<Iter> t = new ArrayList<>(s);
                        t.add(a);
                        longer.add(t);
                    }
                }
            }
            shards.addAll(longer);
        }
        int collisions = 0;
        for (List<Iter> s : shards) {
            Layout l = Layout.of(s, List.of(), Map.of());
            List<TreeSet<Point>> table = Oracle.table(l);
            Layout c = Canonicalize.canonicalize(l);
            Layout seen = byFunction.putIfAbsent(table, c);
            if (seen != null) {
                collisions++;
                assertEquals(seen, c, "same function, different canonical shards, from " + l);
            }
        }
        assertTrue(collisions > 10_000, "only " + collisions + " layouts shared a function with an earlier one");
    }

    // ---- properties over random layouts --------------------------------------------------------

    @Test
    void canonicalFormInducesTheSameMap() {
        Property.forAll("canonicalize preserves the map", r -> {
            Layout l = RandomLayouts.layout(r);
            assertTrue(Oracle.sameMap(l, Canonicalize.canonicalize(l)), l.toString());
        });
    }

    @Test
    void canonicalFormInducesTheSameMapOnMergeRichLayouts() {
        AtomicInteger shrunk = new AtomicInteger();
        Property.forAll("canonicalize preserves the map (merge-rich)", r -> {
            Layout l = MapPreservingRewrites.mergeRich(r);
            Layout c = Canonicalize.canonicalize(l);
            assertTrue(Oracle.sameMap(l, c), l + " -> " + c);
            if (c.shard().size() + c.replica().size() < l.shard().size() + l.replica().size()) {
                shrunk.incrementAndGet();
            }
        });
        assertTrue(shrunk.get() > Property.CASES / 2, shrunk + " of " + Property.CASES + " lost iters");
    }

    @Test
    void canonicalizeIsIdempotent() {
        Property.forAll("canonicalize is idempotent", r -> {
            Layout l = r.nextBoolean() ? RandomLayouts.layout(r) : MapPreservingRewrites.mergeRich(r);
            Layout c = Canonicalize.canonicalize(l);
            assertEquals(c, Canonicalize.canonicalize(c), l.toString());
        });
    }

    @Test
    void canonicalFormLeavesNoRuleToApply() {
        Property.forAll("no rewrite rule applies to a canonical form", r -> {
            Layout l = r.nextBoolean() ? RandomLayouts.layout(r) : MapPreservingRewrites.mergeRich(r);
            Layout c = Canonicalize.canonicalize(l);
            List<Iter> d = c.shard();
            for (int k = 0; k < d.size(); k++) {
                Iter it = d.get(k);
                assertTrue(it.extent() > 1, "D0 applies to " + c);
                assertTrue(it.stride() != 0 || it.axis().equals(Axis.M), "DZ applies to " + c);
                if (k + 1 < d.size()) {
                    Iter next = d.get(k + 1);
                    assertFalse(it.axis().equals(next.axis()) && it.stride() == next.extent() * next.stride(),
                            "D1 applies to " + c);
                }
            }
            List<Iter> rep = c.replica();
            for (int j = 0; j < rep.size(); j++) {
                Iter it = rep.get(j);
                assertTrue(it.extent() > 1 && it.stride() > 0, "C0, CZ or C1 applies to " + c);
                if (j + 1 < rep.size()) {
                    assertTrue(Canonicalize.REPLICA_ORDER.compare(it, rep.get(j + 1)) < 0, "replicas out of order in " + c);
                }
                for (Iter other : rep) {
                    if (other != it && it.axis().equals(other.axis()) && it.stride() <= other.stride()) {
                        long c2 = other.stride() / it.stride();
                        assertFalse(other.stride() % it.stride() == 0 && c2 <= it.extent(), "C2 applies to " + c);
                    }
                }
            }
            assertFalse(c.offset().containsValue(0L), "zero offset in " + c);
        });
    }
}
