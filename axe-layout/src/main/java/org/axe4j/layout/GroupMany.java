package org.axe4j.layout;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;

/**
 * Group by several shapes at once (TIRx's {@code group_many}): the shard is split, never fused or reordered,
 * at the common refinement of the shapes' cumulative-product boundaries.
 *
 * <pre>
 *   boundaries(S) = S_0, S_0*S_1, ..., prod(S)      (a value repeated k times in some shape is kept k times)
 *   refined       = the sorted union, each value as often as the shape that repeats it most;
 *                   its dims are the successive quotients (1 for a repeated value: a unit iter)
 *   seps(S)[k+1]  = the position of the j-th occurrence of boundary k's value (j counted within S),
 *                   the last boundary of every shape at the end
 * </pre>
 *
 * Every boundary must divide the next, else NOT_REPRESENTABLE. Example: {@code S[30:1]} by (6,5) and (2,15)
 * is {@code S[(2,3,5):(15,5,1)]} with seps [0,2,3] and [0,1,3].
 */
public final class GroupMany {
    private GroupMany() {}

    /** The split layout and one separator list per shape. */
    public record Result(Layout layout, List<List<Integer>> seps) {
        public Result {
            seps = seps.stream().map(List::copyOf).toList();
        }
    }

    public static Result groupMany(Layout l, List<Shape> shapes) {
        if (shapes.isEmpty()) {
            throw AxeException.invalid("group_many of %s needs at least one shape", l);
        }
        TreeMap<Long, Integer> multiplicity = new TreeMap<>();
        for (Shape s : shapes) {
            l.requireAdmits(s);
            TreeMap<Long, Integer> own = new TreeMap<>();
            for (long b : boundaries(s)) {
                own.merge(b, 1, Integer::sum);
            }
            own.forEach((b, k) -> multiplicity.merge(b, k, Math::max));
        }
        List<Long> refinedBounds = new ArrayList<>();
        multiplicity.forEach((b, k) -> {
            for (int i = 0; i < k; i++) {
                refinedBounds.add(b);
            }
        });
        List<Long> dims = new ArrayList<>();
        long previous = 1;
        for (long b : refinedBounds) {
            if (b % previous != 0) {
                throw AxeException.notRepresentable("group_many of %s by %s: boundary %d does not divide %d",
                        l, shapes, previous, b);
            }
            dims.add(b / previous);
            previous = b;
        }
        List<Integer> ends = new ArrayList<>(); // ends.get(i): shard position after refined dim i
        List<Iter> out = split(l, dims, ends);
        List<List<Integer>> seps = new ArrayList<>();
        for (Shape s : shapes) {
            List<Long> own = boundaries(s);
            List<Integer> sep = new ArrayList<>();
            sep.add(0);
            for (int k = 0; k < own.size(); k++) {
                if (k == own.size() - 1) {
                    sep.add(out.size());
                    break;
                }
                int occurrence = 0;
                for (int j = 0; j < k; j++) {
                    occurrence += own.get(j).equals(own.get(k)) ? 1 : 0;
                }
                sep.add(ends.get(refinedBounds.indexOf(own.get(k)) + occurrence));
            }
            seps.add(sep);
        }
        return new Result(new Layout(out, l.replica(), l.offset()), seps);
    }

    private static List<Long> boundaries(Shape s) {
        List<Long> out = new ArrayList<>();
        long product = 1;
        for (int k = 0; k < s.rank(); k++) {
            product *= s.dim(k);
            out.add(product);
        }
        return out;
    }

    /** Splits the shard at the dims' ends, a unit iter for a dim of extent 1 that no unit iter fills. */
    private static List<Iter> split(Layout l, List<Long> dims, List<Integer> ends) {
        List<Iter> shard = new ArrayList<>(l.shard());
        List<Iter> out = new ArrayList<>();
        int next = 0;
        for (long d : dims) {
            long need = d;
            if (need == 1) {
                if (next < shard.size() && shard.get(next).extent() == 1) {
                    out.add(shard.get(next++));
                } else if (next < shard.size()) {
                    Iter it = shard.get(next);
                    out.add(new Iter(1, it.extent() * it.stride(), it.axis())); // (e,s) == (1,e*s),(e,s)
                } else {
                    out.add(Iter.of(1, 1));
                }
            }
            while (need > 1) {
                Iter it = shard.get(next);
                long e = it.extent();
                if (need % e == 0) {
                    out.add(it);
                    next++;
                    need /= e;
                } else if (e % need == 0) { // split (e,s) == (need, s*e/need), (e/need, s)
                    out.add(new Iter(need, it.stride() * (e / need), it.axis()));
                    shard.set(next, new Iter(e / need, it.stride(), it.axis()));
                    need = 1;
                } else {
                    throw AxeException.notRepresentable("group_many of %s: a boundary of extent %d ends inside iter %s",
                            l, d, it);
                }
            }
            ends.add(out.size());
        }
        while (next < shard.size()) { // trailing unit iters stay in the last block
            out.add(shard.get(next++));
        }
        if (!ends.isEmpty()) {
            ends.set(ends.size() - 1, out.size());
        }
        return out;
    }
}
