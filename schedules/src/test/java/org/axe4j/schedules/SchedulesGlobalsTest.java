package org.axe4j.schedules;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.util.List;
import java.util.Map;
import org.axe4j.layout.Layout;
import org.axe4j.passes.TirxLayouts;
import org.axe4j.schedules.cuda.CudaDispatch;
import org.axe4j.tvm.Axe4jGlobals;
import org.axe4j.tvm.Tvm;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The rules as TVM globals, called through TVM's registry with real tirx.TileLayout objects. */
class SchedulesGlobalsTest {
    @BeforeAll
    static void install() {
        Axe4jGlobals.install();
    }

    @Test
    void providerIsInstalledAndTheTableListsEveryOp() {
        assertTrue(Axe4jGlobals.providers().contains("axe4j.schedules"), Axe4jGlobals.providers().toString());
        List<?> table = (List<?>) Tvm.call("axe4j.schedules.table");
        long cpuGemmRows = table.stream().map(r -> (Map<?, ?>) r)
                .filter(r -> "gemm".equals(r.get("op")) && "llvm".equals(r.get("target"))).count();
        assertEquals(2, cpuGemmRows);
        long cudaGemmAsync = table.stream().map(r -> (Map<?, ?>) r)
                .filter(r -> "gemm_async".equals(r.get("op")) && "cuda".equals(r.get("target"))).count();
        assertEquals(2, cudaGemmAsync); // wgmma (sm_90a) and tcgen05 (sm_100a)
        long rows = DispatchTable.all().stream()
                .mapToLong(t -> t.ops().stream().mapToInt(op -> t.rules(op).size()).sum()).sum();
        assertEquals(rows, table.size());
        long cudaCopies = table.stream().map(r -> (Map<?, ?>) r)
                .filter(r -> "cuda".equals(r.get("target")) && "copy".equals(r.get("op"))).count();
        assertEquals(CudaDispatch.TABLE.rules("copy").size(), cudaCopies);
        assertTrue(cudaCopies >= 3, "ldmatrix, vector and digits at least: " + cudaCopies);
    }

    @Test
    void decideReadsTileLayoutsThroughTvm() {
        String request = RequestText.request("copy", "thread", RequestText.operand("dst", 8, 8) + ","
                + RequestText.operand("src0", 8, 8), "");
        List<Object> layouts = List.of(TirxLayouts.toTvm(Layout.parse("S[(8,8):(8,1)] + R[2:64]")),
                TirxLayouts.toTvm(Layout.parse("S[(2,4,8):(1@cpu,8,1)]")));
        JsonObject vector = JsonParser.parseString((String) Tvm.call("axe4j.schedules.decide", "axe4j-cpu-vector",
                request, layouts)).getAsJsonObject();
        assertTrue(vector.get("accepted").getAsBoolean(), vector.toString());
        assertEquals("[0,64]", vector.getAsJsonObject("plan").getAsJsonObject("access").getAsJsonObject("dst")
                .get("replicas").toString());
        List<?> all = (List<?>) Tvm.call("axe4j.schedules.explain", request, layouts);
        assertEquals(3, all.size());
        JsonObject digits = JsonParser.parseString((String) all.get(1)).getAsJsonObject();
        assertEquals("axe4j-cpu-digits", digits.get("variant").getAsString());
        assertTrue(digits.get("accepted").getAsBoolean(), digits.toString());
        JsonObject scalar = JsonParser.parseString((String) all.get(2)).getAsJsonObject();
        assertEquals("axe4j-cpu-scalar", scalar.get("variant").getAsString());
        assertTrue(scalar.get("reason").getAsString().contains("has a cpu iter"), scalar.toString());
    }
}
