package org.axe4j.layout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** Fusing and splitting CUDA thread axes, against the identification tx = 32 warpid + laneid, point by point. */
class CudaThreadsTest {
    /** Threads per unit each axis counts. */
    static final Map<String, Long> UNIT = Map.of("laneid", 1L, "tid_in_wg", 1L, "tx", 1L, "wid_in_wg", 32L,
            "warpid", 32L, "wgid", 128L);

    /** Chains of axes that are digits of one CTA's (or warpgroup's) threads, innermost first. */
    static final List<List<String>> CHAINS = List.of(List.of("laneid", "warpid"), List.of("laneid", "wid_in_wg"),
            List.of("laneid", "wid_in_wg", "wgid"), List.of("tid_in_wg", "wgid"), List.of("wid_in_wg", "wgid"),
            List.of("laneid"), List.of("tx"), List.of("warpid"));

    /** A layout over one chain of thread axes and m, each axis within its count (lanes < 32, warps in a group < 4). */
    static Layout threads(Random r) {
        List<String> chain = CHAINS.get(r.nextInt(CHAINS.size()));
        Map<String, Long> within = Map.of("laneid", 32L, "tid_in_wg", 128L, "tx", 256L, "wid_in_wg", 4L,
                "warpid", 8L, "wgid", 2L);
        List<Iter> shard = new ArrayList<>();
        for (String name : chain) {
            long limit = within.get(name);
            long stride = 1L << r.nextInt(3);
            long extent = Math.max(1, limit / stride / (1L << r.nextInt(2)));
            shard.add(r.nextBoolean() ? shard.size() : 0, new Iter(extent, stride, Axis.of(name)));
        }
        if (r.nextBoolean()) {
            shard.add(r.nextInt(shard.size() + 1), new Iter(1 + r.nextInt(3), 1 + r.nextInt(4), Axis.M));
        }
        List<Iter> replica = new ArrayList<>();
        if (r.nextInt(3) == 0) {
            String name = chain.get(r.nextInt(chain.size()));
            replica.add(new Iter(2, 1, Axis.of(name)));
        }
        TreeMap<Axis, Long> offset = new TreeMap<>();
        for (String name : chain) {
            if (r.nextInt(3) == 0) {
                offset.put(Axis.of(name), (long) r.nextInt(2));
            }
        }
        return new Layout(shard, replica, offset);
    }

    /** A point with every CUDA thread coordinate replaced by its threads on {@code target} (units of {@code unit}). */
    static Point identified(Point p, Axis target, long unit) {
        TreeMap<Axis, Long> c = new TreeMap<>();
        p.coords().forEach((a, v) -> {
            Long u = UNIT.get(a.name());
            boolean inChain = u != null && u >= unit;
            c.merge(inChain ? target : a, inChain ? v * (u / unit) : v, Long::sum);
        });
        c.values().removeIf(v -> v == 0);
        return new Point(c);
    }

    static TreeSet<Point> set(List<Point> points) {
        TreeSet<Point> out = new TreeSet<>();
        points.forEach(p -> {
            TreeMap<Axis, Long> c = new TreeMap<>(p.coords());
            c.values().removeIf(v -> v == 0);
            out.add(new Point(c));
        });
        return out;
    }

    @Test
    void fusedLayoutsHaveTheIdentifiedPoints() {
        Property.forAll("cuda fuse", 400, r -> {
            Layout l = threads(r);
            Layout fused = CudaThreads.fuse(l);
            if (CudaThreads.scopePair(l).isEmpty()) {
                assertEquals(l, fused, "no thread axis beyond extent-1 iters");
                return;
            }
            AxisScope[] pair = CudaThreads.scopePair(l).get();
            Axis target = fused.shard().stream().map(Iter::axis).filter(a -> UNIT.containsKey(a.name())).findFirst()
                    .orElse(fused.axes().stream().filter(a -> UNIT.containsKey(a.name())).findFirst().orElseThrow());
            long unit = pair[0] == AxisScope.THREAD ? 1 : pair[0] == AxisScope.WARP ? 32 : 128;
            for (Axis a : fused.axes()) {
                assertTrue(a.equals(Axis.M) || a.equals(target), fused + " keeps " + a + " besides " + target);
            }
            for (long x = 0; x < l.size(); x++) {
                TreeSet<Point> expected = new TreeSet<>();
                for (Point p : l.apply(x)) {
                    expected.add(identified(p, target, unit));
                }
                assertEquals(expected, set(fused.apply(x)), l + " fused to " + fused + " at " + x);
            }
        });
    }

    /** The split's points, lanes and warps summed back into threads, are the layout's. */
    @Test
    void splitIsTheSameThreads() {
        Property.forAll("cuda split", 400, r -> {
            long stride = 1L << r.nextInt(7);
            long extent = 1L << r.nextInt(8);
            Layout l = new Layout(List.of(new Iter(extent, stride, Axis.of("tx")), new Iter(2, 1, Axis.M)), List.of(),
                    r.nextBoolean() ? new TreeMap<>(Map.of(Axis.of("tx"), (long) r.nextInt(300))) : new TreeMap<>());
            for (AxisScope scope : List.of(AxisScope.WARP, AxisScope.WARPGROUP)) {
                Layout split = CudaThreads.split(l, scope);
                assertTrue(split.axes().stream().noneMatch(a -> a.name().equals("tx")), split.toString());
                for (long x = 0; x < l.size(); x++) {
                    TreeSet<Point> back = new TreeSet<>();
                    split.apply(x).forEach(p -> back.add(identified(p, Axis.of("tx"), 1)));
                    assertEquals(set(l.apply(x)), back, l + " split at " + scope + ": " + split + " at " + x);
                }
            }
        });
        AxeException odd = assertThrows(AxeException.class,
                () -> CudaThreads.split(Layout.parse("S[3:24@tx]"), AxisScope.WARP));
        assertTrue(odd.getMessage().contains("S[3:24@tx]") && odd.getMessage().contains("warp"), odd.getMessage());
    }

    @Test
    void examples() {
        assertEquals(Layout.parse("S[64:1@tx]"),
                Canonicalize.canonicalize(CudaThreads.fuse(Layout.parse("S[(2,32):(1@warpid,1@laneid)]"))));
        // Offsets on two fused axes add up: warp 1, lane 3 is thread 35.
        assertEquals(Layout.parse("S[32:1@tx] + 35@tx"),
                CudaThreads.fuse(Layout.parse("S[32:1@laneid] + 1@warpid + 3@laneid")));
        // Warps of warpgroups within a CTA: wid_in_wg and wgid are warpid digits.
        assertEquals(Layout.parse("S[(2,4):(4@warpid,1@warpid)]"),
                CudaThreads.fuse(Layout.parse("S[(2,4):(1@wgid,1@wid_in_wg)]")));
        assertEquals(Layout.parse("S[(2,32):(1@warpid,1@laneid)]"),
                CudaThreads.split(Layout.parse("S[64:1@tx]"), AxisScope.WARP));
    }
}
