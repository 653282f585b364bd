package org.axe4j.schedules.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Property;
import org.axe4j.layout.Shape;
import org.axe4j.schedules.Decision;
import org.axe4j.schedules.Operand;
import org.axe4j.schedules.Request;
import org.junit.jupiter.api.Test;

/**
 * The CUDA reduction plan, run the way the emitter runs it, writes each destination element once, from the source
 * addresses of exactly the region elements that reduce into it.
 */
class CudaReduceRuleTest {

    @Test
    void everyOutputFoldsExactlyItsSlice() {
        checkPlans("axe4j-cuda-reduce", new long[] {1, 32, 128}, new long[] {4, 8, 16});
    }

    /** The shuffle tree: the G threads of an output fold disjoint terms whose union is the output's slice. */
    @Test
    void everyTreeGroupFoldsExactlyItsSlice() {
        checkPlans("axe4j-cuda-tree-reduce", new long[] {32, 64, 128, 256}, new long[] {4, 8, 16, 64, 256});
    }

    @Test
    void treeDeclinesPartialWarpsAndFullThreads() {
        Layout src = Layout.parse("S[(4,8):(8,1)]");
        Layout dst = Layout.parse("S[4:1]");
        Operand d = new Operand("dst", "r", "float32", new long[] {4}, new long[1], new long[] {4}, dst);
        Operand s = new Operand("src0", "X", "float32", new long[] {4, 8}, new long[2], new long[] {4, 8}, src);
        for (long threads : new long[] {16, 4}) {
            String json = CudaRulesTest.request("sum", "cta", threads, List.of(d, s))
                    .replace("\"params\":{", "\"params\":{\"axes\":[1],\"accum\":false,");
            Decision decision = CudaDispatch.TABLE.decide("axe4j-cuda-tree-reduce",
                    Request.fromJson(json, List.of(dst, src)));
            assertTrue(!decision.accepted() && decision.reason().contains("whole number of warps"),
                    decision.reason());
        }
        Layout wide = Layout.parse("S[(64,2):(2,1)]");
        Operand d2 = new Operand("dst", "r", "float32", new long[] {64}, new long[1], new long[] {64},
                Layout.parse("S[64:1]"));
        Operand s2 = new Operand("src0", "X", "float32", new long[] {64, 2}, new long[2], new long[] {64, 2}, wide);
        String json = CudaRulesTest.request("sum", "cta", 64, List.of(d2, s2))
                .replace("\"params\":{", "\"params\":{\"axes\":[1],\"accum\":false,");
        Decision decision = CudaDispatch.TABLE.decide("axe4j-cuda-tree-reduce",
                Request.fromJson(json, List.of(d2.layout(), wide)));
        assertTrue(!decision.accepted() && decision.reason().contains("no two threads share an output"),
                decision.reason());
    }

    private static void checkPlans(String variant, long[] threadChoices, long[] extentChoices) {
        boolean tree = variant.contains("tree");
        int[] counts = new int[2];
        Property.forAll(variant + " plan = layout maps", tree ? 3000 : Property.CASES, r -> {
            long[] shape = {new long[] {4, 6, 8, 12}[r.nextInt(4)], extentChoices[r.nextInt(extentChoices.length)]};
            if (r.nextBoolean()) {
                shape = new long[] {shape[1], shape[0]};
            }
            int axis = r.nextInt(2);
            long[] kept = {shape[1 - axis]};
            Layout srcLayout = CudaRulesTest.randomLayout(r, shape);
            Layout dstLayout = CudaRulesTest.randomLayout(r, kept);
            if (!dstLayout.replica().isEmpty()) {
                dstLayout = Layout.parse("S[" + kept[0] + ":1]");
            }
            Operand dst = new Operand("dst", "r", "float32", kept, new long[1], kept, dstLayout);
            Operand src = new Operand("src0", "X", "float32", shape, new long[2], shape, srcLayout);
            long threads = threadChoices[r.nextInt(threadChoices.length)];
            String json = CudaRulesTest.request("sum", threads == 1 ? "thread" : "cta", threads, List.of(dst, src))
                    .replace("\"params\":{", "\"params\":{\"axes\":[" + axis + "],\"accum\":false,");
            Decision d = CudaDispatch.TABLE.decide(variant, Request.fromJson(json,
                    List.of(dstLayout, srcLayout)));
            if (!d.accepted()) {
                counts[1]++;
                assertTrue(d.reason().contains("crosses a digit")
                        || tree && kept[0] * 2 > threads && d.reason().contains("no two threads share an output"),
                        d.reason());
                return;
            }
            counts[0]++;
            Map<Long, List<Long>> expected = new TreeMap<>();
            Shape s = Shape.of(shape);
            for (long i = 0; i < shape[0]; i++) {
                for (long j = 0; j < shape[1]; j++) {
                    long out = dstLayout.apply(Shape.of(kept), new long[] {axis == 0 ? j : i}).iterator().next()
                            .get(Axis.M);
                    long in = srcLayout.apply(s, new long[] {i, j}).iterator().next().get(Axis.M);
                    expected.computeIfAbsent(out, k -> new ArrayList<>()).add(in);
                }
            }
            expected.values().forEach(Collections::sort);
            assertEquals(expected, simulate(d.planJson()), d.planJson().toString());
        });
        assertTrue(counts[0] > (tree ? 3000 / 4 : Property.CASES / 2), "accepted " + counts[0]);
    }

    @SuppressWarnings("unchecked")
    private static Map<Long, List<Long>> simulate(Map<String, Object> plan) {
        List<Map<String, Object>> kept = (List<Map<String, Object>>) plan.get("kept");
        List<Map<String, Object>> folded = (List<Map<String, Object>>) plan.get("folded");
        Map<String, Map<String, Object>> access = (Map<String, Map<String, Object>>) plan.get("access");
        long threads = (Long) plan.get("threads");
        long outputs = (Long) plan.get("outputs");
        long rounds = (Long) plan.get("rounds");
        long group = plan.containsKey("group") ? (Long) plan.get("group") : 1;
        assertTrue(group == 1 || group >= 2 && (group & (group - 1)) == 0 && threads % 32 == 0
                && threads % group == 0, "group " + group);
        long terms = folded.stream().mapToLong(l -> (Long) l.get("extent")).reduce(1, (a, b) -> a * b);
        Map<Long, List<Long>> out = new TreeMap<>();
        for (long f = 0; f < rounds; f++) {
            for (long t = 0; t < threads; t += group) {
                long o = f * (threads / group) + t / group;
                if (o >= outputs) {
                    continue;
                }
                long[] base = at(kept, o, (Long) access.get("dst").get("base"), (Long) access.get("src0").get("base"));
                List<Long> sources = new ArrayList<>();
                for (long p = 0; p < group; p++) { // the group's threads t .. t + G - 1: in one warp or whole warps
                    assertTrue(group <= 32 ? t / 32 == (t + group - 1) / 32 : t % 32 == 0 && group % 32 == 0,
                            "group of " + group + " at thread " + t + " is neither inside a warp nor whole warps");
                    for (long k = p; k < terms; k += group) {
                        sources.add(at(folded, k, 0, base[1])[1]);
                    }
                }
                Collections.sort(sources);
                assertTrue(out.put(base[0], sources) == null, "two outputs write " + base[0]);
            }
        }
        return out;
    }

    /** (dst, src0) addresses of flat index {@code flat} of a row-major walk of {@code loops}. */
    @SuppressWarnings("unchecked")
    private static long[] at(List<Map<String, Object>> loops, long flat, long dst, long src) {
        long below = 1;
        for (int l = loops.size() - 1; l >= 0; l--) {
            long e = (Long) loops.get(l).get("extent");
            Map<String, Long> st = (Map<String, Long>) loops.get(l).get("strides");
            long c = (flat / below) % e;
            dst += c * st.get("dst");
            src += c * st.get("src0");
            below *= e;
        }
        return new long[] {dst, src};
    }
}
