package org.axe4j.layout;

import java.util.ArrayList;
import java.util.List;

/**
 * TIRx's {@code broadcast(num, position, axis)}: a stride-0 iter {@code (num, 0@axis)} inserted into the shard, so
 * that every coordinate {@code j} of the new dimension reads the same element: {@code broadcast(L)(.., j, ..) = L(..)}.
 * Replicas and offset unchanged. {@code position} follows Python's {@code list.insert} on the shard's n iters as
 * TIRx computes it: {@code 0..n} inserts before iter {@code position}, {@code -1..-(n+1)} counts from the end
 * ({@code -1} appends). A position outside {@code [-(n+1), n]} is refused (TIRx clamps or wraps it silently), and so
 * is {@code num < 1} (TIRx builds an iter of that extent).
 */
public final class Broadcast {
    private Broadcast() {}

    /** L with {@code (num, 0@axis)} inserted into the shard at {@code position} (see the class comment). */
    public static Layout broadcast(Layout l, long num, long position, Axis axis) {
        if (num < 1) {
            throw AxeException.invalid("broadcast: num (%d) must be >= 1, the extent of the new dimension of %s",
                    num, l);
        }
        int n = l.shard().size();
        if (position < -(n + 1L) || position > n) {
            throw AxeException.invalid("broadcast: position (%d) must be in [%d, %d] for the %d shard iters of %s "
                    + "(0..%d before that iter, -1 appends)", position, -(n + 1), n, n, l, n);
        }
        int at = (int) (position >= 0 ? position : n + 1 + position);
        List<Iter> shard = new ArrayList<>(l.shard());
        shard.add(at, new Iter(num, 0, axis));
        return l.withShard(shard);
    }
}
