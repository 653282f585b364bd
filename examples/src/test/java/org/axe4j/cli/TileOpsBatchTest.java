package org.axe4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.TreeSet;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Oracle;
import org.axe4j.layout.Point;
import org.axe4j.layout.Shape;
import org.axe4j.layout.SwizzledLayout;
import org.axe4j.layout.SwizzledTile;
import org.axe4j.layout.Tile;
import org.junit.jupiter.api.Test;

/**
 * {@code axe layout batch} on size, span, image_span, count, direct_sum, group_many, is_tile_inner and
 * is_tile_outer: every answer checked by enumerating the layouts' maps (a factor tiled back gives the tiled map, a
 * direct sum is {@code {a + b}} at every coordinate, sizes and spans are read off every point), and bad requests
 * answered with an error naming the field.
 */
class TileOpsBatchTest {
    private static final String ATOM = "Swizzle<3,3,3> o S[(8,64):(64,1)]";

    private static List<JsonObject> answers(String... lines) {
        Tool.Result r = Tool.withInput(String.join("\n", lines), "layout", "batch");
        assertEquals(0, r.code(), r.err());
        return r.out().lines().map(l -> JsonParser.parseString(l).getAsJsonObject()).toList();
    }

    private static Shape shape(JsonElement e) {
        JsonArray a = e.getAsJsonArray();
        long[] dims = new long[a.size()];
        for (int i = 0; i < dims.length; i++) {
            dims[i] = a.get(i).getAsLong();
        }
        return Shape.of(dims);
    }

    /** The two swizzled layouts give the same set at every index (both enumerated). */
    private static void assertSameSwizzledMap(SwizzledLayout want, SwizzledLayout got) {
        assertEquals(want.size(), got.size(), got.toString());
        for (long x = 0; x < want.size(); x++) {
            assertEquals(new TreeSet<>(want.apply(x)), new TreeSet<>(got.apply(x)), got + " at " + x);
        }
    }

    @Test
    void tileOfAnswersAFactorThatTilesBackToTheGivenLayout() {
        // The tensor-core tile over the warp atom, and a layout with replicas and an offset on two axes.
        Layout atom = Layout.parse("S[(8,4,2):(4@laneid,1@laneid,1@reg)]");
        Layout warps = Layout.parse("S[2:1@warpid] + R[2:4@warpid] + 5@warpid");
        Layout outer = Layout.parse("S[(3,2):(2,1)] + R[2:1@laneid] + 7");
        Layout inner = Layout.parse("S[(2,4):(1,2)] + 1");
        Shape t1 = Tile.tiledShape(Shape.of(1, 2), Shape.of(8, 8));
        Shape t2 = Tile.tiledShape(Shape.of(3, 2), Shape.of(2, 4));
        Layout tiled1 = Tile.tile(warps, Shape.of(1, 2), atom, Shape.of(8, 8));
        Layout tiled2 = Tile.tile(outer, Shape.of(3, 2), inner, Shape.of(2, 4));
        List<JsonObject> out = answers(
                tileOf("is_tile_inner", atom.toString(), tiled1.toString(), t1, "[8,8]"),
                tileOf("is_tile_outer", warps.toString(), tiled1.toString(), t1, "[1,2]"),
                tileOf("is_tile_inner", inner.toString(), tiled2.toString(), t2, "[2,4]"),
                tileOf("is_tile_outer", outer.toString(), tiled2.toString(), t2, "[3,2]"),
                // S[16:1] by (4,4) is no tile over S[(2,2):(4,1)] by (2,2) (span 6 scales the outer part)
                tileOf("is_tile_inner", "S[(2,2):(4,1)]", "S[16:1]", Shape.of(4, 4), "[2,2]"));
        Layout a1 = Layout.parse(out.get(0).get("layout").getAsString());
        assertEquals(Shape.of(1, 2), shape(out.get(0).get("shape")));
        assertTrue(Oracle.sameMap(tiled1, Tile.tile(a1, Shape.of(1, 2), atom, Shape.of(8, 8))), a1.toString());
        Layout b1 = Layout.parse(out.get(1).get("layout").getAsString());
        assertEquals(Shape.of(8, 8), shape(out.get(1).get("shape")));
        assertTrue(Oracle.sameMap(tiled1, Tile.tile(warps, Shape.of(1, 2), b1, Shape.of(8, 8))), b1.toString());
        Layout a2 = Layout.parse(out.get(2).get("layout").getAsString());
        assertTrue(Oracle.sameMap(tiled2, Tile.tile(a2, Shape.of(3, 2), inner, Shape.of(2, 4))), a2.toString());
        Layout b2 = Layout.parse(out.get(3).get("layout").getAsString());
        assertEquals(Shape.of(2, 4), shape(out.get(3).get("shape")));
        assertTrue(Oracle.sameMap(tiled2, Tile.tile(outer, Shape.of(3, 2), b2, Shape.of(2, 4))), b2.toString());
        assertTrue(out.get(4).get("layout").isJsonNull(), out.get(4).toString());
        assertTrue(!out.get(4).get("reason").getAsString().isBlank(), out.get(4).toString());
    }

    @Test
    void swizzledTileOfAnswersFactorsWhoseTileIsTheSwizzledMap() {
        SwizzledLayout atom = SwizzledLayout.parse(ATOM);
        Layout outer = Layout.parse("S[(2,2):(2,1)]");
        SwizzledLayout tiled = SwizzledTile.tile(outer, Shape.of(2, 2), atom, Shape.of(8, 64));
        List<JsonObject> out = answers(
                tileOf("is_tile_inner", ATOM, tiled.toString(), Shape.of(16, 128), "[8,64]"),
                tileOf("is_tile_outer", outer.toString(), tiled.toString(), Shape.of(16, 128), "[2,2]"),
                tileOf("is_tile_inner", "Swizzle<3,4,3> o S[(8,64):(64,1)]", tiled.toString(), Shape.of(16, 128),
                        "[8,64]"));
        Layout a = Layout.parse(out.get(0).get("layout").getAsString());
        assertEquals(Shape.of(2, 2), shape(out.get(0).get("shape")));
        assertSameSwizzledMap(tiled, SwizzledTile.tile(a, Shape.of(2, 2), atom, Shape.of(8, 64)));
        SwizzledLayout b = SwizzledLayout.parse(out.get(1).get("layout").getAsString());
        assertSameSwizzledMap(tiled, SwizzledTile.tile(outer, Shape.of(2, 2), b, Shape.of(8, 64)));
        assertTrue(out.get(2).get("layout").isJsonNull(), out.get(2).toString()); // another swizzle: no factor
    }

    private static String tileOf(String op, String part, String tiled, Shape tiledShape, String partShape) {
        return "{\"op\":\"" + op + "\",\"layout\":\"" + part + "\",\"tiled\":\"" + tiled + "\",\"tiled_shape\":"
                + tiledShape.dims().toString().replace(" ", "") + ",\"shape\":" + partShape + "}";
    }

    @Test
    void directSumIsEverySumOfTheAddendsPoints() {
        // TIRx's B.direct_sum(A, A's shape, B's shape) = A (+) B; at z_k = x_k * T_B[k] + y_k it is {a + b}.
        String[][] cases = {{"S[(2,2):(8,2)]", "[2,2]", "S[(2,2):(4,1)]", "[2,2]"},
                {"S[(2,3):(1@warpid,5)] + R[2:1@laneid]", "[2,3]", "S[(4,2):(1,1@laneid)] + 3", "[4,2]"}};
        List<String> lines = new ArrayList<>();
        for (String[] c : cases) {
            lines.add("{\"op\":\"direct_sum\",\"layout\":\"" + c[2] + "\",\"left\":\"" + c[0] + "\",\"left_shape\":"
                    + c[1] + ",\"right_shape\":" + c[3] + "}");
        }
        List<JsonObject> out = answers(lines.toArray(new String[0]));
        for (int i = 0; i < cases.length; i++) {
            Layout a = Layout.parse(cases[i][0]);
            Layout b = Layout.parse(cases[i][2]);
            Shape ta = shape(JsonParser.parseString(cases[i][1]));
            Shape tb = shape(JsonParser.parseString(cases[i][3]));
            Layout sum = Layout.parse(out.get(i).get("layout").getAsString());
            Shape t = shape(out.get(i).get("shape"));
            assertEquals(Shape.of(ta.dim(0) * tb.dim(0), ta.dim(1) * tb.dim(1)), t);
            assertEquals(Shape.of(ta.dim(0), tb.dim(0), ta.dim(1), tb.dim(1)), shape(out.get(i).get("interleaved_shape")));
            for (long z0 = 0; z0 < t.dim(0); z0++) {
                for (long z1 = 0; z1 < t.dim(1); z1++) {
                    TreeSet<Point> want = new TreeSet<>();
                    for (Point p : a.apply(ta, z0 / tb.dim(0), z1 / tb.dim(1))) {
                        for (Point q : b.apply(tb, z0 % tb.dim(0), z1 % tb.dim(1))) {
                            want.add(p.plus(q));
                        }
                    }
                    assertEquals(want, new TreeSet<>(sum.apply(t, z0, z1)), sum + " at " + z0 + "," + z1);
                }
            }
        }
        assertTrue(Oracle.sameMap(Layout.parse(out.get(0).get("layout").getAsString()), Layout.parse("S[16:1]")));
    }

    @Test
    void groupManyKeepsTheMapAndEachShapeBoundsItsSeps() {
        String[][] cases = {{"S[30:1]", "[[6,5],[2,15]]"},
                {"S[(4,6):(6@laneid,1)] + R[2:1@warpid] + 2", "[[2,12],[8,3],[24]]"}};
        List<String> lines = new ArrayList<>();
        for (String[] c : cases) {
            lines.add("{\"op\":\"group_many\",\"layout\":\"" + c[0] + "\",\"shapes\":" + c[1] + "}");
        }
        List<JsonObject> out = answers(lines.toArray(new String[0]));
        for (int i = 0; i < cases.length; i++) {
            Layout given = Layout.parse(cases[i][0]);
            Layout split = Layout.parse(out.get(i).get("layout").getAsString());
            assertTrue(Oracle.sameMap(given, split), split.toString());
            JsonArray shapes = JsonParser.parseString(cases[i][1]).getAsJsonArray();
            JsonArray seps = out.get(i).get("seps").getAsJsonArray();
            assertEquals(shapes.size(), seps.size(), out.get(i).toString());
            for (int s = 0; s < shapes.size(); s++) {
                Shape shape = shape(shapes.get(s));
                JsonArray sep = seps.get(s).getAsJsonArray();
                assertEquals(shape.rank() + 1, sep.size(), sep.toString());
                assertEquals(0, sep.get(0).getAsInt());
                assertEquals(split.shard().size(), sep.get(shape.rank()).getAsInt());
                for (int k = 0; k < shape.rank(); k++) {
                    long product = 1;
                    for (int j = sep.get(k).getAsInt(); j < sep.get(k + 1).getAsInt(); j++) {
                        product *= split.shard().get(j).extent();
                    }
                    assertEquals(shape.dim(k), product, "shape " + s + " dim " + k + " of " + split + " by " + sep);
                }
            }
        }
    }

    @Test
    void sizesSpansAndCountsAgreeWithEveryPoint() {
        String[] layouts = {"S[(4,8):(1@laneid,4)] + R[2:1@warpid] + 3", "S[(2,3,4):(-5,1@P,2@F)] + R[3:7] + 20",
                "S[(8,2):(2@laneid,1@laneid)] + R[(2,2):(32@laneid,64)] + 5@laneid"};
        List<String> lines = new ArrayList<>();
        for (String l : layouts) {
            Layout layout = Layout.parse(l);
            lines.add("{\"op\":\"size\",\"layout\":\"" + l + "\"}");
            lines.add("{\"op\":\"span\",\"layout\":\"" + l + "\"}");
            lines.add("{\"op\":\"image_span\",\"layout\":\"" + l + "\"}");
            for (Axis a : layout.axes()) {
                lines.add("{\"op\":\"size\",\"layout\":\"" + l + "\",\"axis\":\"" + a.name() + "\"}");
                lines.add("{\"op\":\"span\",\"layout\":\"" + l + "\",\"axis\":\"" + a.name() + "\"}");
                lines.add("{\"op\":\"image_span\",\"layout\":\"" + l + "\",\"axis\":\"" + a.name() + "\"}");
            }
            lines.add("{\"op\":\"count\",\"layout\":\"" + l + "\",\"x\":" + (layout.size() - 1) + "}");
            lines.add("{\"op\":\"count\",\"layout\":\"" + l + "\",\"shape\":[" + layout.size() + "],\"coord\":[1]}");
        }
        List<JsonObject> out = answers(lines.toArray(new String[0]));
        int line = 0;
        for (String l : layouts) {
            Layout layout = Layout.parse(l);
            TreeMap<Axis, Long> max = new TreeMap<>();
            TreeMap<Axis, Long> min = new TreeMap<>();
            TreeMap<Axis, java.util.Set<TreeSet<Long>>> images = new TreeMap<>(); // distinct L(x) on each axis
            long elements = 0;
            for (TreeSet<Point> set : Oracle.table(layout)) {
                elements++;
                for (Axis a : layout.axes()) {
                    TreeSet<Long> onAxis = new TreeSet<>();
                    for (Point p : set) {
                        max.merge(a, p.get(a), Math::max);
                        min.merge(a, p.get(a), Math::min);
                        onAxis.add(p.get(a));
                    }
                    images.computeIfAbsent(a, k -> new java.util.HashSet<>()).add(onAxis);
                }
            }
            assertEquals(elements, out.get(line++).get("size").getAsLong(), l);
            long memorySpan = 1;
            for (Axis a : layout.axes()) {
                if (TileLayoutOperations.TIRX_MEMORY_AXES.contains(a)) {
                    memorySpan += max.get(a);
                }
            }
            assertEquals(memorySpan, out.get(line++).get("span").getAsLong(), l);
            JsonObject spans = out.get(line++).get("image_span").getAsJsonObject();
            for (Axis a : layout.axes()) {
                boolean moves = !max.get(a).equals(min.get(a));
                if (moves) {
                    assertEquals(max.get(a) - min.get(a) + 1, spans.get(a.name()).getAsLong(), l + " on " + a);
                }
                // the shard of these layouts is injective on each axis: its size there is the number of distinct sets
                assertEquals(images.get(a).size(), out.get(line++).get("size").getAsLong(), l + " on " + a);
                assertEquals(max.get(a) + 1, out.get(line++).get("span").getAsLong(), l + " on " + a);
                assertEquals(max.get(a) - min.get(a) + 1, out.get(line++).get("image_span").getAsLong(), l + " on " + a);
            }
            assertEquals(layout.apply(layout.size() - 1).size(), out.get(line++).get("count").getAsLong(), l);
            assertEquals(layout.apply(1).size(), out.get(line++).get("count").getAsLong(), l);
        }
    }

    @Test
    void swizzledSizesSpansAndCountsReadTheSwizzledImage() {
        String s = "Swizzle<3,3,3> o S[(2,3):(64,1)]";
        List<JsonObject> out = answers("{\"op\":\"span\",\"layout\":\"" + s + "\"}",
                "{\"op\":\"span\",\"layout\":\"" + s + "\",\"axis\":\"m\"}",
                "{\"op\":\"size\",\"layout\":\"" + s + "\"}",
                "{\"op\":\"image_span\",\"layout\":\"" + s + "\",\"axis\":\"m\"}",
                "{\"op\":\"count\",\"layout\":\"" + s + "\",\"shape\":[2,3],\"coord\":[1,2]}",
                "{\"op\":\"count\",\"layout\":\"Swizzle<3,3,3> o S[512:1]\",\"x\":4000}");
        SwizzledLayout l = SwizzledLayout.parse(s);
        long max = 0;
        for (long x = 0; x < l.size(); x++) {
            for (Point p : l.apply(x)) {
                max = Math.max(max, p.get(Axis.M));
            }
        }
        assertEquals(max + 1, out.get(0).get("span").getAsLong());
        assertEquals(max + 1, out.get(1).get("span").getAsLong());
        assertEquals(75, max + 1); // element 3 (row 1, column 0: address 64) is swizzled to 72 + 2 = 74
        assertEquals(6, out.get(2).get("size").getAsLong());
        assertEquals(l.layout().spanOn(Axis.M), out.get(3).get("image_span").getAsLong()); // the tile's, as tile scales
        assertEquals(l.apply(5).size(), out.get(4).get("count").getAsLong());
        assertEquals(1, out.get(5).get("count").getAsLong());
    }

    @Test
    void badRequestsNameTheField() {
        List<JsonObject> out = answers(
                "{\"op\":\"is_tile_inner\",\"layout\":\"S[4:1]\",\"tiled_shape\":[8],\"shape\":[4]}",
                "{\"op\":\"group_many\",\"layout\":\"S[30:1]\",\"shapes\":[[6,5],[\"x\",15]]}",
                "{\"op\":\"group_many\",\"layout\":\"S[30:1]\",\"shapes\":[[6,5],[10,3]]}",
                "{\"op\":\"direct_sum\",\"layout\":\"" + ATOM + "\",\"left\":\"S[2:1]\",\"left_shape\":[2],"
                        + "\"right_shape\":[512]}",
                "{\"op\":\"span\",\"layout\":\"S[4:1]\",\"axis\":5}",
                "{\"op\":\"count\",\"layout\":\"S[4:1]\",\"x\":4}",
                "{\"op\":\"is_tile_outer\",\"layout\":\"S[2:1]\",\"tiled\":\"S[8:1]\",\"tiled_shape\":[8],"
                        + "\"shape\":[3]}",
                "{\"op\":\"group_many\",\"layout\":\"S[30:1]\",\"shapes\":5}");
        String[][] want = {{"invalid", "'tiled'"}, {"invalid", "'shapes[1]'"}, {"not_representable", "boundary 6"},
                {"parse", "'layout'"}, {"invalid", "'axis'"}, {"invalid", "4"}, {"invalid", "\"shape\":[3]"},
                {"invalid", "'shapes'"}};
        for (int i = 0; i < want.length; i++) {
            assertEquals(want[i][0], out.get(i).get("kind").getAsString(), out.get(i).toString());
            assertTrue(out.get(i).get("error").getAsString().contains(want[i][1]), out.get(i).toString());
        }
    }
}
