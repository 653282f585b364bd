package org.axe4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.TreeSet;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Oracle;
import org.axe4j.layout.Point;
import org.axe4j.layout.Property;
import org.axe4j.layout.RandomLayouts;
import org.axe4j.layout.Shape;
import org.junit.jupiter.api.Test;

/** {@code axe layout batch}: one answer line per request, in order, whatever the requests are. */
class BatchTest {
    static final String TC = SingleCommandsTest.TC;

    private static List<String> answers(String input) {
        Tool.Result r = Tool.withInput(input, "layout", "batch");
        assertEquals(0, r.code(), r.err());
        assertEquals("", r.err());
        return r.out().lines().toList();
    }

    @Test
    void mixedGoodAndBadLinesGetOneAnswerEachInOrder() {
        String input = String.join("\n",
                "{\"op\":\"apply\",\"layout\":\"" + TC + "\",\"shape\":[8,16],\"coord\":[2,9]}",
                "{\"op\":\"apply\",\"layout\":\"" + TC + "\",\"shape\":[8,16],\"coord\":[2,9]",
                "",
                "[1,2,3]",
                "{\"layout\":\"S[4:1]\"}",
                "{\"op\":\"transpose\",\"layout\":\"S[4:1]\"}",
                "{\"op\":\"apply\",\"layout\":\"S[4:1]\",\"shape\":[4]}",
                "{\"op\":\"apply\",\"layout\":\"S[4:1]\",\"shape\":[4],\"coord\":[1.5]}",
                "{\"op\":\"apply\",\"layout\":\"S[4:1\",\"shape\":[4],\"coord\":[1]}",
                "{\"op\":\"apply\",\"layout\":\"S[4:1]\",\"shape\":[3],\"coord\":[1]}",
                "{\"op\":\"group\",\"layout\":\"S[(2,3):(1,2)]\",\"shape\":[3,2],\"id\":7}",
                "{\"op\":\"iters\",\"layout\":\"" + TC + "\",\"id\":\"x\"}",
                "{op:iters}",
                "{\"op\":\"group\",\"layout\":\"S[(2,4):(4,1)]\",\"shape\":[4,2]}",
                "{\"op\":\"apply\",\"layout\":\"S[(3,4):(1,3)]\",\"shape\":[3,4],\"coord\":[0,0]}");
        List<String> out = answers(input);
        assertEquals(14, out.size(), String.join("\n", out));
        assertEquals("{\"points\":[{\"laneid\":8,\"reg\":1,\"warpid\":6},{\"laneid\":8,\"reg\":1,\"warpid\":10}]}",
                out.get(0));
        String[] kinds = {null, "parse", "invalid", "invalid", "invalid", "invalid", "invalid", "parse", "invalid",
                "not_representable", null, "parse", null, null};
        for (int i = 0; i < kinds.length; i++) {
            JsonObject a = JsonParser.parseString(out.get(i)).getAsJsonObject();
            if (kinds[i] == null) {
                assertTrue(!a.has("error"), out.get(i));
            } else {
                assertEquals(kinds[i], a.get("kind").getAsString(), out.get(i));
                assertTrue(a.get("error").getAsString().length() > 10, out.get(i));
            }
        }
        // The blank line gets no answer: answer 4 is the unknown op.
        assertTrue(out.get(4).contains("unknown op 'transpose'"), out.get(4));
        assertTrue(out.get(5).contains("apply") && out.get(5).contains("'coord'"), out.get(5));
        assertTrue(out.get(8).contains("apply") && out.get(8).contains("S[4:1]"), out.get(8));
        assertTrue(out.get(8).contains("(3)"), out.get(8));
        assertTrue(out.get(9).startsWith("{\"error\":\"group") && out.get(9).endsWith(",\"id\":7}"), out.get(9));
        assertEquals("{\"shard\":[[8,4,\"laneid\"],[2,1,\"warpid\"],[4,1,\"laneid\"],[2,1,\"reg\"]],"
                + "\"replica\":[[2,4,\"warpid\"]],\"offset\":{\"warpid\":5},\"id\":\"x\"}", out.get(10));
        assertEquals("{\"layout\":\"S[(4,2):(2,1)]\",\"seps\":[0,1,2]}", out.get(12));
        assertEquals("{\"points\":[{}]}", out.get(13));
    }

    /** The answer's points, read back as Points. */
    private static TreeSet<Point> points(JsonObject answer) {
        TreeSet<Point> set = new TreeSet<>();
        for (JsonElement e : answer.getAsJsonArray("points")) {
            TreeMap<Axis, Long> c = new TreeMap<>();
            for (Map.Entry<String, JsonElement> kv : e.getAsJsonObject().entrySet()) {
                c.put(Axis.of(kv.getKey()), kv.getValue().getAsLong());
            }
            set.add(new Point(c));
        }
        return set;
    }

    @Test
    void applyAnswersAreTheOracleSetsAndItersRebuildTheLayout() {
        Property.forAll("batch apply = oracle, iters = layout", r -> {
            List<Layout> layouts = new ArrayList<>();
            List<Shape> shapes = new ArrayList<>();
            List<long[]> coords = new ArrayList<>();
            StringBuilder in = new StringBuilder();
            for (int k = 0; k < 4; k++) {
                Layout l = RandomLayouts.layout(r);
                Shape s = RandomLayouts.shapeOf(r, l.size(), 3);
                long[] c = s.unflatten(r.nextInt((int) l.size()));
                layouts.add(l);
                shapes.add(s);
                coords.add(c);
                JsonObject req = new JsonObject();
                req.addProperty("op", "apply");
                req.addProperty("layout", l.toString());
                req.add("shape", Json.longs(s.dims()));
                req.add("coord", Json.longs(c));
                in.append(req).append('\n');
                in.append("{\"op\":\"iters\",\"layout\":\"").append(l).append("\"}\n");
            }
            List<String> out = answers(in.toString());
            assertEquals(8, out.size());
            for (int k = 0; k < 4; k++) {
                Layout l = layouts.get(k);
                JsonObject applied = JsonParser.parseString(out.get(2 * k)).getAsJsonObject();
                long x = Oracle.flat(shapes.get(k).toArray(), coords.get(k));
                assertEquals(Oracle.table(l).get((int) x), points(applied), l + " at " + x);
                JsonObject iters = JsonParser.parseString(out.get(2 * k + 1)).getAsJsonObject();
                TreeMap<Axis, Long> offset = new TreeMap<>();
                iters.getAsJsonObject("offset").entrySet()
                        .forEach(e -> offset.put(Axis.of(e.getKey()), e.getValue().getAsLong()));
                assertEquals(l, Layout.of(iters(iters.getAsJsonArray("shard")), iters(iters.getAsJsonArray("replica")),
                        offset));
            }
        });
    }

    @Test
    void aBadUnicodeEscapeIsAParseError() {
        // Gson throws NumberFormatException for this escape; it must still be an ordinary parse error.
        List<String> out = answers("{\"op\":\"\\ut\"}\n");
        assertEquals(1, out.size());
        assertTrue(out.get(0).contains("\"kind\":\"parse\""), out.get(0));
    }

    @Test
    void canonAnswersKeepTheMapAndEquivAnswersAgreeWithTheOracle() {
        Property.forAll("batch canon = same map, equiv = oracle", r -> {
            Layout a = RandomLayouts.layout(r);
            Layout b = r.nextBoolean() ? a.withShard(RandomLayouts.shard(r, 4)) : RandomLayouts.layout(r);
            String in = "{\"op\":\"canon\",\"layout\":\"" + a + "\"}\n"
                    + "{\"op\":\"equiv\",\"a\":\"" + a + "\",\"b\":\"" + b + "\"}\n";
            List<String> out = answers(in);
            Layout canonical = Layout.parse(JsonParser.parseString(out.get(0)).getAsJsonObject().get("layout").getAsString());
            assertTrue(Oracle.sameMap(a, canonical), a + " -> " + canonical);
            assertEquals("{\"equivalent\":" + Oracle.sameMap(a, b) + "}", out.get(1), a + " vs " + b);
        });
    }

    @Test
    void tileAnswersLayoutAndShape() {
        String in = "{\"op\":\"tile\",\"inner\":\"S[(3,4):(4,1)]\",\"outer\":\"S[(2,2):(2,1)]\","
                + "\"inner_shape\":[3,4],\"outer_shape\":[2,2]}\n"
                + "{\"op\":\"tile\",\"inner\":\"S[(3,4):(4,1)]\",\"outer\":\"S[(2,2):(2,1)]\",\"inner_shape\":[3,4]}\n"
                + "{\"op\":\"tile\",\"inner\":\"S[(3,4):(4,1)]\",\"outer\":\"S[4:1]\","
                + "\"inner_shape\":[3,4],\"outer_shape\":[4]}\n";
        List<String> out = answers(in);
        assertEquals("{\"layout\":\"S[(2,3,2,4):(24,4,12,1)]\",\"shape\":[6,8]}", out.get(0));
        assertTrue(out.get(1).contains("missing field 'outer_shape'") && out.get(1).contains("\"kind\":\"invalid\""),
                out.get(1));
        assertTrue(out.get(2).startsWith("{\"error\":\"tile ") && out.get(2).contains("\"kind\":\"invalid\""), out.get(2));
    }

    @Test
    void sliceAnswersMapTheBoxOrSayNotRepresentable() {
        int[] representable = {0};
        Property.forAll("batch slice = L(b + y) on the box", r -> {
            Layout l = RandomLayouts.layout(r);
            Shape s = RandomLayouts.shapeOf(r, l.size(), 3);
            long[] begin = new long[s.rank()];
            long[] end = new long[s.rank()];
            JsonArray region = new JsonArray();
            for (int k = 0; k < s.rank(); k++) {
                begin[k] = r.nextInt((int) s.dim(k));
                end[k] = begin[k] + 1 + r.nextInt((int) (s.dim(k) - begin[k]));
                region.add(Json.longs(new long[] {begin[k], end[k]}));
            }
            JsonObject req = new JsonObject();
            req.addProperty("op", "slice");
            req.addProperty("layout", l.toString());
            req.add("shape", Json.longs(s.dims()));
            req.add("region", region);
            JsonObject a = JsonParser.parseString(answers(req + "\n").get(0)).getAsJsonObject();
            if (a.has("error")) {
                assertEquals("not_representable", a.get("kind").getAsString(), a.toString());
                return;
            }
            representable[0]++;
            Layout sliced = Layout.parse(a.get("layout").getAsString());
            long[] widths = new long[s.rank()];
            for (int k = 0; k < widths.length; k++) {
                widths[k] = end[k] - begin[k];
            }
            assertEquals(Json.longs(widths), a.getAsJsonArray("shape"));
            List<TreeSet<Point>> whole = Oracle.table(l);
            List<TreeSet<Point>> part = Oracle.table(sliced);
            Shape w = Shape.of(widths);
            for (long y = 0; y < w.size(); y++) {
                long[] yc = w.unflatten(y);
                long[] z = new long[yc.length];
                for (int k = 0; k < z.length; k++) {
                    z[k] = begin[k] + yc[k];
                }
                assertEquals(whole.get((int) Oracle.flat(s.toArray(), z)), part.get((int) y),
                        l + " by " + s + " on " + region + " -> " + sliced + " at y=" + y);
            }
        });
        assertTrue(representable[0] > 0, "no slice was representable: the check above never ran");
    }

    private static List<org.axe4j.layout.Iter> iters(JsonArray a) {
        List<org.axe4j.layout.Iter> out = new ArrayList<>();
        for (JsonElement e : a) {
            JsonArray t = e.getAsJsonArray();
            out.add(org.axe4j.layout.Iter.of(t.get(0).getAsLong(), t.get(1).getAsLong(), t.get(2).getAsString()));
        }
        return out;
    }

    @Test
    void garbledRequestsNeverStopTheStream() {
        String good = "{\"op\":\"apply\",\"layout\":\"S[(3,4):(1,3)]\",\"shape\":[3,4],\"coord\":[1,2]}";
        Property.forAll("batch survives garbled lines", Math.max(1, Property.CASES / 10), r -> {
            StringBuilder in = new StringBuilder();
            int lines = 5;
            for (int k = 0; k < lines; k++) {
                in.append(garble(r, good)).append('\n');
            }
            in.append(good).append('\n');
            List<String> out = answers(in.toString());
            assertEquals(lines + 1, out.size(), in.toString());
            for (String line : out) {
                JsonObject a = JsonParser.parseString(line).getAsJsonObject();
                assertTrue(a.has("points") || a.has("error"), line);
                if (a.has("error")) {
                    assertTrue(List.of("parse", "invalid", "not_representable").contains(a.get("kind").getAsString()),
                            line);
                }
            }
            assertEquals("{\"points\":[{\"m\":7}]}", out.get(lines));
        });
    }

    /** The line with a few characters replaced, deleted or inserted (never a newline). */
    private static String garble(Random r, String s) {
        StringBuilder b = new StringBuilder(s);
        String alphabet = "{}[]\":,0123456789-.eSR@()+ abcopz\\";
        for (int k = 0; k < 1 + r.nextInt(3); k++) {
            int at = r.nextInt(b.length());
            switch (r.nextInt(3)) {
                case 0 -> b.setCharAt(at, alphabet.charAt(r.nextInt(alphabet.length())));
                case 1 -> b.deleteCharAt(at);
                default -> b.insert(at, alphabet.charAt(r.nextInt(alphabet.length())));
            }
        }
        String t = b.toString();
        return t.isBlank() ? "x" : t;
    }
}
