package org.axe4j.layout;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;

/**
 * Seeded generators of layouts for property tests. Sizes stay small enough for {@link Oracle}.
 * Strides are drawn so that mergeable neighbours, gaps, overlaps, zero and negative strides,
 * several axes and replicas all occur often.
 */
public final class RandomLayouts {
    public static final List<Axis> AXES = List.of(Axis.M, Axis.of("laneid"), Axis.of("warpid"), Axis.of("reg"),
            Axis.of("gpuid"));

    private RandomLayouts() {}

    public static Axis axis(Random r) {
        // m is most common, as in real layouts.
        return r.nextInt(3) == 0 ? Axis.M : AXES.get(r.nextInt(AXES.size()));
    }

    public static long extent(Random r) {
        int[] choices = {1, 2, 2, 3, 4, 4, 5, 6, 8, 8};
        return choices[r.nextInt(choices.length)];
    }

    /** A shard of 0..maxIters iters; strides often continue the previous iter (mergeable) or are compact. */
    public static List<Iter> shard(Random r, int maxIters) {
        int n = r.nextInt(maxIters + 1);
        List<Iter> d = new ArrayList<>();
        long compact = 1;
        for (int i = 0; i < n; i++) {
            d.add(0, null);
        }
        for (int i = n - 1; i >= 0; i--) {
            long e = compact >= 256 ? 1 + r.nextInt(2) : extent(r); // keep sizes small for the oracle
            Axis a = axis(r);
            long s = switch (r.nextInt(6)) {
                case 0, 1 -> compact;            // compact row-major: merges happen
                case 2 -> r.nextInt(9);           // arbitrary small, includes 0
                case 3 -> -1 - r.nextInt(4);      // negative
                case 4 -> compact * (1 + r.nextInt(3));
                default -> 1L << r.nextInt(5);
            };
            d.set(i, new Iter(e, s, a));
            compact *= e;
        }
        return d;
    }

    public static List<Iter> replica(Random r) {
        int n = r.nextInt(4) == 0 ? 1 + r.nextInt(2) : 0;
        List<Iter> rep = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            long s = r.nextInt(5) == 0 ? -(1 + r.nextInt(4)) : r.nextInt(17);
            rep.add(new Iter(1 + r.nextInt(4), s, axis(r)));
        }
        return rep;
    }

    public static TreeMap<Axis, Long> offset(Random r) {
        TreeMap<Axis, Long> o = new TreeMap<>();
        if (r.nextInt(3) == 0) {
            o.put(axis(r), (long) (r.nextInt(21) - 10));
        }
        return o;
    }

    /** A general layout: up to 5 shard iters, sometimes replicas and an offset. */
    public static Layout layout(Random r) {
        return new Layout(shard(r, 5), replica(r), offset(r));
    }

    /** A layout without replicas or offset. */
    public static Layout bare(Random r, int maxIters) {
        return new Layout(shard(r, maxIters), List.of(), new TreeMap<>());
    }

    /** A random factorisation of {@code size} into a shape of rank 1..maxRank. */
    public static Shape shapeOf(Random r, long size, int maxRank) {
        List<Long> dims = new ArrayList<>();
        long rest = size;
        int rank = 1 + r.nextInt(maxRank);
        for (int k = 0; k < rank - 1 && rest > 1; k++) {
            List<Long> divisors = new ArrayList<>();
            for (long q = 1; q <= rest; q++) {
                if (rest % q == 0) {
                    divisors.add(q);
                }
            }
            long q = divisors.get(r.nextInt(divisors.size()));
            dims.add(q);
            rest /= q;
        }
        dims.add(rest);
        return new Shape(dims);
    }
}
