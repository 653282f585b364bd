package org.axe4j.layout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * broadcast and permute_dims against their definitions, at every index: {@code broadcast(L)(.., j, ..) = L(..)} for
 * every {@code j} of the new digit; {@code permute_dims(L, perm)} maps the digits {@code d} of L permuted,
 * {@code (d[perm[0]], d[perm[1]], ..)}, to {@code L(d)}.
 */
class BroadcastAndPermuteDimsTest {
    private static final int CASES = 400;

    /** The flat index of {@code digits} over the extents of {@code l}'s shard. */
    private static long flat(Layout l, long[] digits) {
        long x = 0;
        for (int k = 0; k < digits.length; k++) {
            x = x * l.shard().get(k).extent() + digits[k];
        }
        return x;
    }

    @Test
    void broadcastSeesTheSameElementAlongTheNewDigit() {
        Property.forAll("broadcast(L)(.., j, ..) = L(..)", CASES, r -> {
            Layout l = RandomLayouts.layout(r);
            if (l.size() > 512 || l.replicaCount() > 16) {
                return;
            }
            int n = l.shard().size();
            long num = 1 + r.nextInt(4);
            long position = -(n + 1) + r.nextInt(2 * n + 2);
            int at = (int) (position >= 0 ? position : n + 1 + position);
            Axis axis = RandomLayouts.axis(r);
            Layout b = Broadcast.broadcast(l, num, position, axis);
            assertEquals(n + 1, b.shard().size());
            assertEquals(new Iter(num, 0, axis), b.shard().get(at), l + " at " + position);
            assertEquals(l.replica(), b.replica());
            assertEquals(l.offset(), b.offset());
            for (long y = 0; y < b.size(); y++) {
                long[] d = b.digits(y);
                long[] without = new long[n];
                for (int k = 0, m = 0; k <= n; k++) {
                    if (k != at) {
                        without[m++] = d[k];
                    }
                }
                assertEquals(l.apply(flat(l, without)), b.apply(y), l + " broadcast " + num + " at " + position);
            }
        });
    }

    @Test
    void broadcastRefusesWhatTirxWouldBuildWrongly() {
        Layout l = Layout.parse("S[(8,2):(2,1)]");
        assertEquals(Layout.parse("S[(8,2,4):(2,1,0)]"), Broadcast.broadcast(l, 4, -1, Axis.M));
        assertEquals(Layout.parse("S[(4,8,2):(0@laneid,2,1)]"), Broadcast.broadcast(l, 4, 0, Axis.of("laneid")));
        assertEquals(Layout.parse("S[(4,8,2):(0,2,1)]"), Broadcast.broadcast(l, 4, -3, Axis.M));
        for (long position : new long[] {3, 7, -4}) {
            AxeException e = assertThrows(AxeException.class, () -> Broadcast.broadcast(l, 4, position, Axis.M));
            assertTrue(e.getMessage().contains("position (" + position + ") must be in [-3, 2]"), e.getMessage());
        }
        for (long num : new long[] {0, -1}) {
            AxeException e = assertThrows(AxeException.class, () -> Broadcast.broadcast(l, num, -1, Axis.M));
            assertTrue(e.getMessage().contains("num (" + num + ") must be >= 1"), e.getMessage());
        }
    }

    @Test
    void permuteDimsMovesTheDigits() {
        Property.forAll("permute_dims(L)(d permuted) = L(d)", CASES, r -> {
            Layout l = RandomLayouts.layout(r);
            if (l.size() > 512 || l.replicaCount() > 16) {
                return;
            }
            List<Integer> perm = new ArrayList<>();
            for (int k = 0; k < l.shard().size(); k++) {
                perm.add(k);
            }
            Collections.shuffle(perm, r);
            Layout p = PermuteDims.permuteDims(l, perm);
            assertEquals(l.replica(), p.replica());
            assertEquals(l.offset(), p.offset());
            for (long x = 0; x < l.size(); x++) {
                long[] d = l.digits(x);
                long[] moved = new long[d.length];
                for (int k = 0; k < d.length; k++) {
                    moved[k] = d[perm.get(k)];
                }
                assertEquals(l.apply(x), p.apply(flat(p, moved)), l + " perm " + perm + " at " + x);
            }
        });
    }

    @Test
    void permuteDimsTakesOnlyPermutations() {
        Layout l = Layout.parse("S[(8,2):(2,1)]");
        assertEquals(Layout.parse("S[(2,8):(1,2)]"), PermuteDims.permuteDims(l, List.of(1, 0)));
        // TIRx answers S[(8,8):(2,2)] for [0, 0]: iter 0 twice, iter 1 never
        for (List<Integer> perm : List.of(List.of(0, 0), List.of(0), List.of(0, 2), List.of(1, -1))) {
            AxeException e = assertThrows(AxeException.class, () -> PermuteDims.permuteDims(l, perm));
            assertTrue(e.getMessage().startsWith("permute_dims: perm " + perm), e.getMessage());
        }
    }
}
