package org.axe4j.mesh;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Point;
import org.axe4j.layout.interop.DeviceMesh;

/**
 * The oracle: {@code expected[r][o]} = the global element at offset o of rank r, found by applying the layout
 * ({@link org.axe4j.layout.Layout#apply}) to every element and matching the device part of each point against
 * {@link DeviceMesh#device} of every mesh coordinate (rank = row-major index of the coordinate).
 */
final class BruteForce {
    private BruteForce() {}

    static Map<Integer, Map<Integer, Integer>> holdings(DistTensor t) {
        DeviceMesh mesh = t.mesh();
        int n = (int) mesh.size();
        Map<Point, Integer> rankOfDevice = new HashMap<>();
        for (int r = 0; r < n; r++) {
            rankOfDevice.put(mesh.device(coord(mesh, r)), r);
        }
        Map<Integer, Map<Integer, Integer>> out = new HashMap<>();
        for (long xp = 0; xp < t.layout().size(); xp++) {
            long[] c = t.paddedShape().unflatten(xp);
            boolean padding = false;
            for (int d = 0; d < c.length; d++) {
                padding |= c[d] >= t.globalShape().dim(d);
            }
            if (padding) {
                continue; // never held, never needed
            }
            long x = t.globalShape().flatten(c);
            for (Point p : t.layout().apply(xp)) {
                Point device = p.minus(Point.single(Axis.M, p.get(Axis.M)));
                Integer r = rankOfDevice.get(device);
                if (r == null) {
                    throw new AssertionError("element " + x + " at " + p + " is on no rank");
                }
                Integer prev = out.computeIfAbsent(r, k -> new HashMap<>()).put((int) p.get(Axis.M), (int) x);
                if (prev != null && prev != x) {
                    throw new AssertionError("overlap at rank " + r + " offset " + p.get(Axis.M));
                }
            }
        }
        return out;
    }

    /**
     * The lower bound from its definition: per element, D = ranks needing it, H = ranks holding it;
     * {@code |D \ H|}, or with p > 1 partial summands {@code (p-1) + |D| - [D meets H]}.
     */
    static long minimumElements(DistTensor src, DistTensor dst) {
        Map<Integer, java.util.Set<Integer>> holders = byElement(holdings(src));
        Map<Integer, java.util.Set<Integer>> needers = byElement(holdings(dst));
        long p = 1;
        for (int j : src.partialDims()) {
            p *= src.mesh().dim(j);
        }
        long min = 0;
        for (var e : needers.entrySet()) {
            java.util.Set<Integer> h = holders.getOrDefault(e.getKey(), java.util.Set.of());
            long missing = e.getValue().stream().filter(r -> !h.contains(r)).count();
            boolean meets = missing < e.getValue().size();
            min += p > 1 ? (p - 1) + e.getValue().size() - (meets ? 1 : 0) : missing;
        }
        return min;
    }

    private static Map<Integer, java.util.Set<Integer>> byElement(Map<Integer, Map<Integer, Integer>> h) {
        Map<Integer, java.util.Set<Integer>> out = new HashMap<>();
        h.forEach((r, m) -> m.values().forEach(x -> out.computeIfAbsent(x, k -> new java.util.TreeSet<>()).add(r)));
        return out;
    }

    static long[] coord(DeviceMesh mesh, int r) {
        long[] c = new long[mesh.rank()];
        for (int j = mesh.rank() - 1; j >= 0; j--) {
            c[j] = r % mesh.dim(j);
            r /= (int) mesh.dim(j);
        }
        return c;
    }

    /** The index of rank r within its partial group: row-major over its coordinates on the partial dims. */
    static int partialIndex(DistTensor t, int r) {
        long[] c = coord(t.mesh(), r);
        int k = 0;
        for (int j : t.partialDims()) {
            k = (int) (k * t.mesh().dim(j) + c[j]);
        }
        return k;
    }

    static String show(int[] a) {
        return Arrays.toString(a);
    }
}
