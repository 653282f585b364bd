package org.axe4j.schedules.cpu;

import static org.axe4j.schedules.RequestText.operand;
import static org.axe4j.schedules.RequestText.request;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.util.List;
import java.util.Map;
import org.axe4j.layout.Layout;
import org.axe4j.schedules.AffineAccess;
import org.axe4j.schedules.Decision;
import org.axe4j.schedules.Request;
import org.junit.jupiter.api.Test;

/** A weight B stored as the blocked GEMM's panels (GemmPacking#packedWeight) is read in place, nothing else is. */
class GemmPackedWeightTest {
    private static final String AVX512 = "{\"isa\":\"avx512\",\"vector_bits\":512,\"vector_registers\":32,"
            + "\"l1d_bytes\":49152,\"l2_bytes\":2097152,\"cores\":2}";

    /** D (8 x 64) = A (8 x 512) B (512 x 64), B in {@code bLayout}; no params.cpu: the AVX2 plan, kc 256, nv 16. */
    private static Decision gemm(String bLayout) {
        String ops = operand("D", 8, 64) + "," + operand("A", 8, 512) + "," + operand("B", 512, 64) + ","
                + operand("C", 8, 64);
        Request call = Request.fromJson(request("gemm", "thread", ops, "\"trans_a\":false,\"trans_b\":false"),
                List.of(Layout.parse("S[(8,64):(64,1)]"), Layout.parse("S[(8,512):(512,1)]"), Layout.parse(bLayout),
                        Layout.parse("S[(8,64):(64,1)]")));
        return CpuDispatch.decide("axe4j-cpu-gemm-blocked", call);
    }

    @Test
    void theWeightInThePlansPanelsIsReadInPlace() {
        String packed = GemmPacking.packedWeight(512, 64, 256, 16).toString();
        assertEquals(Layout.parse("S[(2,256,4,16):(16384,16,4096,1)]").toString(), packed);
        Decision d = gemm(packed);
        assertTrue(d.accepted(), d.reason());
        assertEquals(packed, d.planJson().get("packed_v"));
        assertEquals(Map.of("u", 6L, "v", 16L), d.planJson().get("tile"));
        assertEquals(List.of("A"), List.copyOf(((Map<?, ?>) d.planJson().get("packing")).keySet()));
        assertTrue(d.planJson().get("notes").toString().contains("B already packed (layout " + packed
                + "), no packing"), d.planJson().toString());
        Decision plain = gemm("S[(512,64):(64,1)]");
        assertNull(plain.planJson().get("packed_v"));
        assertTrue(plain.planJson().get("notes").toString().contains("B packed per K block"));
    }

    @Test
    void panelsOfOtherBlocksAreDeclinedNamingBothLayouts() {
        for (String other : new String[] {"S[(2,256,2,32):(16384,32,8192,1)]", "S[(4,128,4,16):(8192,16,2048,1)]"}) {
            Decision d = gemm(other);
            assertFalse(d.accepted(), other);
            assertTrue(d.reason().contains(Layout.parse(other).toString()), d.reason());
            assertTrue(d.reason().contains("this plan's packed weight " + GemmPacking.packedWeight(512, 64, 256, 16)),
                    d.reason());
            assertTrue(d.reason().contains("axe4j.cpu.packed_weight_layout"), d.reason());
        }
    }

    @Test
    void theLayoutAnswersTheTargetsBlocksOrRefusesARaggedShape() {
        JsonObject avx2 = JsonParser.parseString(PackedWeights.describe("{}", 512, 64, 4)).getAsJsonObject();
        assertEquals(256, avx2.get("kc").getAsLong());
        assertEquals(16, avx2.get("nv").getAsLong());
        assertEquals(GemmPacking.packedWeight(512, 64, 256, 16).toString(), avx2.get("layout").getAsString());
        JsonObject wide = JsonParser.parseString(PackedWeights.describe(AVX512, 2048, 2048, 4)).getAsJsonObject();
        assertEquals(256, wide.get("kc").getAsLong());
        assertEquals(32, wide.get("nv").getAsLong());
        JsonObject ragged = JsonParser.parseString(PackedWeights.describe("{}", 300, 64, 4)).getAsJsonObject();
        assertEquals("a packed weight needs K a multiple of the K block and N a multiple of the panel width: K=300, "
                + "N=64, kc=256, nv=16", ragged.get("refusal").getAsString());
        assertFalse(ragged.has("layout"));
    }

    @Test
    void piecesCompareAfterUnitLoopsDropAndContinuingStridesMerge() {
        List<AffineAccess.Piece> k = List.of(new AffineAccess.Piece(256, 16), new AffineAccess.Piece(2, 16384));
        List<AffineAccess.Piece> v = List.of(new AffineAccess.Piece(16, 1), new AffineAccess.Piece(4, 4096));
        assertTrue(GemmPacking.isPackedWeight(k, v, 512, 64, 256, 16));
        assertFalse(GemmPacking.isPackedWeight(k, v, 512, 64, 128, 16));
        // one K block and one panel: the packed weight is row-major
        assertTrue(GemmPacking.isPackedWeight(List.of(new AffineAccess.Piece(256, 16)),
                List.of(new AffineAccess.Piece(16, 1)), 256, 16, 256, 16));
        assertEquals(List.of(new AffineAccess.Piece(12, 1)), GemmPacking.normalized(List.of(
                new AffineAccess.Piece(4, 1), new AffineAccess.Piece(1, 99), new AffineAccess.Piece(3, 4))));
    }
}
