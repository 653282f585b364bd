package org.axe4j.layout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

/** permute_by_groups against its definition: the tensor's dimensions permuted, at every coordinate. */
class PermuteByGroupsTest {
    private static final int CASES = 500;

    /** With L grouped by S: L'(c[perm[0]], c[perm[1]], ...) over S' = S permuted is L(c), for every c. */
    @Test
    void permutingGroupsPermutesTheTensorsDimensions() {
        Property.forAll("permute_by_groups = dims permuted", CASES, r -> {
            Layout l = RandomLayouts.layout(r);
            if (l.size() > 2048 || l.replicaCount() > 64) {
                return;
            }
            Shape s = RandomLayouts.shapeOf(r, l.size(), 3);
            Result<Grouped> g = Group.tryGroup(l, s);
            if (g.isEmpty()) {
                return;
            }
            List<Integer> perm = new ArrayList<>();
            for (int k = 0; k < s.rank(); k++) {
                perm.add(k);
            }
            Collections.shuffle(perm, r);
            Layout p = PermuteByGroups.permuteByGroups(g.get().layout(), g.get().seps(), perm);
            long[] dims = new long[s.rank()];
            for (int k = 0; k < dims.length; k++) {
                dims[k] = s.dim(perm.get(k));
            }
            Shape permuted = Shape.of(dims);
            for (long x = 0; x < l.size(); x++) {
                long[] c = s.unflatten(x);
                long[] cp = new long[c.length];
                for (int k = 0; k < c.length; k++) {
                    cp[k] = c[perm.get(k)];
                }
                assertEquals(l.apply(s, c), p.apply(permuted, cp), l + " by " + s + " perm " + perm + " at " + x);
            }
        });
    }

    @Test
    void seeminglyOverlappingGroupsAreRefused() {
        Layout l = Layout.parse("S[(2,3,4):(12,4,1)]");
        assertEquals(Layout.parse("S[(3,4,2):(4,1,12)]"), PermuteByGroups.permuteByGroups(l, List.of(0, 1, 3), List.of(1, 0)));
        // TIRx accepts these seps and answers S[(2,3,3):(12,4,4)]: iter 1 twice, iter 2 never (18 elements, not 24).
        AxeException overlap = assertThrows(AxeException.class,
                () -> PermuteByGroups.permuteByGroups(l, List.of(0, 2, 1, 2), List.of(0, 1, 2)));
        assertTrue(overlap.getMessage().contains("seps [0, 2, 1, 2] must start at 0 and end at 3"), overlap.getMessage());
        AxeException decrease = assertThrows(AxeException.class,
                () -> PermuteByGroups.permuteByGroups(l, List.of(0, 2, 1, 3), List.of(0, 1, 2)));
        assertTrue(decrease.getMessage().contains("decrease at 2"), decrease.getMessage());
        AxeException perm = assertThrows(AxeException.class,
                () -> PermuteByGroups.permuteByGroups(l, List.of(0, 1, 3), List.of(1, 1)));
        assertTrue(perm.getMessage().contains("perm [1, 1] is not a permutation of 0..1"), perm.getMessage());
        AxeException count = assertThrows(AxeException.class,
                () -> PermuteByGroups.permuteByGroups(l, List.of(0, 1, 3), List.of(0)));
        assertTrue(count.getMessage().contains("perm [0] has 1 entries but seps [0, 1, 3] make 2 groups"),
                count.getMessage());
    }
}
