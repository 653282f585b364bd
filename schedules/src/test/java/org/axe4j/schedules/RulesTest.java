package org.axe4j.schedules;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.axe4j.layout.Layout;
import org.junit.jupiter.api.Test;

/** Rule decisions on hand-made requests: what is accepted, the plan's loop kinds, and the reasons for declining. */
class RulesTest {
    static String request(String op, String scope, String operands, String params) {
        return "{\"op\":\"" + op + "\",\"target\":\"llvm\",\"scope\":\"" + scope + "\",\"operands\":[" + operands
                + "],\"params\":{" + params + "}}";
    }

    static String operand(String role, long m, long n) {
        return "{\"role\":\"" + role + "\",\"name\":\"" + role + "\",\"dtype\":\"float32\",\"shape\":[" + m + "," + n
                + "],\"start\":[0,0],\"extent\":[" + m + "," + n + "]}";
    }

    @Test
    void copyOfRowMajorIsVectorizedAndLargeCopiesParallel() {
        Request call = Request.fromJson(request("copy", "thread", operand("dst", 256, 160) + "," + operand("src0", 256, 160), ""),
                List.of(Layout.parse("S[(256,160):(160,1)]"), Layout.parse("S[(256,160):(160,1)]")));
        Decision d = CpuDispatch.decide("axe4j-cpu-vector", call);
        assertTrue(d.accepted(), d.reason());
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> loops = (List<Map<String, Object>>) d.plan().get("loops");
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
        assertEquals("m", all.get(0).plan().get("vector_dim"));
    }

    @Test
    void destinationWrittenTwiceIsDeclined() {
        Request call = Request.fromJson(request("copy", "thread", operand("dst", 4, 4) + "," + operand("src0", 4, 4), ""),
                List.of(Layout.parse("S[(4,4):(0,1)]"), Layout.parse("S[(4,4):(4,1)]")));
        Decision d = CpuDispatch.decide("axe4j-cpu-vector", call);
        assertFalse(d.accepted());
        assertTrue(d.reason().contains("maps 4 region elements to one address"), d.reason());
    }
}
