package org.axe4j.layout;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Solving {@code sum_k d_k s_k = v} over the digits of the iters on one axis: the backward map and
 * the injectivity test. Axes are independent (each digit belongs to one axis), so a shard is
 * injective iff each axis's digit map is, and a point's preimages are the product of per-axis solutions.
 */
final class AxisDigits {
    private AxisDigits() {}

    /** Above this many preimages the backward map refuses (a stride-0 iter of huge extent, say). */
    static final int SOLUTION_LIMIT = 1 << 20;

    /**
     * Exact injectivity of {@code d -> sum d_k s_k} for iters on one axis. Sorted by |s|, if each
     * |s| exceeds the reach of all smaller ones the map is injective (a mixed-radix number);
     * otherwise count the distinct digit sums as runs of values ({@link Runs}).
     */
    static boolean injective(List<Iter> iters) {
        List<Iter> sorted = new ArrayList<>(iters);
        sorted.sort(Comparator.comparingLong(it -> Math.abs(it.stride())));
        long reach = 0;
        boolean radix = true;
        for (Iter it : sorted) {
            if (it.stride() == 0) {
                return false; // extent > 1 here
            }
            if (Math.abs(it.stride()) <= reach) {
                radix = false;
                break;
            }
            reach += it.reach();
        }
        if (radix) {
            return true;
        }
        // Flipping the digits of a negative stride (d -> e-1-d) only shifts the sums, so the map is injective
        // iff the sums with |s| are all distinct: iff there are as many distinct sums as digit tuples.
        long count = 1;
        long g = 0;
        long max = 0;
        List<Iter> positive = new ArrayList<>();
        for (Iter it : iters) {
            count = Checks.mul("digit count", count, it.extent());
            g = Checks.gcd(g, it.stride());
            max += it.reach(); // the axis reach fits (Layout's constructor checks it)
            positive.add(new Iter(it.extent(), Math.abs(it.stride()), it.axis()));
        }
        // Distinct sums cannot outnumber the values in [0, max]; more tuples than that always collide.
        if (count - 1 > max / g) {
            return false;
        }
        Runs runs = Runs.of(positive, g, max / g, Equivalence.RUN_LIMIT);
        if (runs == null) {
            throw Budget.overLimit("injectivity of iters " + iters + " needs the sums as more than "
                    + Equivalence.RUN_LIMIT + " runs of values");
        }
        return runs.count() == count;
    }

    /** All flat indices x of {@code shard} with {@code D(x) = q}, ascending. */
    static List<Long> solve(List<Iter> shard, Point q) {
        Map<Axis, List<Integer>> byAxis = new TreeMap<>();
        for (int k = 0; k < shard.size(); k++) {
            byAxis.computeIfAbsent(shard.get(k).axis(), a -> new ArrayList<>()).add(k);
        }
        for (Axis a : q.coords().keySet()) {
            if (!byAxis.containsKey(a)) {
                return List.of(); // a non-zero component on an axis the shard never touches
            }
        }
        long[] weight = new long[shard.size()];
        long b = 1;
        for (int k = shard.size() - 1; k >= 0; k--) {
            weight[k] = b;
            b *= shard.get(k).extent();
        }
        // Per axis: the partial flat indices sum d_k * B_k of every digit solution.
        List<Long> partial = new ArrayList<>(List.of(0L));
        for (Map.Entry<Axis, List<Integer>> e : byAxis.entrySet()) {
            List<Long> axisSolutions = solveAxis(shard, e.getValue(), weight, q.get(e.getKey()));
            List<Long> next = new ArrayList<>();
            for (long p : partial) {
                for (long s : axisSolutions) {
                    Budget.tick();
                    next.add(p + s);
                    if (next.size() > SOLUTION_LIMIT) {
                        throw AxeException.invalid("point %s has more than %d preimages under shard %s",
                                q, SOLUTION_LIMIT, shard);
                    }
                }
            }
            partial = next;
            if (partial.isEmpty()) {
                return List.of();
            }
        }
        partial.sort(Long::compare);
        return partial;
    }

    /** Depth-first search over digits, largest |stride| first, pruned by the range the rest can reach. */
    private static List<Long> solveAxis(List<Iter> shard, List<Integer> ks, long[] weight, long v) {
        // Extent-1 iters have only the digit 0: leaving them out keeps the search as deep as the iters that
        // count (at most 63, since the size fits), however many extent-1 iters the layout lists.
        List<Integer> order = new ArrayList<>();
        for (int k : ks) {
            if (shard.get(k).extent() > 1) {
                order.add(k);
            }
        }
        order.sort(Comparator.comparingLong((Integer k) -> Math.abs(shard.get(k).stride())).reversed());
        int n = order.size();
        long[] minRest = new long[n + 1];
        long[] maxRest = new long[n + 1];
        for (int i = n - 1; i >= 0; i--) {
            Iter it = shard.get(order.get(i));
            long r = (it.extent() - 1) * it.stride();
            minRest[i] = minRest[i + 1] + Math.min(0, r);
            maxRest[i] = maxRest[i + 1] + Math.max(0, r);
        }
        List<Long> out = new ArrayList<>();
        search(shard, order, weight, minRest, maxRest, 0, v, 0, out);
        return out;
    }

    private static void search(List<Iter> shard, List<Integer> order, long[] weight, long[] minRest,
                               long[] maxRest, int i, long residual, long index, List<Long> out) {
        Budget.tick();
        if (residual < minRest[i] || residual > maxRest[i]) {
            return;
        }
        if (i == order.size()) {
            out.add(index);
            if (out.size() > SOLUTION_LIMIT) {
                throw AxeException.invalid("more than %d preimages under shard %s", SOLUTION_LIMIT, shard);
            }
            return;
        }
        int k = order.get(i);
        Iter it = shard.get(k);
        long s = it.stride();
        long lo = 0;
        long hi = it.extent() - 1;
        if (s != 0) {
            // Need minRest[i+1] <= residual - d*s <= maxRest[i+1].
            long a = residual - maxRest[i + 1];
            long c = residual - minRest[i + 1];
            if (s > 0) {
                lo = Math.max(lo, Math.floorDiv(a + s - 1, s));
                hi = Math.min(hi, Math.floorDiv(c, s));
            } else {
                long t = -s; // d*t in [-c, -a]
                lo = Math.max(lo, Math.floorDiv(-c + t - 1, t));
                hi = Math.min(hi, Math.floorDiv(-a, t));
            }
        }
        for (long d = lo; d <= hi; d++) {
            search(shard, order, weight, minRest, maxRest, i + 1, residual - d * s, index + d * weight[k], out);
        }
    }
}
