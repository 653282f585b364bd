package org.axe4j.schedules.trn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Shape;
import org.axe4j.schedules.Decision;
import org.axe4j.schedules.Operand;
import org.axe4j.schedules.Request;
import org.junit.jupiter.api.Test;

/** Trainium copies, element-wise ops and reductions: the instruction tile from the layouts, or the reason not. */
class TrnMapRulesTest {
    private record Arg(String role, String storage, String dtype, long[] shape, Layout layout) {}

    private static Arg arg(String role, String storage, String dtype, Layout layout, long... shape) {
        return new Arg(role, storage, dtype, shape, layout);
    }

    private static Request call(String op, JsonObject params, Arg... args) {
        JsonObject storage = new JsonObject();
        List<Operand> ops = new ArrayList<>();
        for (Arg a : args) {
            storage.addProperty(a.role(), a.storage());
            ops.add(new Operand(a.role(), a.role(), a.dtype(), a.shape(), new long[a.shape().length], a.shape(),
                    a.layout()));
        }
        params.add("storage", storage);
        return new Request(op, "trn", "thread", ops, params);
    }

    private static Layout pf(String ann, long... shape) {
        return TrainiumMemory.annotated(ann, Shape.of(shape));
    }

    private static Layout rowMajor(long r, long c) {
        return Layout.parse("S[(" + r + ", " + c + "):(" + c + ", 1)]");
    }

    @SuppressWarnings("unchecked")
    private static List<Long> inst(Decision d) {
        assertTrue(d.accepted(), d.reason());
        List<Long> out = new ArrayList<>();
        for (Object o : (List<Object>) d.planJson().get("inst")) {
            out.add((Long) ((Map<String, Object>) o).get("extent"));
        }
        return out;
    }

    @Test
    void loadTakesAllPartitionsAndTheWholeFreeRun() {
        Decision d = TrnCopyRule.INSTANCE.decide(call("copy", new JsonObject(),
                arg("dst", "trn.sbuf", "float16", pf("PF", 512, 256), 512, 256),
                arg("src0", "global", "float16", rowMajor(512, 256), 512, 256)));
        assertEquals(List.of(128L, 256L), inst(d));
        assertEquals("load", d.planJson().get("instruction"));
    }

    @Test
    void loadOfATransposedTileIsOneStridedAccessPerBlock() {
        // K^T: the second dim on partitions; the DMA reads 128 x 512 with the partition stride 1 in HBM
        Decision d = TrnCopyRule.INSTANCE.decide(call("copy", new JsonObject(),
                arg("dst", "trn.sbuf", "float16", pf("FP", 512, 128), 512, 128),
                arg("src0", "global", "float16", rowMajor(512, 128), 512, 128)));
        assertEquals(List.of(128L, 512L), inst(d));
    }

    @Test
    void partitionChangeIsATransposeThroughTheTensorEngine() {
        Decision d = TrnCopyRule.INSTANCE.decide(call("copy", new JsonObject(),
                arg("dst", "trn.sbuf", "float16", pf("FP", 128, 512), 128, 512),
                arg("src0", "trn.sbuf", "float16", pf("PF", 128, 512), 128, 512),
                arg("identity", "trn.sbuf", "float16", pf("PF", 128, 128), 128, 128),
                arg("acc_psum", "trn.psum", "float32", pf("PF", 128, 128), 128, 128)));
        assertTrue(d.accepted(), d.reason());
        assertEquals("transpose", d.planJson().get("instruction"));
        assertEquals(List.of(128L, 128L, 128L), inst(d));
        assertTrue(d.planJson().get("notes").toString().contains("4 x transpose of 128 x 128"), d.toJson());
    }

    @Test
    void transposeWithoutAnIdentityIsDeclinedSayingWhatItNeeds() {
        Decision d = TrnCopyRule.INSTANCE.decide(call("copy", new JsonObject(),
                arg("dst", "trn.sbuf", "float16", pf("FP", 128, 512), 128, 512),
                arg("src0", "trn.sbuf", "float16", pf("PF", 128, 512), 128, 512)));
        assertFalse(d.accepted());
        assertTrue(d.reason().contains("workspace={'identity'"), d.reason());
    }

    @Test
    void hbmToPsumIsDeclined() {
        Decision d = TrnCopyRule.INSTANCE.decide(call("copy", new JsonObject(),
                arg("dst", "trn.psum", "float32", pf("PF", 128, 128), 128, 128),
                arg("src0", "global", "float32", rowMajor(128, 128), 128, 128)));
        assertFalse(d.accepted());
        assertTrue(d.reason().contains("DMA moves HBM <-> SBUF"), d.reason());
    }

    @Test
    void perPartitionColumnIsATensorScalar() {
        Decision d = TrnElementwiseRule.INSTANCE.decide(call("mul", new JsonObject(),
                arg("dst", "trn.sbuf", "float16", pf("PF", 128, 256), 128, 256),
                arg("src0", "trn.psum", "float32", pf("PF", 128, 256), 128, 256),
                arg("src1", "trn.sbuf", "float32", pf("PF", 128, 1), 128, 1)));
        assertEquals("tensor_scalar", d.planJson().get("instruction"));
        assertEquals(List.of(128L, 256L), inst(d));
    }

    @Test
    void operandsOnDifferentPartitionsAreDeclined() {
        Decision d = TrnElementwiseRule.INSTANCE.decide(call("add", new JsonObject(),
                arg("dst", "trn.sbuf", "float32", pf("PF", 128, 128), 128, 128),
                arg("src0", "trn.sbuf", "float32", pf("PF", 128, 128), 128, 128),
                arg("src1", "trn.sbuf", "float32", Layout.parse("S[(128, 128):(1@P, 1@F)] + 0@P"), 128, 128)));
        assertTrue(d.accepted(), d.reason());
        Decision moved = TrnElementwiseRule.INSTANCE.decide(call("add", new JsonObject(),
                arg("dst", "trn.sbuf", "float32", pf("PF", 64, 128), 64, 128),
                arg("src0", "trn.sbuf", "float32", pf("PF", 64, 128), 64, 128),
                arg("src1", "trn.sbuf", "float32", Layout.parse("S[(64, 128):(1@P, 1@F)] + 64@P"), 64, 128)));
        assertFalse(moved.accepted());
        assertTrue(moved.reason().contains("same partitions"), moved.reason());
    }

    @Test
    void reductionAlongFIsOneTensorReducePerPartitionTile() {
        JsonObject params = new JsonObject();
        params.add("axes", new com.google.gson.JsonArray());
        params.getAsJsonArray("axes").add(1);
        Decision d = TrnReduceRule.INSTANCE.decide(call("max", params,
                arg("dst", "trn.sbuf", "float32", pf("PF", 256, 1), 256, 1),
                arg("src0", "trn.sbuf", "float32", pf("PF", 256, 2048), 256, 2048)));
        assertEquals(List.of(128L, 2048L), inst(d));
        assertEquals("tensor_reduce", d.planJson().get("instruction"));
    }

    @Test
    void reductionOfASplitFreeRunIsDeclined() {
        JsonObject params = new JsonObject();
        params.add("axes", new com.google.gson.JsonArray());
        params.getAsJsonArray("axes").add(1);
        // the reduced dim 256 is stored as two F runs of 128 with another dim in between
        Decision d = TrnReduceRule.INSTANCE.decide(call("sum", params,
                arg("dst", "trn.sbuf", "float32", pf("PF", 128, 1), 128, 1),
                arg("src0", "trn.sbuf", "float32", Layout.parse("S[(128, 2, 128):(1@P, 1@F, 2@F)]"), 128, 256)));
        assertFalse(d.accepted());
        assertTrue(d.reason().contains("is not one F run"), d.reason());
    }

    private static JsonObject axis(int a) {
        JsonObject params = new JsonObject();
        params.add("axes", new com.google.gson.JsonArray());
        params.getAsJsonArray("axes").add(a);
        return params;
    }

    @Test
    void sumAlongPartitionsIsAMatmulAgainstOnes() {
        Decision d = TrnReduceRule.INSTANCE.decide(call("sum", axis(0),
                arg("dst", "trn.sbuf", "float32", pf("PF", 1, 1024), 1, 1024),
                arg("src0", "trn.sbuf", "float16", pf("PF", 256, 1024), 256, 1024),
                arg("ones", "trn.sbuf", "float16", pf("PF", 128, 1), 128, 1),
                arg("acc_psum", "trn.psum", "float32", pf("PF", 1, 512), 1, 512)));
        assertEquals(List.of(128L, 1L, 512L), inst(d));
        assertEquals("ones", d.planJson().get("stationary"));
        assertEquals(2L, ((Map<?, ?>) d.planJson().get("k_loop")).get("extent"));
    }

    @Test
    void maxAlongPartitionsIsDeclinedWithTheWayRound() {
        Decision d = TrnReduceRule.INSTANCE.decide(call("max", axis(0),
                arg("dst", "trn.sbuf", "float32", pf("PF", 1, 1024), 1, 1024),
                arg("src0", "trn.sbuf", "float32", pf("PF", 128, 1024), 128, 1024)));
        assertFalse(d.accepted());
        assertTrue(d.reason().contains("only sum crosses partitions"), d.reason());
    }
}
