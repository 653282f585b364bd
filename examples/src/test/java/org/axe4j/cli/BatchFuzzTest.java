package org.axe4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Consumer;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Iter;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Oracle;
import org.axe4j.layout.Point;
import org.axe4j.layout.Property;
import org.axe4j.layout.RandomLayouts;
import org.axe4j.layout.References;
import org.axe4j.layout.Region;
import org.axe4j.layout.Shape;
import org.junit.jupiter.api.Test;

/**
 * A bounded fuzz run of {@code axe layout batch}: {@link #CASES} generated requests (3,000 unless
 * {@code -Daxe4j.fuzz.cases=N}; {@code make soak} runs many more) in one stream, ordinary ones checked exactly
 * against the brute-force references ({@link Oracle}, {@link References}), hostile ones (sets over the point
 * cap, numbers at the 64-bit edge, non-ASCII digits, deep or truncated JSON, over-long lines, wrong types,
 * thousands of iters) against the answer kind they must get. Every request gets exactly one final answer, in
 * order, and the stream ends with exit code 0.
 */
class BatchFuzzTest {
    static final int CASES = Integer.getInteger("axe4j.fuzz.cases", 3000);

    /** The request cap of the run: small, so that over-long lines stay cheap to generate. */
    static final int REQUEST_CAP = 65_536;

    /** One generated request and the check its final answer must pass. */
    record Case(String line, Consumer<JsonObject> check) {}

    @Test
    void generatedRequestsGetExactAnswersOrTheirErrorKind() {
        Random seeds = new Random(Property.BASE_SEED);
        List<Case> cases = new ArrayList<>();
        StringBuilder input = new StringBuilder();
        for (int i = 0; i < CASES; i++) {
            long seed = seeds.nextLong();
            Case c;
            try {
                c = generate(new Random(seed), i);
            } catch (RuntimeException e) {
                throw new AssertionError("generator failed at case " + i + " (seed " + seed + ")", e);
            }
            cases.add(c);
            input.append(c.line()).append('\n');
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Main.run(new String[] {"layout", "batch", "--max-request-bytes", Integer.toString(REQUEST_CAP)},
                new ByteArrayInputStream(input.toString().getBytes(StandardCharsets.UTF_8)),
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8),
                Map.of());
        assertEquals(0, code, err.toString(StandardCharsets.UTF_8));
        assertEquals("", err.toString(StandardCharsets.UTF_8));
        List<String> lines = out.toString(StandardCharsets.UTF_8).lines().toList();
        TreeMap<String, Integer> kinds = new TreeMap<>();
        int at = 0;
        for (int i = 0; i < cases.size(); i++) {
            List<JsonObject> answer = new ArrayList<>();
            while (true) {
                if (at >= lines.size()) {
                    fail("no answer for case " + i + ": " + abbreviate(cases.get(i).line()));
                }
                JsonObject a = JsonParser.parseString(lines.get(at++)).getAsJsonObject();
                answer.add(a);
                if (!(a.has("more") && a.get("more").getAsBoolean())) {
                    break;
                }
            }
            JsonObject last = answer.get(answer.size() - 1);
            if (answer.size() > 1) { // a stream: its chunks' points, in order, make the last line's list
                JsonArray all = new JsonArray();
                int id = i;
                answer.forEach(a -> {
                    assertEquals(id, a.get("id").getAsInt(), "stream line of case " + id);
                    if (a.has("points")) {
                        all.addAll(a.getAsJsonArray("points"));
                    }
                });
                last = last.deepCopy();
                last.add("points", all);
            }
            kinds.merge(last.has("kind") ? last.get("kind").getAsString() : "ok", 1, Integer::sum);
            try {
                cases.get(i).check().accept(last);
            } catch (AssertionError e) {
                throw new AssertionError("case " + i + ": " + abbreviate(cases.get(i).line()) + "\n  answer "
                        + abbreviate(last.toString()) + "\n  " + e.getMessage(), e);
            }
        }
        assertEquals(lines.size(), at, "answers after the last case");
        // The mix the generator is meant to make: mostly exact answers, and every kind of refusal.
        assertTrue(kinds.getOrDefault("ok", 0) > CASES / 2, kinds.toString());
        for (String kind : List.of("parse", "invalid", "not_representable", "too_large")) {
            assertTrue(kinds.getOrDefault(kind, 0) >= CASES / 200, kind + " in " + kinds);
        }
        assertEquals(null, kinds.get("internal"), kinds.toString());
    }

    private static String abbreviate(String s) {
        return s.length() <= 300 ? s : s.substring(0, 300) + "... (" + s.length() + " chars)";
    }

    // ---- the generator ---------------------------------------------------------------------------

    private static Case generate(Random r, int id) {
        int pick = r.nextInt(100);
        if (pick < 60) {
            return ordinary(r, id);
        }
        return switch (pick % 10) {
            case 0 -> hugeReplicas(r, id);
            case 1 -> edgeNumbers(r, id);
            case 2 -> nonAscii(r, id);
            case 3 -> deepJson(r, id);
            case 4 -> truncated(r, id);
            case 5 -> wrongTypes(r, id);
            case 6 -> overLong(r, id);
            case 7 -> manyIters(r, id);
            case 8 -> hugeShape(r, id);
            default -> unknownOp(r, id);
        };
    }

    private static JsonObject request(String op, int id) {
        JsonObject o = new JsonObject();
        o.addProperty("op", op);
        o.addProperty("id", id);
        return o;
    }

    private static JsonArray array(long... values) {
        JsonArray a = new JsonArray();
        for (long v : values) {
            a.add(v);
        }
        return a;
    }

    private static Consumer<JsonObject> kind(String kind, int id) {
        return a -> {
            assertEquals(kind, a.has("kind") ? a.get("kind").getAsString() : "ok", a.toString());
            if (a.has("id")) {
                assertEquals(id, a.get("id").getAsInt());
            }
        };
    }

    private static Consumer<JsonObject> answer(JsonObject expected, int id) {
        return a -> {
            JsonObject e = expected.deepCopy();
            e.addProperty("id", id);
            assertEquals(Tool.canonical(e), Tool.canonical(a));
        };
    }

    private static JsonArray pointsOf(TreeSet<Point> set) {
        JsonArray a = new JsonArray();
        set.forEach(p -> a.add(Json.point(p)));
        return a;
    }

    /** A request the references decide: checked answer for answer. */
    private static Case ordinary(Random r, int id) {
        Layout l = RandomLayouts.layout(r);
        Shape s = RandomLayouts.shapeOf(r, l.size(), 3);
        List<TreeSet<Point>> table = Oracle.table(l);
        int op = r.nextInt(10);
        switch (op) {
            case 0, 1 -> {
                long x = r.nextInt((int) l.size());
                JsonObject q = request("apply", id);
                q.addProperty("layout", l.toString());
                q.add("shape", array(s.toArray()));
                q.add("coord", array(s.unflatten(x)));
                JsonObject e = new JsonObject();
                switch (r.nextInt(3)) {
                    case 0 -> e.add("points", pointsOf(table.get((int) x)));
                    case 1 -> {
                        q.addProperty("mode", "count");
                        e.addProperty("count", table.get((int) x).size());
                    }
                    default -> {
                        q.addProperty("mode", "stream");
                        e.add("points", pointsOf(table.get((int) x)));
                        e.addProperty("more", false);
                        e.addProperty("count", table.get((int) x).size());
                    }
                }
                return new Case(q.toString(), answer(e, id));
            }
            case 2 -> {
                long x = r.nextInt((int) l.size());
                Point p = table.get((int) x).first();
                if (r.nextBoolean()) {
                    p = p.plus(RandomLayouts.axis(r), r.nextInt(3) - 1);
                }
                JsonObject q = request("inverse", id);
                q.addProperty("layout", l.toString());
                q.add("shape", array(s.toArray()));
                q.add("point", Json.point(p));
                if (!Oracle.shardInjective(l)) {
                    return new Case(q.toString(), kind("invalid", id));
                }
                List<Long> pre = Oracle.preimages(l, p);
                if (pre.size() > 1) {
                    return new Case(q.toString(), kind("invalid", id));
                }
                JsonObject e = new JsonObject();
                e.add("coord", pre.isEmpty() ? JsonNull.INSTANCE : array(s.unflatten(pre.get(0))));
                return new Case(q.toString(), answer(e, id));
            }
            case 3 -> {
                JsonObject q = request("iters", id);
                q.addProperty("layout", l.toString());
                return new Case(q.toString(), a -> {
                    List<Iter> shard = iters(a.getAsJsonArray("shard"));
                    List<Iter> replica = iters(a.getAsJsonArray("replica"));
                    TreeMap<Axis, Long> offset = new TreeMap<>();
                    a.getAsJsonObject("offset").entrySet().forEach(en -> offset.put(Axis.of(en.getKey()),
                            en.getValue().getAsLong()));
                    assertEquals(l, new Layout(shard, replica, offset));
                });
            }
            case 4 -> {
                JsonObject q = request("canon", id);
                q.addProperty("layout", l.toString());
                return new Case(q.toString(), a -> assertEquals(table, Oracle.table(Layout.parse(a.get("layout").getAsString())),
                        a.toString()));
            }
            case 5 -> {
                JsonObject q = request("group", id);
                q.addProperty("layout", l.toString());
                q.add("shape", array(s.toArray()));
                if (!References.separable(l, s)) {
                    return new Case(q.toString(), kind("not_representable", id));
                }
                return new Case(q.toString(), a -> {
                    Layout g = Layout.parse(a.get("layout").getAsString());
                    assertEquals(table, Oracle.table(g));
                    JsonArray seps = a.getAsJsonArray("seps");
                    assertEquals(s.rank() + 1, seps.size());
                    for (int k = 0; k < s.rank(); k++) {
                        long product = 1;
                        for (int j = seps.get(k).getAsInt(); j < seps.get(k + 1).getAsInt(); j++) {
                            product *= g.shard().get(j).extent();
                        }
                        assertEquals(s.dim(k), product, "block " + k);
                    }
                });
            }
            case 6 -> {
                Layout b = r.nextBoolean() ? l.withReplica(RandomLayouts.replica(r)) : RandomLayouts.layout(r);
                JsonObject q = request("equiv", id);
                q.addProperty("a", l.toString());
                q.addProperty("b", b.toString());
                JsonObject e = new JsonObject();
                e.addProperty("equivalent", Oracle.sameMap(l, b));
                return new Case(q.toString(), answer(e, id));
            }
            case 7 -> {
                Layout inner = new Layout(List.of(), List.of(), new TreeMap<>());
                for (int attempt = 0; attempt < 20; attempt++) {
                    Layout c = r.nextBoolean() ? RandomLayouts.layout(r) : RandomLayouts.bare(r, 2);
                    if (c.size() * l.size() <= 1024 && c.replicaCount() * l.replicaCount() <= 16) {
                        inner = c;
                        break;
                    }
                }
                Shape innerShape = shapeOfRank(r, inner.size(), s.rank());
                JsonObject q = request("tile", id);
                q.addProperty("outer", l.toString());
                q.add("outer_shape", array(s.toArray()));
                q.addProperty("inner", inner.toString());
                q.add("inner_shape", array(innerShape.toArray()));
                if (!References.separable(l, s) || !References.separable(inner, innerShape)) {
                    return new Case(q.toString(), kind("not_representable", id));
                }
                List<TreeSet<Point>> expected = References.tile(l, s, inner, innerShape);
                long[] tiled = new long[s.rank()];
                for (int k = 0; k < tiled.length; k++) {
                    tiled[k] = s.dim(k) * innerShape.dim(k);
                }
                return new Case(q.toString(), a -> {
                    assertEquals(Tool.canonical(array(tiled)), Tool.canonical(a.get("shape")));
                    assertEquals(expected, Oracle.table(Layout.parse(a.get("layout").getAsString())));
                });
            }
            default -> {
                long[] b = new long[s.rank()];
                long[] w = new long[s.rank()];
                long boxSize = 1;
                for (int k = 0; k < b.length; k++) {
                    b[k] = r.nextInt((int) s.dim(k));
                    w[k] = 1 + r.nextInt((int) (s.dim(k) - b[k]));
                    boxSize *= w[k];
                }
                if (boxSize > 96) {
                    Arrays.fill(w, 1);
                }
                Region box = Region.at(b, w);
                JsonObject q = request("slice", id);
                q.addProperty("layout", l.toString());
                q.add("shape", array(s.toArray()));
                JsonArray region = new JsonArray();
                for (int k = 0; k < b.length; k++) {
                    region.add(array(b[k], b[k] + w[k]));
                }
                q.add("region", region);
                if (!References.sliceExists(l, s, box)) {
                    return new Case(q.toString(), kind("not_representable", id));
                }
                return new Case(q.toString(), a -> {
                    assertEquals(Tool.canonical(array(w)), Tool.canonical(a.get("shape")));
                    Layout sliced = Layout.parse(a.get("layout").getAsString());
                    List<TreeSet<Point>> part = Oracle.table(sliced);
                    Shape ws = Shape.of(w);
                    for (long z = 0; z < ws.size(); z++) {
                        long[] y = ws.unflatten(z);
                        long[] c = new long[y.length];
                        for (int k = 0; k < c.length; k++) {
                            c[k] = b[k] + y[k];
                        }
                        assertEquals(table.get((int) s.flatten(c)), part.get((int) z), "y = " + Arrays.toString(y));
                    }
                });
            }
        }
    }

    /** A random factorisation of {@code size} into exactly {@code rank} dimensions. */
    private static Shape shapeOfRank(Random r, long size, int rank) {
        long[] dims = new long[rank];
        long rest = size;
        for (int k = 0; k < rank - 1; k++) {
            List<Long> divisors = new ArrayList<>();
            for (long q = 1; q <= rest; q++) {
                if (rest % q == 0) {
                    divisors.add(q);
                }
            }
            dims[k] = divisors.get(r.nextInt(divisors.size()));
            rest /= dims[k];
        }
        dims[rank - 1] = rest;
        return Shape.of(dims);
    }

    private static List<Iter> iters(JsonArray a) {
        List<Iter> out = new ArrayList<>();
        for (JsonElement e : a) {
            JsonArray t = e.getAsJsonArray();
            out.add(new Iter(t.get(0).getAsLong(), t.get(1).getAsLong(), Axis.of(t.get(2).getAsString())));
        }
        return out;
    }

    /** A replica set past the point cap on an axis the shard does not use: refused as a list, counted exactly. */
    private static Case hugeReplicas(Random r, int id) {
        long f = 65_537 + (long) (r.nextDouble() * (1L << (17 + r.nextInt(24))));
        long t = 1 + r.nextInt(5);
        JsonObject q = request("apply", id);
        q.addProperty("layout", "S[4:1] + R[" + f + ":" + t + "@laneid]");
        q.add("shape", array(4));
        q.add("coord", array(r.nextInt(4)));
        if (r.nextBoolean()) {
            return new Case(q.toString(), kind("too_large", id));
        }
        q.addProperty("mode", "count");
        JsonObject e = new JsonObject();
        e.addProperty("count", f);
        return new Case(q.toString(), answer(e, id));
    }

    /**
     * {@code S[2:s] + o} with s and o near 2^62 .. 2^63: valid exactly when every coordinate fits and, with an offset,
     * span + offset does too (1 + |s| + |o|); without one the span may be 2^63 ({@code S[2:2^63-1]}); L(1) = {s + o}.
     */
    private static Case edgeNumbers(Random r, int id) {
        BigInteger max = BigInteger.valueOf(Long.MAX_VALUE);
        long s = (r.nextBoolean() ? 1 : -1) * (Long.MAX_VALUE - (r.nextBoolean() ? r.nextInt(4) : r.nextLong() >>> 2));
        long o = r.nextInt(3) == 0 ? 0 : (r.nextBoolean() ? 1 : -1) * (r.nextBoolean() ? r.nextInt(8) : r.nextLong() >>> 1);
        String layout = "S[2:" + s + "]" + (o == 0 ? "" : (o > 0 ? " + " + o : " - " + (-o)));
        JsonObject q = request("apply", id);
        q.addProperty("layout", layout);
        q.add("shape", array(2));
        q.add("coord", array(1));
        BigInteger span = BigInteger.ONE.add(BigInteger.valueOf(s).abs()).add(BigInteger.valueOf(o).abs());
        if (o != 0 && span.compareTo(max) > 0) {
            return new Case(q.toString(), kind("invalid", id));
        }
        JsonObject e = new JsonObject();
        JsonArray points = new JsonArray();
        points.add(Json.point(Point.of("m", s + o)));
        e.add("points", points);
        return new Case(q.toString(), answer(e, id));
    }

    private static final String[] NON_ASCII = {"\u0660", "\u0668", "\u06f4", "\u0966", "\uff10", "\uff18", "\u2003",
        "\u00a0", "\u3000", "\u200b", "\u00b2", "\u2167", "\ud835\udfd8"};

    /** A valid layout with one character swapped for a non-ASCII digit or blank: a parse error. */
    private static Case nonAscii(Random r, int id) {
        String text = RandomLayouts.layout(r).toString();
        int at = r.nextInt(text.length() + 1);
        String bad = NON_ASCII[r.nextInt(NON_ASCII.length)];
        String garbled = r.nextBoolean() || at == text.length() ? text.substring(0, at) + bad + text.substring(at)
                : text.substring(0, at) + bad + text.substring(at + 1);
        JsonObject q = request("canon", id);
        q.addProperty("layout", garbled);
        return new Case(q.toString(), kind("parse", id));
    }

    private static Case deepJson(Random r, int id) {
        int depth = 65 + r.nextInt(r.nextBoolean() ? 100 : 30_000);
        String inner = "[".repeat(depth) + "]".repeat(depth);
        String line = r.nextBoolean() ? inner : "{\"op\":\"canon\",\"layout\":\"S[4:1]\",\"x\":" + inner + ",\"id\":" + id + "}";
        return new Case(line, kind("parse", id));
    }

    private static Case truncated(Random r, int id) {
        JsonObject q = request("apply", id);
        q.addProperty("layout", RandomLayouts.layout(r).toString());
        q.add("shape", array(4));
        String text = q.toString();
        return new Case(text.substring(0, 1 + r.nextInt(text.length() - 1)), kind("parse", id));
    }

    private static Case wrongTypes(Random r, int id) {
        JsonObject q = request("apply", id);
        q.addProperty("layout", "S[8:1]");
        q.add("shape", array(8));
        q.add("coord", array(3));
        switch (r.nextInt(6)) {
            case 0 -> q.addProperty("shape", "8");
            case 1 -> {
                JsonArray c = new JsonArray();
                c.add(1.5);
                q.add("coord", c);
            }
            case 2 -> q.addProperty("layout", 5);
            case 3 -> q.addProperty("mode", "all");
            case 4 -> {
                JsonArray c = new JsonArray();
                c.add(new BigInteger("9223372036854775808"));
                q.add("coord", c);
            }
            default -> q.remove("coord");
        }
        return new Case(q.toString(), kind("invalid", id));
    }

    private static Case overLong(Random r, int id) {
        JsonObject q = request("canon", id);
        q.addProperty("layout", "S[4:1]");
        q.addProperty("pad", "x".repeat(REQUEST_CAP + r.nextInt(1000)));
        return new Case(q.toString(), a -> {
            assertEquals("too_large", a.get("kind").getAsString());
            assertTrue(a.get("error").getAsString().contains("more than the cap of " + REQUEST_CAP + " bytes"));
        });
    }

    /** Thousands of extent-1 iters: the canonical form drops them all, and the maps never look at them. */
    private static Case manyIters(Random r, int id) {
        int n = 500 + r.nextInt(3000);
        String layout = "S[(" + "1,".repeat(n - 1) + "8):(" + "3,".repeat(n - 1) + "1)] + R[2:4@warpid]";
        long x = r.nextInt(8);
        JsonObject e = new JsonObject();
        JsonObject q;
        switch (r.nextInt(3)) {
            case 0 -> {
                q = request("canon", id);
                e.addProperty("layout", "S[8:1] + R[2:4@warpid]");
            }
            case 1 -> {
                q = request("apply", id);
                q.add("shape", array(8));
                q.add("coord", array(x));
                e.add("points", pointsOf(new TreeSet<>(List.of(Point.of("m", x), Point.of("m", x, "warpid", 4)))));
            }
            default -> {
                q = request("inverse", id);
                q.add("shape", array(8));
                q.add("point", Json.point(Point.of("m", x, "warpid", 4 * r.nextInt(2))));
                e.add("coord", array(x));
            }
        }
        q.addProperty("layout", layout);
        return new Case(q.toString(), answer(e, id));
    }

    private static Case hugeShape(Random r, int id) {
        JsonObject q = request(r.nextBoolean() ? "apply" : "group", id);
        q.addProperty("layout", "S[8:1]");
        long d = (1L << 32) + r.nextInt(1000);
        q.add("shape", array(d, d));
        q.add("coord", array(0, 0));
        return new Case(q.toString(), kind("invalid", id));
    }

    private static Case unknownOp(Random r, int id) {
        JsonObject q = request(List.of("transpose", "APPLY", "", "apply ").get(r.nextInt(4)), id);
        q.addProperty("layout", "S[8:1]");
        return new Case(q.toString(), kind("invalid", id));
    }
}
