package org.axe4j.schedules.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Point;
import org.axe4j.layout.Shape;
import org.axe4j.schedules.Decision;
import org.axe4j.schedules.Operand;
import org.axe4j.schedules.Request;
import org.junit.jupiter.api.Test;

/**
 * tcgen05.ld/st plans, executed as the instruction does (thread t, instruction i, register j: tensor-memory lane t,
 * column {@code column + i num + j} to register {@code slot + i num + j}): every element of the region goes to the
 * register the register tile's layout gives it, and back.
 */
class CudaTmemRuleTest {
    private static final String TMEM = "S[(128,256):(1@TLane,1@TCol)]";

    private static Decision decide(boolean load, String regLayout, long[] regShape, long[] regStart, String tmemLayout,
            long[] tmemStart, long width, String dtype, String arch, String scope, long threads) {
        Operand reg = new Operand(load ? "dst" : "src0", "r", dtype, regShape, regStart, new long[] {128, width},
                Layout.parse(regLayout));
        Operand tmem = new Operand(load ? "src0" : "dst", "acc", dtype, new long[] {128, 256}, tmemStart,
                new long[] {128, width}, Layout.parse(tmemLayout));
        JsonObject params = new JsonObject();
        params.addProperty("threads", threads);
        params.addProperty("arch", arch);
        JsonObject storage = new JsonObject();
        storage.addProperty(reg.role(), "local");
        storage.addProperty(tmem.role(), "tmem");
        params.add("storage", storage);
        List<Operand> ops = load ? List.of(reg, tmem) : List.of(tmem, reg);
        return CudaDispatch.decide("axe4j-cuda-tmem", new Request("copy_async", "cuda", scope, ops, params,
                Map.of()));
    }

    private static Decision load(String regLayout, long[] regShape, long[] regStart, long[] tmemStart, long width) {
        return decide(true, regLayout, regShape, regStart, TMEM, tmemStart, width, "float32", "sm_100a", "warpgroup",
                128);
    }

    @Test
    void everyElementGoesToItsRegisterAndBack() {
        // the whole 128 x 256 tile (2 x .x128); 48 columns at column 64 into registers 16.. of a 128 x 96 tile
        // (3 x .x16); and a tile whose rows are named by warp and lane instead of tid_in_wg
        check(true, "S[(128,256):(1@tid_in_wg,1)]", new long[] {128, 256}, new long[2], new long[2], 256, 128, 2);
        check(true, "S[(128,96):(1@tid_in_wg,1)]", new long[] {128, 96}, new long[] {0, 16}, new long[] {0, 64}, 48,
                16, 3);
        check(false, "S[(4,32,64):(1@wid_in_wg,1@laneid,1)]", new long[] {128, 64}, new long[2], new long[] {0, 128},
                64, 64, 1);
    }

    @SuppressWarnings("unchecked")
    private static void check(boolean load, String regLayout, long[] regShape, long[] regStart, long[] tmemStart,
            long width, long num, long count) {
        Decision d = decide(load, regLayout, regShape, regStart, TMEM, tmemStart, width, "float32", "sm_100a",
                "warpgroup", 128);
        assertTrue(d.accepted(), d.reason());
        Map<String, Object> plan = d.planJson();
        assertEquals(load ? "ld" : "st", plan.get("direction"));
        assertEquals(num, plan.get("num"));
        assertEquals(count, plan.get("count"));
        Layout reg = Layout.parse(regLayout);
        Layout tmem = Layout.parse(TMEM);
        Map<List<Long>, List<Long>> regHolds = new HashMap<>(); // (thread, slot) -> region coordinate
        for (long r = 0; r < 128; r++) {
            for (long c = 0; c < width; c++) {
                Point p = reg.apply(Shape.of(regShape), regStart[0] + r, regStart[1] + c).get(0);
                long thread = p.get(Axis.of("tid_in_wg")) + 32 * p.get(Axis.of("wid_in_wg")) + p.get(Axis.of("laneid"));
                regHolds.put(List.of(thread, p.get(Axis.M)), List.of(r, c));
            }
        }
        int moved = 0;
        for (long t = 0; t < 128; t++) {
            for (long i = 0; i < count; i++) {
                for (long j = 0; j < num; j++) {
                    long column = (Long) plan.get("column") + i * num + j;
                    long slot = (Long) plan.get("slot") + i * num + j;
                    List<Long> at = regHolds.get(List.of(t, slot));
                    assertTrue(at != null, "thread " + t + " register " + slot + " holds no element of the region");
                    Point want = tmem.apply(Shape.of(128, 256), tmemStart[0] + at.get(0), tmemStart[1] + at.get(1))
                            .get(0);
                    assertEquals(List.of(t, column), List.of(want.get(Axis.of("TLane")), want.get(Axis.of("TCol"))),
                            "element " + at + " of thread " + t + " register " + slot);
                    moved++;
                }
            }
        }
        assertEquals(128 * width, moved);
    }

    @Test
    void declinesWithTheReason() {
        long[] shape = {128, 64};
        String rows = "S[(128,64):(1@tid_in_wg,1)]";
        assertDecline(decide(true, rows, shape, new long[2], TMEM, new long[2], 64, "float32", "sm_90a", "warpgroup",
                128), "tcgen05.ld/st need arch");
        assertDecline(decide(true, rows, shape, new long[2], TMEM, new long[2], 64, "float32", "sm_100a", "cta",
                256), "with the 4 warps of a warpgroup");
        assertDecline(decide(true, rows, shape, new long[2], TMEM, new long[2], 64, "float16", "sm_100a",
                "warpgroup", 128), "32-bit elements");
        // rows on threads in another order than lanes: thread t would read lane t
        assertDecline(load("S[(2,64,64):(1@tid_in_wg,2@tid_in_wg,1)]", shape, new long[2], new long[2], 64),
                "put it on warpgroup thread 1");
        // columns in registers two apart
        assertDecline(load("S[(128,64):(1@tid_in_wg,2)]", shape, new long[2], new long[2], 64),
                "put it on warpgroup thread 0, register 1");
        // a tensor-memory tile whose rows are not the lanes
        assertDecline(decide(true, rows, shape, new long[2], "S[(128,256):(1@TCol,128@TCol)]", new long[2], 64,
                "float32", "sm_100a", "warpgroup", 128), "put it on TLane");
    }

    private static void assertDecline(Decision d, String reason) {
        assertFalse(d.accepted());
        assertTrue(d.reason().contains(reason), d.reason());
    }
}
