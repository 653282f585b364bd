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

    /** Deepest nesting of arrays and objects a request may have (a request needs 3). */
    static final int MAX_DEPTH = 64;

    /** Longest request text an error message repeats; longer ones are cut (see {@link #abbreviate}). */
    static final int ECHO_LIMIT = 400;

    /**
     * Parses one complete JSON document strictly (no unquoted names, no trailing text, nesting at most
     * {@link #MAX_DEPTH}); PARSE error otherwise.
     */
    static JsonElement parseStrict(String text) {
        int depth = depth(text);
        if (depth > MAX_DEPTH) {
            throw new AxeException(AxeException.Kind.PARSE, "malformed JSON: arrays and objects nest deeper than "
                    + MAX_DEPTH + " levels");
        }
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

    /**
     * The deepest nesting of {@code [} and {@code {} outside strings, stopping early past {@link #MAX_DEPTH}
     * (so that the reader, which recurses per level, never meets a document deeper than that).
     */
    static int depth(String text) {
        int depth = 0;
        int max = 0;
        boolean inString = false;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (inString) {
                if (c == '\\') {
                    i++;
                } else if (c == '"') {
                    inString = false;
                }
            } else if (c == '"') {
                inString = true;
            } else if (c == '[' || c == '{') {
                max = Math.max(max, ++depth);
                if (max > MAX_DEPTH) {
                    return max;
                }
            } else if (c == ']' || c == '}') {
                depth--;
            }
        }
        return max;
    }

    static String write(JsonElement e) {
        return GSON.toJson(e);
    }

    /** {@code e} as JSON text, cut to {@link #ECHO_LIMIT} characters: what error messages repeat of a request. */
    static String abbreviate(JsonElement e) {
        return abbreviate(write(e));
    }

    static String abbreviate(String text) {
        if (text.length() <= ECHO_LIMIT) {
            return text;
        }
        return text.substring(0, ECHO_LIMIT) + "... (" + text.length() + " characters)";
    }

    /** Bytes of {@code s} in UTF-8, without encoding it. */
    static long utf8Length(String s) {
        long n = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                n += 1;
            } else if (c < 0x800) {
                n += 2;
            } else if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                n += 4;
                i++;
            } else {
                n += 3;
            }
        }
        return n;
    }

    /** Longest number text read as an integer (longer ones are refused before any arithmetic on them). */
    static final int NUMBER_LIMIT = 64;

    /**
     * An exact 64-bit integer written in at most {@link #NUMBER_LIMIT} characters ({@code 8}, {@code 8.0},
     * {@code 8e0}), or empty if the element is anything else (2.5, "8", true, 1e30).
     */
    static java.util.OptionalLong integer(JsonElement e) {
        if (e == null || !e.isJsonPrimitive() || !((JsonPrimitive) e).isNumber()
                || e.getAsString().length() > NUMBER_LIMIT) {
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
