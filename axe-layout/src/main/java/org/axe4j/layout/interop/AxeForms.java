package org.axe4j.layout.interop;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.TreeSet;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Iter;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Point;
import org.axe4j.layout.Shape;

/**
 * The few map-preserving rewrites the converters need, kept local to this package:
 *
 * <pre>
 *   normal shard:  drop (1, s@a);  (e, 0@a) -> (e, 0@m);  (e1,s1@a),(e2,s2@a) -> (e1*e2, s2@a) when s1 = e2*s2
 *   block split:   (e, s@a) -> (c, s*(e/c)@a),(e/c, s@a)   the outer factor c goes to the earlier block
 *   same map:      |D_a| = |D_b|,  normal(D_a) = normal(D_b),  R_a - min R_a = R_b - min R_b,
 *                  O_a + min R_a = O_b + min R_b            (min in a fixed lexicographic order of Z^A)
 * </pre>
 *
 * The same-map test is exact for the layouts the converters compare (the normal shard of a digit map
 * is unique); the property tests confirm it against brute-force enumeration.
 */
final class AxeForms {
    private AxeForms() {}

    /** The shard with unit iters dropped, zero strides moved to {@code m}, and adjacent contiguous iters merged. */
    static List<Iter> normalShard(List<Iter> shard) {
        Deque<Iter> stack = new ArrayDeque<>();
        for (Iter it : shard) {
            if (it.extent() == 1) {
                continue;
            }
            Iter next = it.stride() == 0 ? new Iter(it.extent(), 0, Axis.M) : it;
            while (!stack.isEmpty() && mergeable(stack.peekLast(), next)) {
                Iter outer = stack.pollLast();
                next = new Iter(outer.extent() * next.extent(), next.stride(), next.axis());
            }
            stack.addLast(next);
        }
        return List.copyOf(stack);
    }

    private static boolean mergeable(Iter outer, Iter inner) {
        return outer.axis().equals(inner.axis()) && outer.stride() == inner.extent() * inner.stride();
    }

    /**
     * Splits {@code shard} (unit iters already dropped) into consecutive blocks whose extent products are
     * the dimensions of {@code shape}, splitting an iter only by Lemma B.1; refuses with the first dimension
     * that cannot be formed.
     */
    static Conversion<List<List<Iter>>> group(List<Iter> shard, Shape shape) {
        Deque<Iter> rest = new ArrayDeque<>(shard);
        List<List<Iter>> blocks = new ArrayList<>();
        for (int k = 0; k < shape.rank(); k++) {
            long need = shape.dim(k);
            List<Iter> block = new ArrayList<>();
            while (need > 1) {
                Iter it = rest.peekFirst();
                if (it == null) {
                    return Conversion.refused("shard " + shard + " ends before dimension " + k + " of shape " + shape);
                }
                long e = it.extent();
                if (need % e == 0) {
                    block.add(rest.pollFirst());
                    need /= e;
                } else if (e % need == 0) {
                    block.add(new Iter(need, it.stride() * (e / need), it.axis()));
                    rest.pollFirst();
                    rest.addFirst(new Iter(e / need, it.stride(), it.axis()));
                    need = 1;
                } else {
                    return Conversion.refused("shard " + shard + " cannot be grouped by shape " + shape + ": dimension "
                            + k + " still needs a factor " + need + " but the next iter " + it + " has extent " + e
                            + ", and neither divides the other");
                }
            }
            blocks.add(List.copyOf(block));
        }
        return Conversion.of(List.copyOf(blocks));
    }

    /** True iff {@code a} and {@code b} induce the same set-valued map (see the class comment). */
    static boolean sameMap(Layout a, Layout b) {
        if (a.size() != b.size() || !normalShard(a.shard()).equals(normalShard(b.shard()))) {
            return false;
        }
        List<Point> ra = a.replicaSet();
        List<Point> rb = b.replicaSet();
        if (ra.size() != rb.size()) {
            return false;
        }
        List<Axis> axes = new ArrayList<>(new TreeSet<>(union(a.axes(), b.axes())));
        Point minA = lexMin(ra, axes);
        Point minB = lexMin(rb, axes);
        if (!a.offsetPoint().plus(minA).equals(b.offsetPoint().plus(minB))) {
            return false;
        }
        TreeSet<Point> shiftedA = new TreeSet<>();
        ra.forEach(p -> shiftedA.add(p.minus(minA)));
        TreeSet<Point> shiftedB = new TreeSet<>();
        rb.forEach(p -> shiftedB.add(p.minus(minB)));
        return shiftedA.equals(shiftedB);
    }

    private static List<Axis> union(java.util.Set<Axis> x, java.util.Set<Axis> y) {
        List<Axis> all = new ArrayList<>(x);
        all.addAll(y);
        return all;
    }

    /** The least point in the lexicographic order of {@code Z^axes} (axes in name order, absent = 0). */
    private static Point lexMin(List<Point> points, List<Axis> axes) {
        Point best = points.get(0);
        for (Point p : points) {
            for (Axis axis : axes) {
                int c = Long.compare(p.get(axis), best.get(axis));
                if (c != 0) {
                    if (c < 0) {
                        best = p;
                    }
                    break;
                }
            }
        }
        return best;
    }
}
