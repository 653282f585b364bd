package org.axe4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.util.List;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Point;
import org.axe4j.layout.SwizzledLayout;
import org.junit.jupiter.api.Test;

/**
 * Swizzled layouts ({@code Swizzle<B,M,S> o L}) through {@code axe layout batch}: every answer's map against the
 * swizzle written out here bit by bit, {@code a ^ ((a >> S) & ((2^B - 1) << M))}, on {@code L(x)} enumerated from L.
 */
class SwizzledBatchTest {
    private static final String ATOM = "Swizzle<3,3,3> o S[(8,64):(64,1)]";

    /** The 128B atom's swizzle, S = 3: bits [6, 9) of the address flip bits [3, 6). */
    private static long swz(long a) {
        return a ^ ((a >> 3) & (7 << 3));
    }

    private static List<JsonObject> answers(String... lines) {
        Tool.Result r = Tool.withInput(String.join("\n", lines), "layout", "batch");
        assertEquals(0, r.code(), r.err());
        return r.out().lines().map(l -> JsonParser.parseString(l).getAsJsonObject()).toList();
    }

    private static long single(SwizzledLayout l, long x) {
        List<Point> p = l.apply(x);
        assertEquals(1, p.size(), l + " at " + x);
        return p.get(0).get(Axis.M);
    }

    @Test
    void everyOperationThatTakesASwizzleAnswersWithTheSwizzledMap() {
        List<JsonObject> out = answers(
                "{\"op\":\"apply\",\"layout\":\"" + ATOM + "\",\"shape\":[8,64],\"coord\":[3,13]}",
                "{\"op\":\"unpack\",\"layout\":\"" + ATOM + "\",\"num\":2}",
                "{\"op\":\"pack\",\"layout\":\"" + ATOM + "\",\"num\":4}",
                "{\"op\":\"slice\",\"layout\":\"" + ATOM + "\",\"shape\":[8,64],\"region\":[[2,6],[0,64]]}",
                "{\"op\":\"group\",\"layout\":\"" + ATOM + "\",\"shape\":[8,8,8]}",
                "{\"op\":\"tile_to\",\"layout\":\"" + ATOM + "\",\"shape\":[8,64],\"to_shape\":[16,128]}",
                "{\"op\":\"tile\",\"outer\":\"S[(2,2):(2,1)]\",\"outer_shape\":[2,2],\"inner\":\"" + ATOM
                        + "\",\"inner_shape\":[8,64]}",
                "{\"op\":\"storage\",\"layout\":\"" + ATOM + "\"}",
                "{\"op\":\"apply\",\"layout\":\"Swizzle<3,3,3> o S[512:1]\",\"shape\":[4096],\"coord\":[4000],"
                        + "\"mode\":\"count\"}");
        assertEquals(List.of(java.util.Map.of("m", swz(3 * 64 + 13))).toString(),
                List.of(java.util.Map.of("m", out.get(0).get("points").getAsJsonArray().get(0).getAsJsonObject()
                        .get("m").getAsLong())).toString());
        SwizzledLayout unpacked = SwizzledLayout.parse(out.get(1).get("layout").getAsString());
        for (long x = 0; x < 512; x++) {
            for (long j = 0; j < 2; j++) {
                assertEquals(2 * swz(x) + j, single(unpacked, 2 * x + j), "unpack at " + x + "," + j);
            }
        }
        SwizzledLayout packed = SwizzledLayout.parse(out.get(2).get("layout").getAsString());
        for (long y = 0; y < 128; y++) {
            assertEquals(swz(4 * y) / 4, single(packed, y), "pack at " + y);
        }
        SwizzledLayout sliced = SwizzledLayout.parse(out.get(3).get("layout").getAsString());
        for (long y = 0; y < 256; y++) {
            assertEquals(swz(128 + y), single(sliced, y), "slice at " + y);
        }
        SwizzledLayout grouped = SwizzledLayout.parse(out.get(4).get("layout").getAsString());
        for (long x = 0; x < 512; x++) {
            assertEquals(swz(x), single(grouped, x), "group at " + x);
        }
        // tile_to [16,128]: (i, j) -> 512 * (2 (i / 8) + j / 64) + swz(64 (i % 8) + j % 64)
        SwizzledLayout tiledTo = SwizzledLayout.parse(out.get(5).get("layout").getAsString());
        for (long i = 0; i < 16; i++) {
            for (long j = 0; j < 128; j++) {
                long want = 512 * (2 * (i / 8) + j / 64) + swz(64 * (i % 8) + j % 64);
                assertEquals(want, single(tiledTo, 128 * i + j), "tile_to at " + i + "," + j);
            }
        }
        assertEquals(out.get(5).get("layout").getAsString(), out.get(6).get("layout").getAsString());
        assertEquals("[16,128]", out.get(6).get("shape").toString());
        assertEquals(ATOM, out.get(7).get("layout").getAsString());
        assertEquals(1, out.get(8).get("count").getAsLong());
        JsonObject columns = answers("{\"op\":\"slice\",\"layout\":\"" + ATOM + "\",\"shape\":[8,64],"
                + "\"region\":[[0,8],[4,12]]}").get(0);
        SwizzledLayout block = SwizzledLayout.parse(columns.get("layout").getAsString());
        for (long y = 0; y < 64; y++) {
            assertEquals(swz(64 * (y / 8) + 4 + y % 8), single(block, y), "column slice at " + y);
        }
    }

    @Test
    void refusalsNameTheSwizzleAndTheArgument() {
        List<JsonObject> out = answers(
                "{\"op\":\"pack\",\"layout\":\"Swizzle<3,1,3> o S[(8,64):(64,1)]\",\"num\":4}",
                "{\"op\":\"unpack\",\"layout\":\"" + ATOM + "\",\"num\":3}",
                "{\"op\":\"canon\",\"layout\":\"" + ATOM + "\"}");
        assertTrue(out.get(0).get("error").getAsString().contains("units of 2^1 elements"), out.get(0).toString());
        assertTrue(out.get(1).get("error").getAsString().contains("power of two"), out.get(1).toString());
        assertEquals("parse", out.get(2).get("kind").getAsString(), out.get(2).toString());
        assertTrue(out.get(2).get("error").getAsString().contains("'layout'"), out.get(2).toString());
    }
}
