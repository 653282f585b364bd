package org.axe4j.schedules.trn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import java.util.List;
import java.util.Map;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Shape;
import org.axe4j.schedules.Decision;
import org.axe4j.schedules.Operand;
import org.axe4j.schedules.Request;
import org.junit.jupiter.api.Test;

/** The Trainium gemm rule picks the maximal nc_matmul tile from the operand layouts, or declines with the reason. */
class TrnGemmRuleTest {
    private static Operand op(String role, String dtype, long r, long c, Layout layout) {
        return new Operand(role, role.toLowerCase(), dtype, new long[] {r, c}, new long[] {0, 0}, new long[] {r, c},
                layout);
    }

    private static Decision gemm(Layout a, long[] as, Layout b, long[] bs, Layout d, long[] ds, boolean ta,
            boolean tb) {
        JsonObject params = new JsonObject();
        params.addProperty("trans_a", ta);
        params.addProperty("trans_b", tb);
        params.addProperty("alpha", 1.0);
        params.addProperty("beta", 0.0);
        JsonObject storage = new JsonObject();
        storage.addProperty("A", "trn.sbuf");
        storage.addProperty("B", "trn.sbuf");
        storage.addProperty("D", "trn.psum");
        storage.addProperty("C", "trn.psum");
        params.add("storage", storage);
        Operand dOp = op("D", "float32", ds[0], ds[1], d);
        Request call = new Request("gemm", "trn", "thread", List.of(dOp, op("A", "float16", as[0], as[1], a),
                op("B", "float16", bs[0], bs[1], b), op("C", "float32", ds[0], ds[1], d)), params);
        return TrnGemmRule.INSTANCE.decide(call);
    }

    private static Layout pf(String ann, long r, long c) {
        return TrainiumMemory.annotated(ann, Shape.of(r, c));
    }

    @SuppressWarnings("unchecked")
    private static void assertTile(Decision dec, long k, long s, long m, long steps) {
        assertTrue(dec.accepted(), dec.reason());
        Map<String, Object> tile = (Map<String, Object>) dec.planJson().get("tile");
        assertEquals(List.of(k, s, m), List.of(tile.get("k"), tile.get("stationary"), tile.get("moving")),
                dec.toJson());
        assertEquals(steps, ((Map<String, Object>) dec.planJson().get("k_loop")).get("extent"), dec.toJson());
    }

    @Test
    void squareBlockTakesTheFullInstruction() {
        // A (128 x 1024) with K on P, B (1024 x 512) with K on P, D 128 x 512 in one bank
        assertTile(gemm(pf("FP", 128, 1024), new long[] {128, 1024}, pf("PF", 1024, 512), new long[] {1024, 512},
                pf("PF", 128, 512), new long[] {128, 512}, false, false), 128, 128, 512, 8);
    }

    @Test
    void kNotAMultipleOf128ContractsOver64Partitions() {
        // K = 320 stored as 5 x 64 partitions: k = 64, five accumulation steps
        Layout a = Layout.parse("S[(128, 5, 64):(1@F, 128@F, 1@P)]");
        Layout b = Layout.parse("S[(5, 64, 256):(256@F, 1@P, 1@F)]");
        assertTile(gemm(a, new long[] {128, 320}, b, new long[] {320, 256}, pf("PF", 128, 256),
                new long[] {128, 256}, false, false), 64, 128, 256, 5);
    }

    @Test
    void smallMAndN() {
        // M = 32, N = 48: the instruction shrinks to the operands
        assertTile(gemm(pf("FP", 32, 128), new long[] {32, 128}, pf("PF", 128, 48), new long[] {128, 48},
                pf("PF", 32, 48), new long[] {32, 48}, false, false), 128, 32, 48, 1);
    }

    @Test
    void transposedOperandsUseTheirStoredOrientation() {
        // A stored as (K, M) = "PF" of (256, 128), B stored as (N, K) = "FP" of (512, 256)
        assertTile(gemm(pf("PF", 256, 128), new long[] {256, 128}, pf("FP", 512, 256), new long[] {512, 256},
                pf("PF", 128, 512), new long[] {128, 512}, true, true), 128, 128, 512, 2);
    }

    @Test
    void transposedOutputSwapsStationaryAndMoving() {
        // D with N on partitions: B is stationary (N <= 128 per tile), A moving (M up to 512)
        Decision dec = gemm(pf("FP", 512, 128), new long[] {512, 128}, pf("PF", 128, 128), new long[] {128, 128},
                pf("FP", 512, 128), new long[] {512, 128}, false, false);
        assertTile(dec, 128, 128, 512, 1);
        assertEquals("B", dec.planJson().get("stationary"));
    }

    @Test
    void wideDIsCutAtTheBankAndTheMovingLimit() {
        // D 128 x 1024 float32 spans two banks: two moving blocks of 512
        Decision dec = gemm(pf("FP", 128, 128), new long[] {128, 128}, pf("PF", 128, 1024), new long[] {128, 1024},
                pf("PF", 128, 1024), new long[] {128, 1024}, false, false);
        assertTile(dec, 128, 128, 512, 1);
        assertEquals(2L, ((Map<?, ?>) ((List<?>) dec.planJson().get("loops")).get(1)).get("extent"));
    }

    @Test
    void kOnFreeIsDeclinedWithTheReason() {
        // A loaded row-major (M on P, K on F): nc_matmul cannot contract it
        Decision dec = gemm(pf("PF", 128, 128), new long[] {128, 128}, pf("PF", 128, 128), new long[] {128, 128},
                pf("PF", 128, 128), new long[] {128, 128}, false, false);
        assertFalse(dec.accepted());
        assertTrue(dec.reason().contains("does not lie on partitions"), dec.reason());
    }

    @Test
    void tooManyPartitionsIsDeclinedNamingTheLimit() {
        Layout a = Layout.parse("S[(128, 256):(1@F, 1@P)]");
        Decision dec = gemm(a, new long[] {128, 256}, pf("PF", 256, 128), new long[] {256, 128}, pf("PF", 128, 128),
                new long[] {128, 128}, false, false);
        assertFalse(dec.accepted());
        assertTrue(dec.reason().contains("256 partitions > 128"), dec.reason());
    }
}
