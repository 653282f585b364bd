package org.axe4j.layout;

import java.util.ArrayList;
import java.util.List;

/**
 * TIRx's {@code permute_by_groups}: the shard's groups of consecutive iters, group {@code g} being iters
 * {@code [seps[g], seps[g+1])}, put in the order {@code perm}; replicas and offset unchanged. If L grouped by a
 * shape S has these seps, the result admits {@code S' = (S[perm[0]], S[perm[1]], ...)} and maps
 * {@code (c[perm[0]], c[perm[1]], ...)} of S' to {@code L(c)}: the tensor's dimensions permuted.
 * {@code seps} must start at 0, never decrease and end at the number of shard iters; {@code perm} must be a
 * permutation of the group indices (TIRx checks only that the flattened index list has the shard's length, so
 * it accepts overlapping groups that repeat one iter and drop another).
 */
public final class PermuteByGroups {
    private PermuteByGroups() {}

    /** L's shard groups reordered by {@code perm} (see the class comment). */
    public static Layout permuteByGroups(Layout l, List<Integer> seps, List<Integer> perm) {
        int n = l.shard().size();
        if (seps.isEmpty() || seps.get(0) != 0 || seps.get(seps.size() - 1) != n) {
            throw AxeException.invalid("permute_by_groups: seps %s must start at 0 and end at %d, the number of shard "
                    + "iters of %s", seps, n, l);
        }
        for (int g = 0; g + 1 < seps.size(); g++) {
            if (seps.get(g + 1) < seps.get(g)) {
                throw AxeException.invalid("permute_by_groups: seps %s decrease at %d (%d then %d); layout %s",
                        seps, g + 1, seps.get(g), seps.get(g + 1), l);
            }
        }
        int groups = seps.size() - 1;
        boolean[] seen = new boolean[groups];
        if (perm.size() != groups) {
            throw AxeException.invalid("permute_by_groups: perm %s has %d entries but seps %s make %d groups of %s",
                    perm, perm.size(), seps, groups, l);
        }
        for (int g : perm) {
            if (g < 0 || g >= groups || seen[g]) {
                throw AxeException.invalid("permute_by_groups: perm %s is not a permutation of 0..%d (the groups of "
                        + "seps %s of %s)", perm, groups - 1, seps, l);
            }
            seen[g] = true;
        }
        List<Iter> shard = new ArrayList<>();
        for (int g : perm) {
            shard.addAll(l.shard().subList(seps.get(g), seps.get(g + 1)));
        }
        return l.withShard(shard);
    }
}
