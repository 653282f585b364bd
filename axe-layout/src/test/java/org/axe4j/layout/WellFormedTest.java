package org.axe4j.layout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** verify_well_formed against its definition: some order of the axes' (inner, outer) pairs is a chain. */
class WellFormedTest {
    private static final int CASES = 2000;

    /** (inner unit, outer scope) of each thread axis, as CUDA has them. */
    private static final Map<String, AxisScope[]> PAIRS = Map.of(
            "laneid", new AxisScope[] {AxisScope.THREAD, AxisScope.WARP},
            "warpid", new AxisScope[] {AxisScope.WARP, AxisScope.CTA},
            "wid_in_wg", new AxisScope[] {AxisScope.WARP, AxisScope.WARPGROUP},
            "wgid", new AxisScope[] {AxisScope.WARPGROUP, AxisScope.CTA},
            "tx", new AxisScope[] {AxisScope.THREAD, AxisScope.CTA},
            "bx", new AxisScope[] {AxisScope.CTA, AxisScope.KERNEL},
            "cbx", new AxisScope[] {AxisScope.CTA, AxisScope.CLUSTER});

    private static final List<String> AXES = List.of("laneid", "warpid", "wid_in_wg", "wgid", "tx", "bx", "cbx", "m",
            "reg", "gpuid");

    /** Brute force: some ordering of the distinct pairs links each outer scope to the next inner unit. */
    private static boolean chains(List<AxisScope[]> pairs) {
        if (pairs.isEmpty()) {
            return true;
        }
        return permutations(pairs).stream().anyMatch(order -> {
            for (int i = 0; i + 1 < order.size(); i++) {
                if (order.get(i)[1] != order.get(i + 1)[0]) {
                    return false;
                }
            }
            return true;
        });
    }

    private static List<List<AxisScope[]>> permutations(List<AxisScope[]> items) {
        List<List<AxisScope[]>> out = new ArrayList<>();
        if (items.size() <= 1) {
            out.add(new ArrayList<>(items));
            return out;
        }
        for (int i = 0; i < items.size(); i++) {
            List<AxisScope[]> rest = new ArrayList<>(items);
            AxisScope[] first = rest.remove(i);
            for (List<AxisScope[]> p : permutations(rest)) {
                p.add(0, first);
                out.add(p);
            }
        }
        return out;
    }

    @Test
    void wellFormedIffTheThreadAxesChainOneOrderOfScopes() {
        int[] seen = {0, 0};
        Property.forAll("verify_well_formed = scopes chain", CASES, r -> {
            List<Iter> shard = new ArrayList<>();
            List<Iter> replica = new ArrayList<>();
            TreeMap<Axis, Long> offset = new TreeMap<>();
            int n = r.nextInt(5);
            for (int i = 0; i < n; i++) {
                Axis a = Axis.of(AXES.get(r.nextInt(AXES.size())));
                switch (r.nextInt(4)) {
                    case 0 -> replica.add(new Iter(2, 1, a));
                    case 1 -> offset.put(a, 1L + r.nextInt(3));
                    default -> shard.add(new Iter(2, 1 + r.nextInt(4), a));
                }
            }
            Layout l = new Layout(shard, replica, offset);
            Set<String> distinct = new LinkedHashSet<>();
            l.shard().forEach(it -> distinct.add(it.axis().name()));
            l.replica().forEach(it -> distinct.add(it.axis().name()));
            l.offset().keySet().forEach(a -> distinct.add(a.name()));
            List<AxisScope[]> pairs = new ArrayList<>();
            Set<String> pairKeys = new LinkedHashSet<>();
            for (String name : distinct) {
                AxisScope[] p = PAIRS.get(name);
                if (p != null && pairKeys.add(p[0] + ">" + p[1])) {
                    pairs.add(p);
                }
            }
            boolean want = chains(pairs);
            assertEquals(want, WellFormed.isWellFormed(l), l + " " + WellFormed.problem(l));
            seen[want ? 0 : 1]++;
        });
        assertTrue(seen[0] > CASES / 10 && seen[1] > CASES / 10, "well-formed " + seen[0] + ", not " + seen[1]);
    }

    @Test
    void theProblemNamesTheAxes() {
        assertTrue(WellFormed.isWellFormed(Layout.parse("S[(8,2,4,2):(4@laneid,1@warpid,1@laneid,1@reg)] + R[2:4@warpid]")));
        assertTrue(WellFormed.isWellFormed(Layout.parse("S[(2,32):(1@bx,1@tx)]")));
        String conflict = WellFormed.problem(Layout.parse("S[(2,32):(1@wid_in_wg,1@laneid)] + 1@warpid")).orElseThrow();
        assertTrue(conflict.contains("thread axes wid_in_wg and warpid") && conflict.contains("both count warps"),
                conflict);
        String gap = WellFormed.problem(Layout.parse("S[(2,32):(1@wgid,1@laneid)]")).orElseThrow();
        assertTrue(gap.contains("do not chain") && gap.contains("leaving out wgid (warpgroups within a cta)"), gap);
        assertFalse(WellFormed.isWellFormed(Layout.parse("S[4:1] + R[2:1@laneid] + 1@wgid")));
    }
}
