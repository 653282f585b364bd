package org.axe4j.layout;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Seeded generators of layout pairs for canonical-form and equivalence tests: random map-preserving
 * rewrites (each justified by a one-line identity below), random perturbations that usually change
 * the map, merge-rich layouts, and replica-heavy layouts whose replica sets overlap (outside the gap
 * condition). Every generated layout stays within {@link Oracle#LIMIT}.
 */
final class MapPreservingRewrites {
    private MapPreservingRewrites() {}

    /** Largest {@code size * replicaCount} a generated layout may have. */
    static final long BUDGET = Oracle.LIMIT;

    static boolean fitsOracle(Layout l) {
        return l.size() <= BUDGET && l.replicaCount() <= BUDGET / l.size();
    }

    /** Rewrites may grow {@code size * replicaCount} up to this (or the input's own), to keep the oracle quick. */
    static final long GROWTH_BUDGET = 8192;

    /** Applies {@code steps} random map-preserving rewrites to {@code l}. */
    static Layout rewrite(Random r, Layout l, int steps) {
        long budget = Math.max(GROWTH_BUDGET, l.size() * l.replicaCount());
        Layout cur = l;
        for (int i = 0; i < steps; i++) {
            Layout next = rewriteOnce(r, cur);
            if (fitsOracle(next) && next.size() * next.replicaCount() <= budget) {
                cur = next;
            }
        }
        return cur;
    }

    /** One random rewrite; returns {@code l} itself when the chosen rewrite does not apply. */
    static Layout rewriteOnce(Random r, Layout l) {
        List<Iter> d = new ArrayList<>(l.shard());
        List<Iter> rep = new ArrayList<>(l.replica());
        TreeMap<Axis, Long> off = new TreeMap<>(l.offset());
        switch (r.nextInt(11)) {
            case 0 -> { // (e, s) = (e/c, s*c),(c, s): digit d = d1*c + d2 gives d*s = d1*(s*c) + d2*s
                int k = pick(r, d);
                if (k < 0) {
                    return l;
                }
                Iter it = d.get(k);
                long c = divisor(r, it.extent());
                if (c == 1 || c == it.extent()) {
                    return l;
                }
                d.set(k, new Iter(it.extent() / c, it.stride() * c, it.axis()));
                d.add(k + 1, new Iter(c, it.stride(), it.axis()));
            }
            case 1 -> { // inverse of the split: merge a D1 pair
                for (int k = 0; k + 1 < d.size(); k++) {
                    Iter a = d.get(k);
                    Iter b = d.get(k + 1);
                    if (a.axis().equals(b.axis()) && a.stride() == b.extent() * b.stride()) {
                        d.set(k, new Iter(a.extent() * b.extent(), b.stride(), b.axis()));
                        d.remove(k + 1);
                        break;
                    }
                }
            }
            case 2 -> // an extent-1 iter has only digit 0
                    d.add(r.nextInt(d.size() + 1), new Iter(1, r.nextInt(9) - 4, RandomLayouts.axis(r)));
            case 3 -> { // a stride-0 shard iter contributes 0 on any axis
                int k = pick(r, d);
                if (k < 0 || d.get(k).stride() != 0) {
                    return l;
                }
                d.set(k, new Iter(d.get(k).extent(), 0, RandomLayouts.axis(r)));
            }
            case 4 -> Collections.shuffle(rep, r); // R is a multiset
            case 5 -> { // t*[0,f) = t*[0,f1) + c*t*[0,f2) when f = f1 + c*(f2-1), 1 <= c <= f1
                int k = pick(r, rep);
                if (k < 0 || rep.get(k).extent() < 2) {
                    return l;
                }
                Iter it = rep.get(k);
                long f = it.extent();
                long f1 = 1 + r.nextInt((int) f);
                long c = 1 + r.nextInt((int) f1);
                if ((f - f1) % c != 0) {
                    return l;
                }
                long f2 = (f - f1) / c + 1;
                rep.set(k, new Iter(f1, it.stride(), it.axis()));
                rep.add(r.nextInt(rep.size() + 1), new Iter(f2, c * it.stride(), it.axis()));
            }
            case 6 -> { // the inverse: merge two progressions t*[0,f1) + c*t*[0,f2), c <= f1, any sign of t
                for (int i = 0; i < rep.size(); i++) {
                    for (int j = 0; j < rep.size(); j++) {
                        Iter a = rep.get(i);
                        Iter b = rep.get(j);
                        if (i != j && a.axis().equals(b.axis()) && a.stride() != 0 && b.stride() % a.stride() == 0) {
                            long c = b.stride() / a.stride();
                            if (c >= 1 && c <= a.extent()) {
                                rep.set(i, new Iter(a.extent() + c * (b.extent() - 1), a.stride(), a.axis()));
                                rep.remove(j);
                                return l.withReplica(rep);
                            }
                        }
                    }
                }
            }
            case 7 -> { // t*[0,f) = (f-1)*t + (-t)*[0,f)
                int k = pick(r, rep);
                if (k < 0) {
                    return l;
                }
                Iter it = rep.get(k);
                rep.set(k, new Iter(it.extent(), -it.stride(), it.axis()));
                off.merge(it.axis(), (it.extent() - 1) * it.stride(), Long::sum);
            }
            case 8 -> // 0*[0,f) = {0}, and [0,1) = {0}
                    rep.add(r.nextInt(rep.size() + 1), r.nextBoolean()
                            ? new Iter(1 + r.nextInt(4), 0, RandomLayouts.axis(r))
                            : new Iter(1, r.nextInt(9) - 4, RandomLayouts.axis(r)));
            case 9 -> { // rewrite a stride-0 replica: another extent, another axis
                int k = pick(r, rep);
                if (k < 0 || rep.get(k).stride() != 0) {
                    return l;
                }
                rep.set(k, new Iter(1 + r.nextInt(4), 0, RandomLayouts.axis(r)));
            }
            default -> { // t*[0,f1*f2) = t*[0,f1) + (f1*t)*[0,f2)
                int k = pick(r, rep);
                if (k < 0) {
                    return l;
                }
                Iter it = rep.get(k);
                long f1 = divisor(r, it.extent());
                rep.set(k, new Iter(f1, it.stride(), it.axis()));
                rep.add(new Iter(it.extent() / f1, f1 * it.stride(), it.axis()));
            }
        }
        return new Layout(d, rep, off);
    }

    /** Changes one stride, extent, axis or offset entry, or swaps two shard iters; usually changes the map. */
    static Layout perturb(Random r, Layout l) {
        List<Iter> d = new ArrayList<>(l.shard());
        List<Iter> rep = new ArrayList<>(l.replica());
        TreeMap<Axis, Long> off = new TreeMap<>(l.offset());
        switch (r.nextInt(7)) {
            case 0 -> {
                int k = pick(r, d);
                if (k >= 0) {
                    Iter it = d.get(k);
                    d.set(k, it.withStride(r.nextBoolean() ? it.stride() + nonZero(r) : r.nextInt(3) - 1));
                }
            }
            case 1 -> {
                int k = pick(r, d);
                if (k >= 0) {
                    Iter it = d.get(k);
                    d.set(k, new Iter(it.extent(), it.stride(), RandomLayouts.axis(r)));
                }
            }
            case 2 -> {
                int k = pick(r, rep);
                if (k >= 0) {
                    Iter it = rep.get(k);
                    rep.set(k, r.nextBoolean() ? it.withStride(it.stride() + nonZero(r))
                            : it.withExtent(Math.max(1, it.extent() + nonZero(r))));
                } else {
                    rep.add(new Iter(2, r.nextInt(5) - 2, RandomLayouts.axis(r)));
                }
            }
            case 3 -> off.merge(RandomLayouts.axis(r), nonZero(r), Long::sum);
            case 4 -> {
                if (d.size() >= 2) {
                    Collections.swap(d, r.nextInt(d.size()), r.nextInt(d.size()));
                }
            }
            case 5 -> {
                int k = pick(r, d);
                if (k >= 0) {
                    Iter it = d.get(k);
                    d.set(k, it.withExtent(Math.max(1, it.extent() + nonZero(r))));
                }
            }
            default -> {
                if (!rep.isEmpty()) {
                    rep.remove(r.nextInt(rep.size()));
                }
            }
        }
        Layout p = new Layout(d, rep, off);
        return fitsOracle(p) ? p : l;
    }

    /**
     * A layout with many merge opportunities: compact chains split at random points, extent-1 and
     * stride-0 iters, replicas that are split progressions with random signs.
     */
    static Layout mergeRich(Random r) {
        Layout base = RandomLayouts.layout(r);
        List<Iter> d = new ArrayList<>();
        long compact = 1;
        int n = r.nextInt(4);
        for (int i = 0; i < n && compact < 512; i++) {
            long e = 2 + r.nextInt(3);
            d.add(0, new Iter(e, compact, RandomLayouts.axis(r)));
            compact *= e;
        }
        d.addAll(r.nextInt(d.size() + 1), base.shard());
        List<Iter> rep = new ArrayList<>();
        if (r.nextBoolean()) {
            Axis a = RandomLayouts.axis(r);
            long t = 1 + r.nextInt(4);
            rep.add(new Iter(1 + r.nextInt(6), (r.nextBoolean() ? 1 : -1) * t, a));
        }
        Layout l = new Layout(d, rep, base.offset());
        if (l.size() * l.replicaCount() > GROWTH_BUDGET) { // keeps the oracle quick; base itself may be larger
            l = base;
        }
        return rewrite(r, l, 1 + r.nextInt(6));
    }

    /**
     * Replica-heavy layouts on a small shard: 2..4 replica iters of extents 2..4 and strides 0, ±2..±7 on one or
     * two axes, so that progressions overlap and the gap condition often fails.
     */
    static Layout overlappingReplicas(Random r, List<Iter> shard, TreeMap<Axis, Long> offset) {
        List<Iter> rep = new ArrayList<>();
        int n = 2 + r.nextInt(3);
        Axis second = r.nextBoolean() ? Axis.M : Axis.of("warpid");
        for (int i = 0; i < n; i++) {
            long t = r.nextInt(8) == 0 ? 0 : (r.nextBoolean() ? 1 : -1) * (2 + r.nextInt(6)); // stride 1 would absorb most others
            rep.add(new Iter(2 + r.nextInt(3), t, r.nextInt(4) == 0 ? second : Axis.of("laneid")));
        }
        return new Layout(shard, rep, offset);
    }

    /**
     * A layout with {@code l}'s shard, canonical offset and canonical replicas, except on the axis with the
     * most canonical replica iters (at least 2): there, another list with the same maximum
     * {@code sum (f-1) t} and the same smallest stride, found by up to 2,000 random tries (1..4 iters,
     * extents 2..6, the smallest stride first, then strides up to 7). With {@code sameSet} the list must also
     * have the same set of sums (checked by enumeration), which makes a map-preserving rewrite that C0..C2
     * may not undo; without, it must have another set. Returns {@code l} if nothing is found.
     */
    static Layout sameBoundingBox(Random r, Layout l, boolean sameSet) {
        Layout c = Canonicalize.canonicalize(l);
        TreeMap<Axis, List<Iter>> byAxis = new TreeMap<>();
        for (Iter it : c.replica()) {
            byAxis.computeIfAbsent(it.axis(), x -> new ArrayList<>()).add(it);
        }
        Axis target = null;
        for (var e : byAxis.entrySet()) {
            if (e.getValue().size() >= 2 && (target == null || e.getValue().size() > byAxis.get(target).size())) {
                target = e.getKey();
            }
        }
        if (target == null) {
            return l;
        }
        List<Iter> want = byAxis.get(target);
        long smallest = want.get(0).stride();
        for (int i = 0; i < 2000; i++) {
            List<Iter> tryList = new ArrayList<>();
            int n = 1 + r.nextInt(4);
            for (int j = 0; j < n; j++) {
                long t = j == 0 ? smallest : smallest + r.nextInt((int) Math.max(1, 8 - smallest));
                tryList.add(new Iter(2 + r.nextInt(5), t, target));
            }
            if (max(tryList) == max(want) && sums(tryList).equals(sums(want)) == sameSet) {
                byAxis.put(target, tryList);
                List<Iter> rep = new ArrayList<>();
                byAxis.values().forEach(rep::addAll);
                Layout b = new Layout(l.shard(), rep, c.offset());
                return fitsOracle(b) ? b : l;
            }
        }
        return l;
    }

    /** {@code sum_j t_j*[0,f_j)} by enumeration. */
    private static TreeSet<Long> sums(List<Iter> list) {
        TreeSet<Long> set = new TreeSet<>(List.of(0L));
        for (Iter it : list) {
            TreeSet<Long> next = new TreeSet<>();
            for (long v : set) {
                for (long k = 0; k < it.extent(); k++) {
                    next.add(v + k * it.stride());
                }
            }
            set = next;
        }
        return set;
    }

    private static long max(List<Iter> list) {
        return list.stream().mapToLong(Iter::reach).sum();
    }

    /** -2, -1, 1 or 2. */
    private static long nonZero(Random r) {
        long v = 1 + r.nextInt(2);
        return r.nextBoolean() ? v : -v;
    }

    private static int pick(Random r, List<Iter> list) {
        return list.isEmpty() ? -1 : r.nextInt(list.size());
    }

    /** A random divisor of {@code n} (1 and n included). */
    private static long divisor(Random r, long n) {
        List<Long> ds = new ArrayList<>();
        for (long q = 1; q <= n; q++) {
            if (n % q == 0) {
                ds.add(q);
            }
        }
        return ds.get(r.nextInt(ds.size()));
    }
}
