package org.axe4j.cli;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;
import com.google.gson.stream.JsonReader;
import com.google.gson.stream.JsonToken;
import java.io.IOException;
import java.io.StringReader;
import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import org.axe4j.layout.AxeException;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Iter;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Point;

/** Strict JSON reading and the JSON forms of points, iters and layouts used by the tool's answers. */
final class Json {
    private static final Gson GSON = new GsonBuilder().disableHtmlEscaping().serializeNulls().create();

    private Json() {}

    /** Parses one complete JSON document strictly (no unquoted names, no trailing text); PARSE error otherwise. */
    static JsonElement parseStrict(String text) {
        try (JsonReader reader = new JsonReader(new StringReader(text))) {
            reader.setLenient(false);
            JsonElement e = GSON.getAdapter(JsonElement.class).read(reader);
            if (reader.peek() != JsonToken.END_DOCUMENT) {
                throw new AxeException(AxeException.Kind.PARSE, "malformed JSON: text after the end of the request");
            }
            return e;
        } catch (IOException | RuntimeException e) {
            // Gson reports bad text as IOException, JsonParseException, IllegalStateException or, for a bad
            // unicode escape, NumberFormatException: all of them are unreadable input here.
            throw new AxeException(AxeException.Kind.PARSE, "malformed JSON: " + e.getMessage());
        }
    }

    static String write(JsonElement e) {
        return GSON.toJson(e);
    }

    /** An exact 64-bit integer, or empty if the element is anything else (2.5, "8", true, 1e30). */
    static java.util.OptionalLong integer(JsonElement e) {
        if (e == null || !e.isJsonPrimitive() || !((JsonPrimitive) e).isNumber()) {
            return java.util.OptionalLong.empty();
        }
        try {
            return java.util.OptionalLong.of(new BigDecimal(e.getAsString()).longValueExact());
        } catch (ArithmeticException | NumberFormatException ex) {
            return java.util.OptionalLong.empty();
        }
    }

    /** {@code {"laneid":8,"reg":1,"warpid":6}}: the non-zero coordinates of a point. */
    static JsonObject point(Point p) {
        JsonObject o = new JsonObject();
        for (Map.Entry<Axis, Long> e : p.coords().entrySet()) {
            o.addProperty(e.getKey().name(), e.getValue());
        }
        return o;
    }

    static JsonArray points(List<Point> points) {
        JsonArray a = new JsonArray();
        points.forEach(p -> a.add(point(p)));
        return a;
    }

    /** {@code [[e,s,"axis"],...]}. */
    static JsonArray iters(List<Iter> iters) {
        JsonArray a = new JsonArray();
        for (Iter it : iters) {
            JsonArray t = new JsonArray();
            t.add(it.extent());
            t.add(it.stride());
            t.add(it.axis().name());
            a.add(t);
        }
        return a;
    }

    static JsonObject offset(Layout l) {
        JsonObject o = new JsonObject();
        l.offset().forEach((a, v) -> o.addProperty(a.name(), v));
        return o;
    }

    static JsonArray longs(Iterable<? extends Number> values) {
        JsonArray a = new JsonArray();
        values.forEach(a::add);
        return a;
    }

    static JsonArray longs(long[] values) {
        JsonArray a = new JsonArray();
        for (long v : values) {
            a.add(v);
        }
        return a;
    }
}
