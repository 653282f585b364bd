package org.axe4j.layout;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * The brute-force reference for every operation: the set-valued map of a layout, enumerated from the
 * definition by an odometer over digit tuples (last iter fastest), independent of {@link Layout#apply}.
 * Tests compare what an operation returns with what this enumeration says.
 */
public final class Oracle {
    private Oracle() {}

    /** Largest domain the oracle will enumerate; generators stay well below it. */
    public static final long LIMIT = 1 << 16;

    /** {@code table.get(x)} is the sorted set {@code L(x)}. */
    public static List<TreeSet<Point>> table(Layout l) {
        long n = l.size();
        if (n * replicaCount(l) > LIMIT) {
            throw new IllegalArgumentException("oracle refuses to enumerate " + l);
        }
        List<Point> replicas = replicaPoints(l);
        List<TreeSet<Point>> out = new ArrayList<>();
        int rank = l.shard().size();
        long[] d = new long[rank];
        for (long x = 0; x < n; x++) {
            Map<Axis, Long> base = new HashMap<>(l.offset());
            for (int k = 0; k < rank; k++) {
                Iter it = l.shard().get(k);
                base.merge(it.axis(), d[k] * it.stride(), Long::sum);
            }
            TreeSet<Point> set = new TreeSet<>();
            for (Point r : replicas) {
                Map<Axis, Long> p = new HashMap<>(base);
                r.coords().forEach((a, v) -> p.merge(a, v, Long::sum));
                set.add(new Point(new java.util.TreeMap<>(p)));
            }
            out.add(set);
            for (int k = rank - 1; k >= 0; k--) { // odometer increment
                if (++d[k] < l.shard().get(k).extent()) {
                    break;
                }
                d[k] = 0;
            }
        }
        return out;
    }

    private static long replicaCount(Layout l) {
        long n = 1;
        for (Iter it : l.replica()) {
            n *= it.extent();
        }
        return n;
    }

    /** All replica displacements, with repetition removed. */
    public static List<Point> replicaPoints(Layout l) {
        List<Point> acc = new ArrayList<>(List.of(Point.ZERO));
        for (Iter it : l.replica()) {
            List<Point> next = new ArrayList<>();
            for (Point p : acc) {
                for (long r = 0; r < it.extent(); r++) {
                    next.add(p.plus(Point.single(it.axis(), r * it.stride())));
                }
            }
            acc = next;
        }
        return new ArrayList<>(new TreeSet<>(acc));
    }

    /** True iff the two layouts have the same size and the same set at every index. */
    public static boolean sameMap(Layout a, Layout b) {
        return a.size() == b.size() && table(a).equals(table(b));
    }

    /** True iff no two indices share a replica-free image. */
    public static boolean shardInjective(Layout l) {
        Layout bare = l.withReplica(List.of());
        List<TreeSet<Point>> t = table(bare);
        return new TreeSet<>(t.stream().map(TreeSet::first).toList()).size() == t.size();
    }

    /** Every index whose image contains {@code p}. */
    public static List<Long> preimages(Layout l, Point p) {
        List<Long> xs = new ArrayList<>();
        List<TreeSet<Point>> t = table(l);
        for (int x = 0; x < t.size(); x++) {
            if (t.get(x).contains(p)) {
                xs.add((long) x);
            }
        }
        return xs;
    }

    /** Row-major multi-index to flat index, written independently of {@link Shape#flatten}. */
    public static long flat(long[] shape, long[] coord) {
        long x = 0;
        long weight = 1;
        for (int k = shape.length - 1; k >= 0; k--) {
            x += coord[k] * weight;
            weight *= shape[k];
        }
        return x;
    }
}
