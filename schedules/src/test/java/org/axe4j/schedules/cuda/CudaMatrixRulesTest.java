package org.axe4j.schedules.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.axe4j.layout.Layout;
import org.axe4j.schedules.Decision;
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
}
