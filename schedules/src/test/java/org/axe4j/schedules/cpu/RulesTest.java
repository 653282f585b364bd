package org.axe4j.schedules.cpu;

import static org.axe4j.schedules.RequestText.operand;
import static org.axe4j.schedules.RequestText.request;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.axe4j.layout.Layout;
import org.axe4j.schedules.Decision;
import org.axe4j.schedules.LoopNest;
import org.axe4j.schedules.Request;
import org.junit.jupiter.api.Test;

/** Rule decisions on hand-made requests: what is accepted, the plan's loop kinds, and the reasons for declining. */
class RulesTest {
    @Test
    void copyOfRowMajorIsVectorizedAndLargeCopiesParallel() {
        Request call = Request.fromJson(request("copy", "thread", operand("dst", 1024, 1040) + "," + operand("src0", 1024, 1040), ""),
                List.of(Layout.parse("S[(1024,1040):(1040,1)]"), Layout.parse("S[(1024,1040):(1040,1)]")));
        Decision d = CpuDispatch.decide("axe4j-cpu-vector", call);
        assertTrue(d.accepted(), d.reason());
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> loops = (List<Map<String, Object>>) d.planJson().get("loops");
        assertEquals("parallel", loops.get(0).get("kind"));
        assertEquals("vectorized", loops.get(loops.size() - 1).get("kind"));
        assertEquals(16L, loops.get(loops.size() - 1).get("extent"));
    }

    @Test
    void warpScopeAndOtherTargetsAreDeclined() {
        String ops = operand("dst", 4, 4) + "," + operand("src0", 4, 4);
        List<Layout> ls = List.of(Layout.parse("S[(4,4):(4,1)]"), Layout.parse("S[(4,4):(4,1)]"));
        Decision warp = CpuDispatch.decide("axe4j-cpu-vector", Request.fromJson(request("copy", "warp", ops, ""), ls));
        assertFalse(warp.accepted());
        assertTrue(warp.reason().contains("execution scope warp"), warp.reason());
        Decision cuda = CpuDispatch.decide("axe4j-cpu-vector",
                Request.fromJson(request("copy", "thread", ops, "").replace("\"llvm\"", "\"cuda\""), ls));
        assertTrue(cuda.reason().contains("target kind cuda is not llvm"), cuda.reason());
    }

    @Test
    void explainListsRulesByPriority() {
        Request call = Request.fromJson(request("gemm", "thread", operand("D", 8, 8) + "," + operand("A", 8, 8) + ","
                + operand("B", 8, 8) + "," + operand("C", 8, 8), "\"trans_a\":false,\"trans_b\":false"),
                List.of(Layout.parse("S[(8,8):(1,8)]"), Layout.parse("S[(8,8):(8,1)]"), Layout.parse("S[(8,8):(8,1)]"),
                        Layout.parse("S[(8,8):(8,1)]")));
        List<Decision> all = CpuDispatch.explain(call);
        assertEquals(List.of("axe4j-cpu-gemm-blocked", "axe4j-cpu-gemm-naive"),
                all.stream().map(Decision::variant).toList());
        assertEquals("m", all.get(0).planJson().get("vector_dim"));
    }

    @Test
    void destinationWrittenTwiceIsDeclined() {
        Request call = Request.fromJson(request("copy", "thread", operand("dst", 4, 4) + "," + operand("src0", 4, 4), ""),
                List.of(Layout.parse("S[(4,4):(0,1)]"), Layout.parse("S[(4,4):(4,1)]")));
        Decision d = CpuDispatch.decide("axe4j-cpu-vector", call);
        assertFalse(d.accepted());
        assertTrue(d.reason().contains("maps 4 region elements to one address"), d.reason());
    }

    @Test
    void contiguousDimsAreJoinedIntoOneVectorizedLoop() {
        // 6x8 row-major on both sides walks like one loop of 48: split as 3 x 16 lanes, not 6 x 8.
        Request call = Request.fromJson(request("copy", "thread", operand("dst", 6, 8) + "," + operand("src0", 6, 8), ""),
                List.of(Layout.parse("S[(6,8):(8,1)]"), Layout.parse("S[(6,8):(8,1)]")));
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> loops = (List<Map<String, Object>>) CpuDispatch.decide("axe4j-cpu-vector", call).planJson()
                .get("loops");
        assertEquals(2, loops.size());
        assertEquals(3L, loops.get(0).get("extent"));
        assertEquals(16L, loops.get(1).get("extent"));
        assertEquals("vectorized", loops.get(1).get("kind"));
        Request transposing = Request.fromJson(request("copy", "thread", operand("dst", 7, 13) + "," + operand("src0", 7, 13), ""),
                List.of(Layout.parse("S[(7,13):(13,1)]"), Layout.parse("S[(7,13):(1,7)]")));
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> two = (List<Map<String, Object>>) CpuDispatch.decide("axe4j-cpu-vector", transposing)
                .planJson().get("loops");
        assertEquals(2, two.size(), "a transposing copy keeps both loops");
    }

    @Test
    void coalescingKeepsEveryOperandsAddresses() {
        org.axe4j.layout.Property.forAll("coalesce", r -> {
            int n = 1 + r.nextInt(4);
            List<LoopNest.Loop> loops = new java.util.ArrayList<>();
            for (int k = 0; k < n; k++) {
                long e = 1 + r.nextInt(5);
                long[] s = {r.nextInt(3) == 0 ? 0 : 1 + r.nextInt(30), 1 + r.nextInt(30)};
                loops.add(new LoopNest.Loop(e, "serial", false, s));
            }
            if (n >= 2 && r.nextBoolean()) { // make loop 0 continue loop 1 for both operands
                LoopNest.Loop inner = loops.get(1);
                loops.set(0, new LoopNest.Loop(loops.get(0).extent(), "serial", false,
                        new long[] {inner.extent() * inner.strides()[0], inner.extent() * inner.strides()[1]}));
            }
            List<LoopNest.Loop> joined = LoopNest.coalesce(loops);
            assertEquals(addresses(loops), addresses(joined));
        });
    }

    /** The sorted multiset of (dst, src) address pairs a nest visits. */
    static List<String> addresses(List<LoopNest.Loop> loops) {
        List<String> out = new java.util.ArrayList<>();
        long total = 1;
        for (LoopNest.Loop l : loops) {
            total *= l.extent();
        }
        for (long i = 0; i < total; i++) {
            long rest = i;
            long a = 0;
            long b = 0;
            for (LoopNest.Loop l : loops) {
                long c = rest % l.extent();
                rest /= l.extent();
                a += c * l.strides()[0];
                b += c * l.strides()[1];
            }
            out.add(a + "," + b);
        }
        java.util.Collections.sort(out);
        return out;
    }

    @Test
    void gemmTileAndBlocksFollowTheAccumulatorLayout() {
        String ops = operand("D", 8, 16) + "," + operand("A", 8, 4) + "," + operand("B", 16, 4) + "," + operand("C", 8, 16);
        Request call = Request.fromJson(request("gemm", "thread", ops, "\"trans_a\":false,\"trans_b\":true"),
                List.of(Layout.parse("S[(8,16):(16,1)]"), Layout.parse("S[(8,4):(4,1)]"), Layout.parse("S[(16,4):(4,1)]"),
                        Layout.parse("S[(8,16):(16,1)]")));
        Decision d = CpuDispatch.decide("axe4j-cpu-gemm-blocked", call);
        assertTrue(d.accepted(), d.reason());
        assertEquals("n", d.planJson().get("vector_dim"));
        assertEquals(Map.of("u", 6L, "v", 16L), d.planJson().get("tile"));
        assertEquals(Map.of("k", 4L, "u", 12L), d.planJson().get("blocks"));
        assertTrue(d.planJson().get("notes").toString().contains("B packed per K block"), d.planJson().toString());
    }

    @Test
    void aCpuIterBecomesTheParallelLoopAndIsRefusedOnAReduction() {
        String ops = operand("dst", 8, 8) + "," + operand("src0", 8, 8);
        Request call = Request.fromJson(request("copy", "thread", ops, ""),
                List.of(Layout.parse("S[(8,8):(8,1)]"), Layout.parse("S[(2,4,8):(1@cpu,8,1)]")));
        Decision d = CpuDispatch.decide("axe4j-cpu-vector", call);
        assertTrue(d.accepted(), d.reason());
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> loops = (List<Map<String, Object>>) d.planJson().get("loops");
        assertEquals("parallel", loops.get(0).get("kind"));
        assertEquals(2L, loops.get(0).get("extent"));
        assertFalse(CpuDispatch.decide("axe4j-cpu-scalar", call).accepted());

        String reduce = "{\"role\":\"dst\",\"name\":\"d\",\"dtype\":\"float32\",\"shape\":[8],\"start\":[0],"
                + "\"extent\":[8]}," + operand("src0", 8, 8);
        Request sum = Request.fromJson(request("sum", "thread", reduce, "\"axes\":[1]"),
                List.of(Layout.parse("S[8:1]"), Layout.parse("S[(8,2,4):(4,1@cpu,1)]")));
        Decision declined = CpuDispatch.decide("axe4j-cpu-reduce", sum);
        assertFalse(declined.accepted());
        assertTrue(declined.reason().contains("spreads a reduced digit over workers"), declined.reason());
    }

    private static Request raggedGemm(String extents) {
        String ops = operand("D", 64, 32) + "," + operand("A", 64, 16) + "," + operand("B", 32, 16) + ","
                + operand("C", 64, 32);
        return Request.fromJson(request("gemm", "thread", ops, "\"trans_a\":false,\"trans_b\":true,"
                + "\"run_time_extent\":{" + extents + "}"), List.of(Layout.parse("S[(64,32):(32,1)]"),
                Layout.parse("S[(64,16):(16,1)]"), Layout.parse("S[(32,16):(16,1)]"), Layout.parse("S[(64,32):(32,1)]")));
    }

    @Test
    void aRunTimeRowCountIsTakenByTheBlockedGemmOnItsNonVectorDimOnly() {
        Decision rows = CpuDispatch.decide("axe4j-cpu-gemm-blocked", raggedGemm("\"D\":[0],\"A\":[0],\"C\":[0]"));
        assertTrue(rows.accepted(), rows.reason());
        assertEquals("m", rows.planJson().get("run_time_extent"));
        assertEquals("n", rows.planJson().get("vector_dim"));

        Decision naive = CpuDispatch.decide("axe4j-cpu-gemm-naive", raggedGemm("\"D\":[0],\"A\":[0],\"C\":[0]"));
        assertFalse(naive.accepted());
        assertTrue(naive.reason().contains("run-time extent in dim 0 (at most 64)"), naive.reason());

        Decision onVectorDim = CpuDispatch.decide("axe4j-cpu-gemm-blocked",
                raggedGemm("\"D\":[1],\"B\":[0],\"C\":[1]"));
        assertFalse(onVectorDim.accepted());
        assertTrue(onVectorDim.reason().contains("non-vector dim m"), onVectorDim.reason());

        Decision onlyD = CpuDispatch.decide("axe4j-cpu-gemm-blocked", raggedGemm("\"D\":[0],\"C\":[0]"));
        assertFalse(onlyD.accepted(), "A's rows must be ragged with D's");
        Decision onK = CpuDispatch.decide("axe4j-cpu-gemm-blocked",
                raggedGemm("\"D\":[0],\"A\":[0,1],\"C\":[0]"));
        assertFalse(onK.accepted(), "a run-time K is not taken");
    }

    @Test
    void elementwiseRulesDeclineARunTimeExtent() {
        String ops = operand("dst", 8, 8) + "," + operand("src0", 8, 8);
        Request call = Request.fromJson(request("copy", "thread", ops, "\"run_time_extent\":{\"src0\":[0]}"),
                List.of(Layout.parse("S[(8,8):(8,1)]"), Layout.parse("S[(8,8):(8,1)]")));
        for (Decision d : CpuDispatch.explain(call)) {
            assertFalse(d.accepted(), d.variant());
            assertTrue(d.reason().contains("needs constant extents"), d.reason());
        }
    }

    @Test
    void aGemmAskedForNoParallelRegionKeepsItsUBlocksSerial() {
        String ops = operand("D", 512, 512) + "," + operand("A", 512, 512) + "," + operand("B", 512, 512) + ","
                + operand("C", 512, 512);
        List<Layout> ls = List.of(Layout.parse("S[(512,512):(512,1)]"), Layout.parse("S[(512,512):(512,1)]"),
                Layout.parse("S[(512,512):(512,1)]"), Layout.parse("S[(512,512):(512,1)]"));
        Decision free = CpuDispatch.decide("axe4j-cpu-gemm-blocked",
                Request.fromJson(request("gemm", "thread", ops, "\"trans_a\":false,\"trans_b\":false"), ls));
        assertEquals(true, free.planJson().get("parallel"));
        Decision inside = CpuDispatch.decide("axe4j-cpu-gemm-blocked", Request.fromJson(request("gemm", "thread", ops,
                "\"trans_a\":false,\"trans_b\":false,\"parallel\":false"), ls));
        assertTrue(inside.accepted(), inside.reason());
        assertEquals(false, inside.planJson().get("parallel"));
        assertTrue(inside.planJson().get("notes").toString().contains("u blocks serial"), inside.planJson().toString());
    }

    @Test
    void sixteenBitInputsAreWidenedToTheFloat32AccumulatorAndExplainSaysHow() {
        List<Layout> ls = List.of(Layout.parse("S[(64,64):(64,1)]"), Layout.parse("S[(64,64):(64,1)]"),
                Layout.parse("S[(64,64):(64,1)]"), Layout.parse("S[(64,64):(64,1)]"));
        String ops = operand("D", 64, 64) + "," + operand("A", 64, 64).replace("float32", "float16") + ","
                + operand("B", 64, 64).replace("float32", "bfloat16") + "," + operand("C", 64, 64);
        String plain = "\"trans_a\":false,\"trans_b\":false,\"cpu\":{\"isa\":\"sse\",\"vector_bits\":128,"
                + "\"vector_registers\":16";
        Decision noF16c = CpuDispatch.decide("axe4j-cpu-gemm-blocked",
                Request.fromJson(request("gemm", "thread", ops, plain + ",\"f16c\":false}"), ls));
        assertTrue(noF16c.accepted(), noF16c.reason());
        String notes = noF16c.planJson().get("notes").toString();
        assertTrue(notes.contains("A float16 -> float32 by a call to __extendhfsf2 per element"), notes);
        assertTrue(notes.contains("B bfloat16 -> float32 by moving each element's 16 bits to the top of a float32"),
                notes);
        assertTrue(notes.contains("no 16-bit FMA or dot product"), notes);
        Decision f16c = CpuDispatch.decide("axe4j-cpu-gemm-blocked",
                Request.fromJson(request("gemm", "thread", ops, plain + ",\"f16c\":true}"), ls));
        assertTrue(f16c.planJson().get("notes").toString().contains("A float16 -> float32 by F16C vcvtph2ps"),
                f16c.planJson().toString());
        Decision fp32 = CpuDispatch.decide("axe4j-cpu-gemm-blocked", Request.fromJson(request("gemm", "thread",
                operand("D", 64, 64) + "," + operand("A", 64, 64) + "," + operand("B", 64, 64) + ","
                        + operand("C", 64, 64), "\"trans_a\":false,\"trans_b\":false"), ls));
        assertFalse(fp32.planJson().get("notes").toString().contains("-> float32 by"), fp32.planJson().toString());
    }
}
