package org.axe4j.schedules.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Iter;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Point;
import org.axe4j.layout.Property;
import org.axe4j.layout.Shape;
import org.axe4j.schedules.Decision;
import org.axe4j.schedules.Operand;
import org.axe4j.schedules.Request;
import org.junit.jupiter.api.Test;

/**
 * The shuffle reduction plan, run as the emitter runs it: each thread folds its slots per output, then for every
 * butterfly mask takes the partner lane's partial result (t xor mask), then stores. Values are multisets of source
 * elements; every (thread, slot) the destination layout gives an output must end with exactly the source
 * elements of that output's slice, each once.
 */
class CudaShuffleReduceRuleTest {
    static final int CASES = Math.min(Property.CASES, 1500);

    record Case(Operand dst, Operand src, long[] axes, String scope, long threads, boolean acrossWarps) {}

    /**
     * A (rows, cols) source whose lane digits, register digits (and, at CTA scope, warp digits) go to rows or
     * columns; the destination keeps the other dim's iters (fresh register strides) and replicates (or drops) the
     * reduced dim's thread digits.
     */
    static Case randomCase(Random r) {
        String scope = new String[] {"warp", "warpgroup", "cta"}[r.nextInt(3)];
        long threads = scope.equals("warp") ? 32 : scope.equals("warpgroup") ? 128 : new long[] {64, 128}[r.nextInt(2)];
        int reducedDim = r.nextInt(2);
        List<List<Iter>> dims = List.of(new ArrayList<>(), new ArrayList<>());
        long stride = 1;
        for (long f : CudaRegisterRuleTest.factors(r, 32)) {
            dims.get(r.nextInt(2)).add(Iter.of(f, stride, "laneid"));
            stride *= f;
        }
        boolean acrossWarps = false;
        if (threads > 32) {
            String axis = scope.equals("warpgroup") ? "wid_in_wg" : "warpid";
            int d = r.nextInt(4) == 0 ? reducedDim : 1 - reducedDim;
            acrossWarps = d == reducedDim;
            dims.get(d).add(Iter.of(threads / 32, 1, axis));
        }
        List<Long> regs = new ArrayList<>();
        for (int k = 0, n = 1 + r.nextInt(3); k < n; k++) {
            regs.add(new long[] {1, 2, 3, 4}[r.nextInt(4)]);
        }
        long next = 1;
        for (long e : regs) {
            dims.get(r.nextInt(2)).add(Iter.of(e, next));
            next *= e;
        }
        for (List<Iter> d : dims) {
            Collections.shuffle(d, r);
            if (d.isEmpty()) {
                d.add(Iter.of(1, 0));
            }
        }
        long[] shape = {product(dims.get(0)), product(dims.get(1))};
        List<Iter> shard = new ArrayList<>(dims.get(0));
        shard.addAll(dims.get(1));
        Layout srcLayout = Layout.of(shard, List.of(), Map.of());
        List<Iter> kept = new ArrayList<>();
        long slot = 1;
        List<Iter> keptIters = new ArrayList<>(dims.get(1 - reducedDim));
        Collections.reverse(keptIters);
        for (Iter it : keptIters) {
            if (it.axis().equals(Axis.M)) {
                kept.add(0, Iter.of(it.extent(), slot));
                slot *= it.extent();
            } else {
                kept.add(0, it);
            }
        }
        List<Iter> replica = new ArrayList<>();
        for (Iter it : dims.get(reducedDim)) {
            if (!it.axis().equals(Axis.M) && it.extent() > 1 && r.nextInt(3) != 0) {
                replica.add(it);
            }
        }
        long keptExtent = shape[1 - reducedDim];
        Operand src = new Operand("src0", "R", "float32", shape, new long[2], shape, srcLayout);
        Operand dst = new Operand("dst", "D", "float32", new long[] {keptExtent}, new long[1],
                new long[] {keptExtent}, Layout.of(kept, replica, Map.of()));
        return new Case(dst, src, new long[] {reducedDim}, scope, threads, acrossWarps);
    }

    static long product(List<Iter> iters) {
        return iters.stream().mapToLong(Iter::extent).reduce(1, (a, b) -> a * b);
    }

    static Request call(Case c, String op, boolean accum) {
        String json = CudaRegisterRuleTest.request(op, c.scope(), c.threads(), List.of(c.dst(), c.src()),
                new TreeMap<>(Map.of("dst", "local", "src0", "local")));
        json = json.replace("\"params\":{", "\"params\":{\"axes\":" + Arrays.toString(c.axes()) + ",\"accum\":"
                + accum + ",");
        return Request.fromJson(json, List.of(c.dst().layout(), c.src().layout()));
    }

    @Test
    void butterflyPlanLeavesEveryOutputSlotWithItsWholeSlice() {
        int[] counts = new int[3]; // accepted, with shuffles, declined across warps
        Property.forAll("cuda shuffle reduce = layout maps", CASES, r -> {
            Case c = randomCase(r);
            Decision d = CudaDispatch.decide("axe4j-cuda-shuffle-reduce", call(c, "sum", false));
            if (c.acrossWarps()) {
                assertFalse(d.accepted(), "reduced warps accepted: " + d.planJson());
                assertTrue(d.reason().contains("combining warps needs shared memory"), d.reason());
                counts[2]++;
                return;
            }
            assertTrue(d.accepted(), d.reason());
            counts[0]++;
            if (!((List<?>) d.planJson().get("masks")).isEmpty()) {
                counts[1]++;
            }
            check(d.planJson(), c);
        });
        assertTrue(counts[0] > CASES / 2, "accepted " + Arrays.toString(counts));
        assertTrue(counts[1] > CASES / 3, "shuffled " + Arrays.toString(counts));
        assertTrue(counts[2] > CASES / 50, "across warps " + Arrays.toString(counts));
    }

    @SuppressWarnings("unchecked")
    static void check(Map<String, Object> plan, Case c) {
        List<Map<String, Object>> loops = (List<Map<String, Object>>) plan.get("loops");
        List<Map<String, Object>> kept = loops.stream().filter(l -> !(Boolean) l.get("reduces")).toList();
        List<Map<String, Object>> folded = loops.stream().filter(l -> (Boolean) l.get("reduces")).toList();
        Map<String, Map<String, Object>> access = (Map<String, Map<String, Object>>) plan.get("access");
        assertTrue(((List<?>) plan.get("guards")).isEmpty());
        // which source element (flat index) each (thread, slot) holds
        Map<String, Long> srcAt = new HashMap<>();
        Shape srcShape = Shape.of(c.src().shape());
        for (long x = 0; x < srcShape.size(); x++) {
            for (Point p : c.src().layout().apply(x)) {
                srcAt.put(CudaRegisterRuleTest.thread(p) + ":" + p.get(Axis.M), x);
            }
        }
        long outputs = kept.stream().mapToLong(l -> (Long) l.get("extent")).reduce(1, (a, b) -> a * b);
        // value[o][t]: multiset (element -> count) of output o on thread t
        List<List<Map<Long, Integer>>> value = new ArrayList<>();
        List<long[]> dstSlots = new ArrayList<>();
        for (long o = 0; o < outputs; o++) {
            long[] kc = counters(kept, o);
            long srcBase = (Long) access.get("src0").get("base") + dot(kept, kc, "src0");
            long dstSlot = (Long) access.get("dst").get("base") + dot(kept, kc, "dst");
            dstSlots.add(new long[] {dstSlot});
            List<Map<Long, Integer>> perThread = new ArrayList<>();
            long terms = folded.stream().mapToLong(l -> (Long) l.get("extent")).reduce(1, (a, b) -> a * b);
            for (long t = 0; t < c.threads(); t++) {
                Map<Long, Integer> acc = new TreeMap<>();
                for (long f = 0; f < terms; f++) {
                    long slot = srcBase + dot(folded, counters(folded, f), "src0");
                    Long x = srcAt.get(t + ":" + slot);
                    assertNotNull(x, "thread " + t + " reads slot " + slot + " that holds no element");
                    acc.merge(x, 1, Integer::sum);
                }
                perThread.add(acc);
            }
            for (Object m : (List<?>) plan.get("masks")) {
                long mask = (Long) m;
                List<Map<Long, Integer>> next = new ArrayList<>();
                for (long t = 0; t < c.threads(); t++) {
                    Map<Long, Integer> sum = new TreeMap<>(perThread.get((int) t));
                    perThread.get((int) (t ^ mask)).forEach((k, v) -> sum.merge(k, v, Integer::sum));
                    next.add(sum);
                }
                perThread = next;
            }
            value.add(perThread);
        }
        // expected: every (thread, slot) of each destination element holds its slice once
        Map<String, Map<Long, Integer>> got = new HashMap<>();
        for (int o = 0; o < outputs; o++) {
            for (long t = 0; t < c.threads(); t++) {
                String key = t + ":" + dstSlots.get(o)[0];
                assertFalse(got.containsKey(key), "stored twice: " + key);
                got.put(key, value.get(o).get((int) t));
            }
        }
        int reduced = (int) c.axes()[0];
        Shape dstShape = Shape.of(c.dst().shape());
        for (long y = 0; y < dstShape.size(); y++) {
            Map<Long, Integer> slice = new TreeMap<>();
            for (long i = 0; i < c.src().shape()[reduced]; i++) {
                long[] coord = reduced == 1 ? new long[] {y, i} : new long[] {i, y};
                slice.put(srcShape.flatten(coord), 1);
            }
            for (Point p : c.dst().layout().apply(y)) {
                String key = CudaRegisterRuleTest.thread(p) + ":" + p.get(Axis.M);
                assertEquals(slice, got.get(key), "destination element " + y + " at " + key + ", plan " + plan);
            }
        }
    }

    @SuppressWarnings("unchecked")
    static long dot(List<Map<String, Object>> loops, long[] counters, String role) {
        long a = 0;
        for (int l = 0; l < loops.size(); l++) {
            a += counters[l] * ((Map<String, Long>) loops.get(l).get("strides")).get(role);
        }
        return a;
    }

    static long[] counters(List<Map<String, Object>> loops, long flat) {
        long[] out = new long[loops.size()];
        for (int l = loops.size() - 1; l >= 0; l--) {
            long e = (Long) loops.get(l).get("extent");
            out[l] = flat % e;
            flat /= e;
        }
        return out;
    }

    // ---- declines ------------------------------------------------------------------------------------------

    static Decision decide(String src, long[] shape, String dst, long[] dstShape, long axis, String scope,
            long threads) {
        Case c = new Case(new Operand("dst", "D", "float32", dstShape, new long[dstShape.length], dstShape,
                Layout.parse(dst)), new Operand("src0", "R", "float32", shape, new long[shape.length], shape,
                Layout.parse(src)), new long[] {axis}, scope, threads, false);
        return CudaDispatch.decide("axe4j-cuda-shuffle-reduce", call(c, "max", false));
    }

    @Test
    void declinesNameWhyShufflesCannotReduce() {
        CudaRegisterRuleTest.declined(decide("S[(8,4,4):(4@laneid,1@warpid,1@laneid)]", new long[] {8, 16},
                "S[8:4@laneid] + R[4:1@laneid] + R[4:1@warpid]", new long[] {8}, 1, "cta", 128),
                "lies on warps (thread digit (t / 32) mod 4, warpid); combining warps needs shared memory");
        CudaRegisterRuleTest.declined(decide("S[(4,96):(1,1@tx)]", new long[] {4, 96}, "S[4:1] + R[96:1@tx]",
                new long[] {4}, 1, "cta", 96), "not a power-of-two lane split");
        CudaRegisterRuleTest.declined(decide("S[(4,64):(1,1@tx)]", new long[] {4, 64}, "S[4:1] + R[64:1@tx]",
                new long[] {4}, 1, "cta", 64), "spans lanes and warps");
        CudaRegisterRuleTest.declined(decide("S[(8,4,4):(4@laneid,1@laneid,1)]", new long[] {8, 16},
                "S[8:1@laneid] + R[4:8@laneid]", new long[] {8}, 1, "warp", 32),
                "kept dim 0 of the source is held on other threads than the destination's");
        CudaRegisterRuleTest.declined(decide("S[(8,4,4):(4@laneid,1@laneid,1)]", new long[] {8, 16},
                "S[8:4@laneid] + R[4:1@laneid] + R[2:1]", new long[] {8}, 1, "warp", 32),
                "one element in several slots");
        Decision ok = decide("S[(8,4,4):(4@laneid,1@laneid,1)]", new long[] {8, 16}, "S[8:4@laneid] + R[4:1@laneid]",
                new long[] {8}, 1, "warp", 32);
        assertTrue(ok.accepted(), ok.reason());
        assertEquals(List.of(1L, 2L), ok.planJson().get("masks"));
    }
}
