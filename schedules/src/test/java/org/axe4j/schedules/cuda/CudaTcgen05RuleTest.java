package org.axe4j.schedules.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import java.util.List;
import java.util.Map;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Swizzle;
import org.axe4j.schedules.Decision;
import org.axe4j.schedules.Operand;
import org.axe4j.schedules.Request;
import org.junit.jupiter.api.Test;

/** The tcgen05 rule: accumulator columns from the tensor-memory layout, blocks of N, and its declines. */
class CudaTcgen05RuleTest {

    @Test
    @SuppressWarnings("unchecked")
    void columnsFollowTheAccumulatorRegionInEveryNBlock() {
        for (long[] c : new long[][] {{0, 512, 512}, {64, 128, 512}, {256, 192, 448}}) {
            long start = c[0];
            long n = c[1];
            long width = c[2];
            Layout tmem = Layout.parse("S[(128," + width + "):(1@TLane,1@TCol)]");
            Decision d = CudaDispatch.TABLE.decide("axe4j-cuda-tcgen05", request("thread", 1, tmem, width, start, n));
            assertTrue(d.accepted(), d.reason());
            List<Map<String, Object>> tiles = (List<Map<String, Object>>) d.planJson().get("tiles");
            long block = n % 256 == 0 ? 256 : n % 192 == 0 ? 192 : 128;
            assertEquals(n / block, tiles.size(), d.planJson().toString());
            for (int j = 0; j < tiles.size(); j++) {
                assertEquals(start + j * block, tiles.get(j).get("column"));
            }
            assertEquals(CudaTcgen05Rule.instructionDescriptor(128, block, "float16"), d.planJson().get("idesc"));
        }
    }

    @Test
    void instructionDescriptorFieldsSitWhereThePtxTablePutsThem() {
        long idesc = CudaTcgen05Rule.instructionDescriptor(128, 256, "bfloat16");
        assertEquals(1, (idesc >> 4) & 0x3);        // D format f32
        assertEquals(1, (idesc >> 7) & 0x7);        // A bf16
        assertEquals(1, (idesc >> 10) & 0x7);       // B bf16
        assertEquals(0, (idesc >> 15) & 0x3);       // K-major A and B
        assertEquals(256 >> 3, (idesc >> 17) & 0x3F);
        assertEquals(128 >> 4, (idesc >> 24) & 0x1F);
    }

    @Test
    void declinesNameTheReason() {
        Layout interleaved = Layout.parse("S[(2,64,256):(1@TLane,2@TLane,1@TCol)]"); // row 64h + l on lane h + 2l
        Decision d = CudaDispatch.TABLE.decide("axe4j-cuda-tcgen05", request("thread", 1, interleaved, 256, 0, 128));
        assertFalse(d.accepted());
        assertTrue(d.reason().contains("the M = 128 data path puts it on TLane"), d.reason());
        Layout datapath = Layout.parse("S[(128,128):(1@TLane,1@TCol)]");
        d = CudaDispatch.TABLE.decide("axe4j-cuda-tcgen05", request("warpgroup", 128, datapath, 128, 0, 128));
        assertFalse(d.accepted());
        assertTrue(d.reason().contains("tcgen05.mma is issued by one thread"), d.reason());
    }

    @Test
    void aCtaPairIssuesOneM256InstructionWithHalfOfBInEachCta() {
        Layout tmem = Layout.parse("S[(128,128):(1@TLane,1@TCol)]");
        Request pair = request("thread", 1, tmem, 128, 0, 128, 2);
        Decision d = CudaDispatch.TABLE.decide("axe4j-cuda-tcgen05", pair);
        assertTrue(d.accepted(), d.reason());
        assertEquals("tcgen05.mma.cta_group::2.kind::f16", d.planJson().get("instruction"));
        long idesc = (Long) d.planJson().get("idesc");
        assertEquals(256 >> 4, (idesc >> 24) & 0x1F);   // M = 256 over the pair
        assertEquals(128 >> 3, (idesc >> 17) & 0x3F);   // N = 128: 64 rows of B from each CTA
        assertTrue(d.planJson().get("notes").toString().contains("cta_group::2 over the CTA pair"), d.planJson().toString());
        // B with all N rows in one CTA does not fit cta_group=2; nor does cta_group 1 with half of B
        d = CudaDispatch.TABLE.decide("axe4j-cuda-tcgen05", request("thread", 1, tmem, 128, 0, 128, 2, 128));
        assertFalse(d.accepted());
        assertTrue(d.reason().contains("cta_group=2: B holds this CTA's N/2 rows"), d.reason());
        d = CudaDispatch.TABLE.decide("axe4j-cuda-tcgen05", request("thread", 1, tmem, 128, 0, 128, 1, 64));
        assertFalse(d.accepted());
        assertTrue(d.reason().contains("shapes do not agree") && !d.reason().contains("cta_group=2"), d.reason());
    }

    private static Request request(String scope, long threads, Layout tmem, long tmemCols, long start, long n) {
        return request(scope, threads, tmem, tmemCols, start, n, 1, n);
    }

    private static Request request(String scope, long threads, Layout tmem, long tmemCols, long start, long n,
            long group) {
        return request(scope, threads, tmem, tmemCols, start, n, group, n / group);
    }

    /** C (128 x n) += A (128 x 64) B (bRows x 64)^T with config cta_group = group. */
    private static Request request(String scope, long threads, Layout tmem, long tmemCols, long start, long n,
            long group, long bRows) {
        long k = 64;
        Layout a = Layout.parse("S[(128,64):(64,1)]");
        Layout b = Layout.parse("S[(" + bRows + ",64):(64,1)]");
        List<Operand> ops = List.of(
                new Operand("C", "C", "float32", new long[] {128, tmemCols}, new long[] {0, start},
                        new long[] {128, n}, tmem),
                new Operand("A", "A", "float16", new long[] {128, k}, new long[2], new long[] {128, k}, a),
                new Operand("B", "B", "float16", new long[] {bRows, k}, new long[2], new long[] {bRows, k}, b));
        JsonObject params = new JsonObject();
        if (group != 1) {
            com.google.gson.JsonArray config = new com.google.gson.JsonArray();
            config.add("cta_group");
            params.add("config", config);
            params.addProperty("cta_group", group);
        }
        params.addProperty("threads", threads);
        params.addProperty("arch", "sm_100a");
        JsonObject storage = new JsonObject();
        storage.addProperty("C", "tmem");
        storage.addProperty("A", "shared");
        storage.addProperty("B", "shared");
        params.add("storage", storage);
        JsonObject align = new JsonObject();
        align.addProperty("A", 1024);
        align.addProperty("B", 1024);
        params.add("align", align);
        Swizzle z = new Swizzle(3, 3, 3);
        return new Request("gemm_async", "cuda", scope, ops, params, Map.of("A", z, "B", z));
    }
}
