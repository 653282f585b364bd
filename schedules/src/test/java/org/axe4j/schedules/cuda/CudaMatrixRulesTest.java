package org.axe4j.schedules.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Point;
import org.axe4j.layout.Shape;
import org.axe4j.layout.Swizzle;
import org.axe4j.schedules.Decision;
import org.axe4j.schedules.Modular;
import org.axe4j.schedules.Operand;
import org.axe4j.schedules.Request;
import org.junit.jupiter.api.Test;

/** ldmatrix plans: blocks in register order with their shared row addresses, and the reasons to decline. */
class CudaMatrixRulesTest {

    private static Decision decide(String regLayout, String smemLayout, long rows, long cols, String regStorage) {
        long[] shape = {rows, cols};
        Operand reg = new Operand("dst", "R", "float16", shape, new long[2], shape, Layout.parse(regLayout));
        Operand smem = new Operand("src0", "A_smem", "float16", shape, new long[2], shape, Layout.parse(smemLayout));
        String json = CudaRulesTest.request("copy", "warp", 32, List.of(reg, smem))
                .replace("\"dst\":\"shared\",\"src0\":\"global\"", "\"dst\":\"" + regStorage + "\",\"src0\":\"shared\"");
        return CudaDispatch.TABLE.decide("axe4j-cuda-ldstmatrix", Request.fromJson(json,
                List.of(reg.layout(), smem.layout())));
    }

    @Test
    @SuppressWarnings("unchecked")
    void blocksGoInRegisterOrderWithTheirRowAddresses() {
        Decision d = decide("S[(2,8,2,4,2):(2,4@laneid,4,1@laneid,1)]", "S[(16,16):(16,1)]", 16, 16, "local");
        assertTrue(d.accepted(), d.reason());
        assertEquals("ld", d.planJson().get("direction"));
        assertEquals(4L, d.planJson().get("num"));
        assertEquals(16L, d.planJson().get("row_stride"));
        List<Map<String, Object>> groups = (List<Map<String, Object>>) d.planJson().get("groups");
        assertEquals(1, groups.size());
        // registers 0, 2, 4, 6 hold blocks (0,0), (1,0), (0,1), (1,1): rows start at 0, 128, 8, 136
        assertEquals(List.of(0L, 1L, 2L, 3L), groups.get(0).get("words"));
        assertEquals(List.of(0L, 128L, 8L, 136L), groups.get(0).get("bases"));
    }

    @Test
    void declinesWhatLdmatrixCannotMove() {
        Decision lanesOnColumns = decide("S[(2,8,2,4,2):(2,1@laneid,4,8@laneid,1)]", "S[(16,16):(16,1)]", 16, 16,
                "local");
        assertFalse(lanesOnColumns.accepted());
        assertTrue(lanesOnColumns.reason().contains("is not a tile of the ldmatrix fragment"), lanesOnColumns.reason());
        Decision misaligned = decide("S[(8,4,4,2):(4@laneid,2,1@laneid,1)]", "S[(8,32):(36,1)]", 8, 32, "local");
        assertTrue(misaligned.reason().contains("starts at element 36, not 16-byte aligned"), misaligned.reason());
        Decision columnMajor = decide("S[(8,4,4,2):(4@laneid,2,1@laneid,1)]", "S[(8,32):(1,8)]", 8, 32, "local");
        assertTrue(columnMajor.reason().contains("is not 8 contiguous elements"), columnMajor.reason());
        Decision notRegisters = decide("S[(8,4,4,2):(4@laneid,2,1@laneid,1)]", "S[(8,32):(32,1)]", 8, 32, "shared");
        assertTrue(notRegisters.reason().contains("shared -> shared is not shared <-> local"), notRegisters.reason());
    }

    /**
     * The pipelined Hopper GEMM's epilogue store: {@code out} (the wgmma accumulator's layout, FP16) to its
     * 128-byte-swizzled staging tile at warpgroup scope. Executed as stmatrix does it (matrix k's row r at the
     * address lane 8k + r gives; its columns 2c, 2c + 1 from word k of lane 4r + c), every element of the tile lands
     * once, at the swizzled address the staging tile's layout gives it, for both parts.
     */
    @Test
    @SuppressWarnings("unchecked")
    void theAccumulatorIsStoredToTheSwizzledStagingTileByEveryWarp() {
        long[] shape = {2, 1, 64, 256};
        long[] extent = {1, 1, 64, 256};
        Layout staging = Layout.parse("S[(2,1,64,4,64):(16384,16384,64,4096,1)]");
        Layout accumulator = Layout.parse(CudaRegisterRuleTest.ACCUMULATOR);
        Swizzle z = new Swizzle(3, 3, 3);
        Operand out = new Operand("src0", "out", "float16", new long[] {64, 256}, new long[2], new long[] {64, 256},
                accumulator);
        Map<String, String> storage = Map.of("dst", "shared.dyn", "src0", "local");
        // (warp, lane, slot) -> (row, column) of out
        Map<List<Long>, long[]> holder = new HashMap<>();
        for (long x = 0; x < 64; x++) {
            for (long y = 0; y < 256; y++) {
                Point p = accumulator.apply(Shape.of(64, 256), x, y).get(0);
                holder.put(List.of(p.get(CudaMatrixRules.WARP), p.get(Axis.of("laneid")), p.get(Axis.M)),
                        new long[] {x, y});
            }
        }
        for (long part = 0; part < 2; part++) {
            Operand smem = new Operand("dst", "D_smem", "float16", shape, new long[] {part, 0, 0, 0}, extent, staging);
            Decision d = CudaDispatch.decide("axe4j-cuda-ldstmatrix", CudaRegisterRuleTest.call("copy", "warpgroup",
                    128, List.of(smem, out), storage, Map.of("dst", z)));
            assertTrue(d.accepted(), d.reason());
            Map<String, Object> plan = d.planJson();
            assertEquals("st", plan.get("direction"));
            assertEquals(4L, plan.get("warps"));
            assertEquals(List.of(3L, 3L, 3L), plan.get("swizzle"));
            long num = (Long) plan.get("num");
            long rowStride = (Long) plan.get("row_stride");
            long warpStride = (Long) plan.get("warp_stride");
            boolean[] stored = new boolean[64 * 256];
            for (long w = 0; w < 4; w++) {
                for (Map<String, Object> group : (List<Map<String, Object>>) plan.get("groups")) {
                    List<Long> words = (List<Long>) group.get("words");
                    List<Long> bases = (List<Long>) group.get("bases");
                    for (int k = 0; k < num; k++) {
                        for (long r = 0; r < 8; r++) {
                            long row = z.apply(bases.get(k) + r * rowStride + w * warpStride); // lane 8k + r
                            for (long c = 0; c < 8; c++) {
                                long[] xy = holder.get(List.of(w, 4 * r + c / 2, 2 * words.get(k) + c % 2));
                                Point want = staging.apply(Shape.of(shape), part, 0, xy[0], xy[1]).get(0);
                                assertEquals(z.apply(want.get(Axis.M)), row + c, "part " + part + " warp " + w
                                        + " matrix " + k + " row " + r + " column " + c + " holds out" + List.of(
                                        xy[0], xy[1]));
                                assertFalse(stored[(int) (xy[0] * 256 + xy[1])], "out" + List.of(xy[0], xy[1])
                                        + " stored twice");
                                stored[(int) (xy[0] * 256 + xy[1])] = true;
                            }
                        }
                    }
                }
            }
            for (boolean b : stored) {
                assertTrue(b, "an element of out is never stored");
            }
        }
        // the part as a run-time index keeps the plan and adds part * 16384 (a whole number of swizzle periods)
        Operand anyPart = new Operand("dst", "D_smem", "float16", shape, new long[4], extent, staging)
                .withRunTimeStart(0, Modular.ANY);
        Decision runTime = CudaDispatch.decide("axe4j-cuda-ldstmatrix", CudaRegisterRuleTest.call("copy", "warpgroup",
                128, List.of(anyPart, out), storage, Map.of("dst", z)));
        assertTrue(runTime.accepted(), runTime.reason());
        assertEquals(Map.of("0", 16384L), runTime.planJson().get("start_strides"));
    }

    @Test
    void declinesSwizzlesThatSplitARowAndTilesOnPartOfTheWarpgroup() {
        long[] shape = {64, 64};
        Operand smem = new Operand("dst", "D_smem", "float16", shape, new long[2], shape,
                Layout.parse("S[(64,64):(64,1)]"));
        Operand out = new Operand("src0", "out", "float16", shape, new long[2], shape,
                Layout.parse("S[(1,4,2,8,1,8,4,2):(32,1@wid_in_wg,2,4@laneid,32,4,1@laneid,1)]"));
        Map<String, String> storage = Map.of("dst", "shared.dyn", "src0", "local");
        Decision fine = CudaDispatch.decide("axe4j-cuda-ldstmatrix", CudaRegisterRuleTest.call("copy", "warpgroup",
                128, List.of(smem, out), storage, Map.of("dst", new Swizzle(3, 3, 3))));
        assertTrue(fine.accepted(), fine.reason());
        // units of 2^2 elements: an 8-element row is split by the swizzle
        CudaRegisterRuleTest.declined(CudaDispatch.decide("axe4j-cuda-ldstmatrix", CudaRegisterRuleTest.call("copy",
                "warpgroup", 128, List.of(smem, out), storage, Map.of("dst", new Swizzle(3, 2, 3)))),
                "moves runs of 4 elements");
        // rows on 2 of the warpgroup's 4 warps: the other two would store nothing
        Operand halfTheWarps = new Operand("src0", "out", "float16", shape, new long[2], shape,
                Layout.parse("S[(2,2,2,8,8,4,2):(1@wid_in_wg,16,2,4@laneid,4,1@laneid,1)]"));
        CudaRegisterRuleTest.declined(CudaDispatch.decide("axe4j-cuda-ldstmatrix", CudaRegisterRuleTest.call("copy",
                "warpgroup", 128, List.of(smem, halfTheWarps), storage)), "sit on warps [0, 1] of the warpgroup's 4");
    }
}
