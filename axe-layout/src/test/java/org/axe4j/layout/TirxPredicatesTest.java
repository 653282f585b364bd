package org.axe4j.layout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * is_trivial and is_trainium against their definitions by enumeration, and get_scope against answers TIRx gave
 * (python/tests/test_layout_tirx_parity_ops.py compares all three with TIRx on random layouts).
 */
class TirxPredicatesTest {
    private static final List<Axis> AXES = List.of(Axis.M, Axis.M, Axis.of("F"), Axis.of("P"), Axis.of("Bank"),
            Axis.of("laneid"), Axis.of("warpid"), Axis.of("TCol"));

    /** Row-major chains on one axis, now and then broken, and random layouts. */
    private static Layout candidate(Random r) {
        if (r.nextInt(4) == 0) {
            return RandomLayouts.layout(r);
        }
        Axis axis = AXES.get(r.nextInt(AXES.size()));
        int n = r.nextInt(4);
        Iter[] shard = new Iter[n];
        long stride = 1;
        for (int k = n - 1; k >= 0; k--) {
            long e = 1 + r.nextInt(4);
            shard[k] = new Iter(e, stride, axis);
            stride *= e;
        }
        List<Iter> d = new java.util.ArrayList<>(List.of(shard));
        if (n > 0 && r.nextInt(3) == 0) {
            int k = r.nextInt(n);
            Iter it = d.get(k);
            d.set(k, r.nextBoolean() ? new Iter(it.extent(), r.nextInt(3), it.axis())
                    : new Iter(it.extent(), it.stride(), AXES.get(r.nextInt(AXES.size()))));
        }
        if (r.nextInt(5) == 0) {
            d.add(r.nextInt(d.size() + 1), new Iter(1, r.nextInt(9), AXES.get(r.nextInt(AXES.size()))));
        }
        List<Iter> replica = r.nextInt(10) == 0 ? List.of(new Iter(1 + r.nextInt(2), 3, Axis.M)) : List.of();
        Map<Axis, Long> offset = r.nextInt(10) == 0 ? Map.of(Axis.M, 1L + r.nextInt(3)) : Map.of();
        return Layout.of(d, replica, offset);
    }

    /**
     * The definition: no replica, no offset, and the identity onto one memory axis: {@code L(x) = {x@a}} for every
     * x; with one element, TIRx keeps the first iter's axis, so that axis must be a memory axis.
     */
    private static boolean trivialByEnumeration(Layout l) {
        if (!l.replica().isEmpty() || !l.offset().isEmpty()) {
            return false;
        }
        if (l.size() == 1) {
            return l.shard().isEmpty() || !ScopePair.isTirxThreadAxis(l.shard().get(0).axis());
        }
        List<Point> one = l.apply(1);
        if (one.size() != 1 || one.get(0).coords().size() != 1) {
            return false;
        }
        Axis a = one.get(0).coords().firstKey();
        if (ScopePair.isTirxThreadAxis(a)) {
            return false;
        }
        for (long x = 0; x < l.size(); x++) {
            if (!l.apply(x).equals(List.of(x == 0 ? Point.ZERO : Point.single(a, x)))) {
                return false;
            }
        }
        return true;
    }

    @Test
    void trivialIsTheIdentityOntoOneMemoryAxis() {
        int[] trivial = {0};
        Property.forAll("is_trivial = identity onto one memory axis", 600, r -> {
            Layout l = candidate(r);
            if (l.size() > 4096) {
                return;
            }
            assertEquals(trivialByEnumeration(l), Trivial.isTrivial(l), l.toString());
            trivial[0] += Trivial.isTrivial(l) ? 1 : 0;
        });
        assertTrue(trivial[0] > 60 && trivial[0] < 540, "trivial in " + trivial[0] + " of 600 cases");
        assertTrue(Trivial.isTrivial(Layout.parse("S[(2,4):(4@F,1@F)]")));
        assertTrue(!Trivial.isTrivial(Layout.parse("S[8:1] + R[1:3]"))); // TIRx keeps an extent-1 replica
        assertTrue(!Trivial.isTrivial(Layout.parse("S[1:1@laneid]")));
    }

    @Test
    void trainiumMeansNoOtherMemoryAxisInTheShard() {
        Property.forAll("is_trainium", 400, r -> {
            Layout l = candidate(r);
            boolean want = l.shard().stream().map(Iter::axis).noneMatch(a -> !ScopePair.isTirxThreadAxis(a)
                    && !List.of("P", "F", "Bank").contains(a.name()));
            assertEquals(want, TrainiumLayout.isTrainium(l), l.toString());
        });
        assertTrue(TrainiumLayout.isTrainium(Layout.parse("S[(2,4):(4@P,1@tx)] + R[2:1] + 3")));
        assertTrue(!TrainiumLayout.isTrainium(Layout.parse("S[(2,4):(4@P,1@TCol)]")));
    }

    private static String scope(String text) {
        Optional<AxisScope[]> p = ScopePair.of(Layout.parse(text));
        return p.map(s -> ScopePair.name(s[0]) + "," + ScopePair.name(s[1])).orElse("none");
    }

    /** TIRx's answers (apache-tvm 0.27, TileLayoutGetScope). */
    @Test
    void scopePairsAreTirxs() {
        assertEquals("thread,cta", scope("S[(4,32):(1@warpid,1@laneid)]"));
        assertEquals("thread,cluster", scope("S[(4,32):(1@cbx,1@tx)]"));
        assertEquals("thread,cta", scope("S[(1,32):(1@warpid,1@laneid)]")); // extent-1 iters count
        assertEquals("thread,cta", scope("S[32:1@laneid] + 3@warpid")); // offsets count
        assertEquals("none", scope("S[32:1] + R[4:1@warpid]")); // a thread axis in the shard is needed
        assertEquals("none", scope("S[32:1]"));
        assertEquals("warp,warpgroup", scope("S[4:1@wid_in_wg]"));
        assertEquals("thread,warpgroup", scope("S[(4,32):(32@wid_in_wg,1@laneid)]"));
        // not chained: laneid and wgid skip the warpgroup's warps; tid_in_wg and wid_in_wg both stop at the
        // warpgroup (TIRx: "disconnected scope chain"); warpid and wid_in_wg count warps within two scopes
        for (String bad : List.of("S[(4,32):(1@wgid,1@laneid)]", "S[(4,32):(1@cbx,1@laneid)]",
                "S[(4,32):(32@wid_in_wg,1@tid_in_wg)]", "S[(4,32):(1@warpid,1@wid_in_wg)]")) {
            AxeException e = assertThrows(AxeException.class, () -> ScopePair.of(Layout.parse(bad)), bad);
            assertEquals(AxeException.Kind.INVALID, e.kind(), bad);
            assertTrue(e.getMessage().startsWith("get_scope: "), e.getMessage());
        }
        AxeException grid = assertThrows(AxeException.class, () -> ScopePair.of(Layout.parse("S[4:1@bx]")));
        assertTrue(grid.getMessage().contains("grid axis bx"), grid.getMessage());
    }
}
