package org.axe4j.layout;

import java.util.ArrayList;
import java.util.List;

/**
 * TIRx's {@code permute_dims(perm)}: the shard iters reordered, iter {@code k} of the result being iter
 * {@code perm[k]} of L; replicas and offset unchanged. If L maps the digits {@code (d_0, .., d_{n-1})} of its shard
 * to a point, the result maps {@code (d_perm[0], .., d_perm[n-1])} to the same point. {@code perm} must be a
 * permutation of {@code 0..n-1} (TIRx checks only its length, so it accepts a list that repeats one iter and drops
 * another).
 */
public final class PermuteDims {
    private PermuteDims() {}

    /** L's shard iters in the order {@code perm}. */
    public static Layout permuteDims(Layout l, List<Integer> perm) {
        int n = l.shard().size();
        if (perm.size() != n) {
            throw AxeException.invalid("permute_dims: perm %s has %d entries, but %s has %d shard iters", perm,
                    perm.size(), l, n);
        }
        boolean[] seen = new boolean[n];
        List<Iter> shard = new ArrayList<>();
        for (int k : perm) {
            if (k < 0 || k >= n || seen[k]) {
                throw AxeException.invalid("permute_dims: perm %s is not a permutation of 0..%d (the shard iters of "
                        + "%s)", perm, n - 1, l);
            }
            seen[k] = true;
            shard.add(l.shard().get(k));
        }
        return l.withShard(shard);
    }
}
