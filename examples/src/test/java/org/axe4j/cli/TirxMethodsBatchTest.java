package org.axe4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.util.List;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Point;
import org.axe4j.layout.Shape;
import org.axe4j.layout.SwizzledLayout;
import org.junit.jupiter.api.Test;

/**
 * {@code axe layout batch} on broadcast, permute_dims, is_trivial, is_swizzle, is_trainium, get_scope, trainium and
 * to_psum: each answer's map checked against the operation's definition, element by element, and bad requests
 * answered with an error naming the field.
 */
class TirxMethodsBatchTest {
    private static List<JsonObject> answers(String... lines) {
        Tool.Result r = Tool.withInput(String.join("\n", lines), "layout", "batch");
        assertEquals(0, r.code(), r.err());
        return r.out().lines().map(l -> JsonParser.parseString(l).getAsJsonObject()).toList();
    }

    @Test
    void layoutAnswersMapAsDefined() {
        String l = "S[(4,8):(1@laneid,4)] + R[2:1@warpid] + 3";
        List<JsonObject> out = answers(
                "{\"op\":\"broadcast\",\"layout\":\"" + l + "\",\"num\":3,\"position\":1,\"axis\":\"laneid\"}",
                "{\"op\":\"permute_dims\",\"layout\":\"" + l + "\",\"perm\":[1,0]}",
                "{\"op\":\"trainium\",\"annotation\":\"FP\",\"shape\":[6,256]}",
                "{\"op\":\"trainium\",\"annotation\":\"PF\",\"shape\":[128,1024],\"is_psum\":true}",
                "{\"op\":\"to_psum\",\"layout\":\"S[(128,2048):(1@P,1@F)]\"}",
                "{\"op\":\"broadcast\",\"layout\":\"Swizzle<3,3,3> o S[(8,64):(64,1)]\",\"num\":2}");
        Layout base = Layout.parse(l);
        // broadcast at position 1: (i, j, k) over (4, 3, 8) reads L(i, k) for every j
        Layout b = Layout.parse(out.get(0).get("layout").getAsString());
        for (long i = 0; i < 4; i++) {
            for (long j = 0; j < 3; j++) {
                for (long k = 0; k < 8; k++) {
                    assertEquals(base.apply(Shape.of(4, 8), i, k), b.apply(Shape.of(4, 3, 8), i, j, k), b.toString());
                }
            }
        }
        // permute_dims [1, 0]: (k, i) over (8, 4) reads L(i, k)
        Layout p = Layout.parse(out.get(1).get("layout").getAsString());
        for (long i = 0; i < 4; i++) {
            for (long k = 0; k < 8; k++) {
                assertEquals(base.apply(Shape.of(4, 8), i, k), p.apply(Shape.of(8, 4), k, i), p.toString());
            }
        }
        // trainium FP over (6, 256): (f, c) -> P = c mod 128, F = (c / 128) * 6 + f
        Layout t = Layout.parse(out.get(2).get("layout").getAsString());
        assertEquals("[6,256]", out.get(2).get("shape").toString());
        for (long f = 0; f < 6; f++) {
            for (long c = 0; c < 256; c++) {
                assertEquals(List.of(Point.of("P", c % 128, "F", c / 128 * 6 + f)), t.apply(Shape.of(6, 256), f, c));
            }
        }
        // PSUM forms: (p, c) -> P = p, Bank = c / 512, F = c mod 512
        for (JsonObject psum : List.of(out.get(3), out.get(4))) {
            Layout q = Layout.parse(psum.get("layout").getAsString());
            long cols = q.size() / 128;
            for (long c = 0; c < cols; c += 7) {
                assertEquals(List.of(Point.of("P", 5L, "Bank", c / 512, "F", c % 512)),
                        q.apply(Shape.of(128, cols), 5, c), q.toString());
            }
        }
        // a swizzled layout broadcasts its tile: (x, j) -> swz(x)
        SwizzledLayout s = SwizzledLayout.parse(out.get(5).get("layout").getAsString());
        SwizzledLayout atom = SwizzledLayout.parse("Swizzle<3,3,3> o S[(8,64):(64,1)]");
        for (long x = 0; x < 512; x++) {
            assertEquals(atom.apply(x), s.apply(2 * x + 1), s.toString());
        }
    }

    @Test
    void predicatesAndScopes() {
        List<JsonObject> out = answers(
                "{\"op\":\"is_trivial\",\"layout\":\"S[(2,4):(4,1)]\"}",
                "{\"op\":\"is_trivial\",\"layout\":\"S[8:1] + R[1:3]\"}",
                "{\"op\":\"is_swizzle\",\"layout\":\"Swizzle<3,3,3> o S[512:1]\"}",
                "{\"op\":\"is_swizzle\",\"layout\":\"Swizzle<3,3,3> o S[(8,64):(1,8)]\"}",
                "{\"op\":\"is_trainium\",\"layout\":\"S[(128,4):(1@P,1@F)]\"}",
                "{\"op\":\"is_trainium\",\"layout\":\"S[(128,4):(1@P,1)]\"}",
                "{\"op\":\"get_scope\",\"layout\":\"S[(4,32):(1@warpid,1@laneid)]\"}",
                "{\"op\":\"get_scope\",\"layout\":\"S[8:1]\"}");
        assertEquals(List.of("true", "false", "true", "false", "true", "false", "[\"thread\",\"cta\"]", "null"),
                out.stream().map(o -> o.entrySet().iterator().next().getValue().toString()).toList());
    }

    @Test
    void badRequestsNameTheField() {
        List<JsonObject> out = answers(
                "{\"op\":\"broadcast\",\"layout\":\"S[8:1]\",\"num\":0}",
                "{\"op\":\"broadcast\",\"layout\":\"S[8:1]\",\"num\":2,\"position\":5}",
                "{\"op\":\"broadcast\",\"layout\":\"S[8:1]\",\"num\":2,\"axis\":3}",
                "{\"op\":\"permute_dims\",\"layout\":\"S[(2,4):(4,1)]\",\"perm\":[0,0]}",
                "{\"op\":\"get_scope\",\"layout\":\"S[(4,32):(1@wgid,1@laneid)]\"}",
                "{\"op\":\"trainium\",\"annotation\":\"PX\",\"shape\":[2,3]}",
                "{\"op\":\"trainium\",\"annotation\":\"PF\",\"shape\":[2,3],\"is_psum\":1}",
                "{\"op\":\"to_psum\",\"layout\":\"S[1000:1@F]\"}");
        String[] named = {"num (0)", "position (5)", "field 'axis' must be a string", "perm [0, 0]",
                "do not chain", "annotation 'PX'", "field 'is_psum' must be true or false", "no PSUM form"};
        for (int i = 0; i < named.length; i++) {
            JsonObject o = out.get(i);
            assertTrue(o.has("error") && o.toString().contains(named[i]), i + ": " + o);
        }
    }
}
