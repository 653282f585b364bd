package org.axe4j.cli;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import org.axe4j.layout.AxeException;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Shape;
import org.axe4j.layout.SwizzledLayout;

/**
 * One request of the tool ({@code {"op":"apply","layout":...}}) with typed, checked access to its
 * fields. Every error names the operation and the field, and is INVALID (PARSE for layout text).
 */
final class Request {
    private final JsonObject json;
    private final String op;

    Request(JsonObject json, String op) {
        this.json = json;
        this.op = op;
    }

    String op() {
        return op;
    }

    JsonObject json() {
        return json;
    }

    private JsonElement field(String name) {
        JsonElement e = json.get(name);
        if (e == null || e.isJsonNull()) {
            throw invalid("missing field '" + name + "'");
        }
        return e;
    }

    AxeException invalid(String what) {
        return new AxeException(AxeException.Kind.INVALID, op + ": " + what + " in request " + Json.abbreviate(json));
    }

    /** The optional string field {@code mode}: {@code choices[0]} when absent, else one of {@code choices}. */
    String mode(String... choices) {
        JsonElement e = json.get("mode");
        if (e == null || e.isJsonNull()) {
            return choices[0];
        }
        if (e.isJsonPrimitive() && e.getAsJsonPrimitive().isString()) {
            for (String c : choices) {
                if (c.equals(e.getAsString())) {
                    return c;
                }
            }
        }
        throw invalid("field 'mode' must be one of \"" + String.join("\", \"", choices) + "\", got "
                + Json.abbreviate(e));
    }

    /** A layout in text form. */
    Layout layout(String name) {
        JsonElement e = field(name);
        if (!e.isJsonPrimitive() || !e.getAsJsonPrimitive().isString()) {
            throw invalid("field '" + name + "' must be a layout in text form, e.g. \"S[(8,16):(16,1)]\", got "
                    + Json.abbreviate(e));
        }
        try {
            return Layout.parse(e.getAsString());
        } catch (AxeException ex) {
            throw new AxeException(ex.kind(), op + ": field '" + name + "': " + ex.getMessage(), ex);
        }
    }

    /** True when field {@code name} is a swizzled layout's text ({@code Swizzle<B,M,S> o ...}). */
    boolean isSwizzled(String name) {
        JsonElement e = json.get(name);
        return e != null && e.isJsonPrimitive() && e.getAsJsonPrimitive().isString()
                && SwizzledLayout.isSwizzledText(e.getAsString());
    }

    /** A swizzled layout in text form, {@code Swizzle<B,M,S> o S[...]}. */
    SwizzledLayout swizzled(String name) {
        JsonElement e = field(name);
        try {
            return SwizzledLayout.parse(e.getAsString());
        } catch (AxeException ex) {
            throw new AxeException(ex.kind(), op + ": field '" + name + "': " + ex.getMessage(), ex);
        }
    }

    /** An array of integers. */
    long[] longs(String name) {
        JsonElement e = field(name);
        if (!e.isJsonArray()) {
            throw invalid("field '" + name + "' must be an array of integers, got " + Json.abbreviate(e));
        }
        JsonArray a = e.getAsJsonArray();
        long[] out = new long[a.size()];
        for (int i = 0; i < out.length; i++) {
            OptionalLong v = Json.integer(a.get(i));
            if (v.isEmpty()) {
                throw invalid("field '" + name + "' element " + i + " must be a 64-bit integer, got "
                        + Json.abbreviate(a.get(i)));
            }
            out[i] = v.getAsLong();
        }
        return out;
    }

    /** One 64-bit integer. */
    long integer(String name) {
        JsonElement e = field(name);
        OptionalLong v = Json.integer(e);
        if (v.isEmpty()) {
            throw invalid("field '" + name + "' must be a 64-bit integer, got " + Json.abbreviate(e));
        }
        return v.getAsLong();
    }

    Shape shape(String name) {
        long[] dims = longs(name);
        try {
            return Shape.of(dims);
        } catch (AxeException ex) {
            throw new AxeException(ex.kind(), op + ": field '" + name + "': " + ex.getMessage(), ex);
        }
    }

    /** An array of shapes, {@code [[8,16],[4,32]]}; an error names the element. */
    List<Shape> shapes(String name) {
        JsonElement e = field(name);
        if (!e.isJsonArray()) {
            throw invalid("field '" + name + "' must be an array of shapes (arrays of integers), got "
                    + Json.abbreviate(e));
        }
        JsonArray a = e.getAsJsonArray();
        List<Shape> out = new ArrayList<>();
        for (int i = 0; i < a.size(); i++) {
            String what = name + "[" + i + "]";
            if (!a.get(i).isJsonArray()) {
                throw invalid("field '" + what + "' must be an array of integers, got " + Json.abbreviate(a.get(i)));
            }
            JsonArray dims = a.get(i).getAsJsonArray();
            long[] values = new long[dims.size()];
            for (int k = 0; k < values.length; k++) {
                OptionalLong v = Json.integer(dims.get(k));
                if (v.isEmpty()) {
                    throw invalid("field '" + what + "' element " + k + " must be a 64-bit integer, got "
                            + Json.abbreviate(dims.get(k)));
                }
                values[k] = v.getAsLong();
            }
            try {
                out.add(Shape.of(values));
            } catch (AxeException ex) {
                throw new AxeException(ex.kind(), op + ": field '" + what + "': " + ex.getMessage(), ex);
            }
        }
        return out;
    }

    /** True when the request has field {@code name} (not null): for optional fields. */
    boolean has(String name) {
        JsonElement e = json.get(name);
        return e != null && !e.isJsonNull();
    }

    /** A string. */
    String string(String name) {
        JsonElement e = field(name);
        if (!e.isJsonPrimitive() || !e.getAsJsonPrimitive().isString()) {
            throw invalid("field '" + name + "' must be a string, got " + Json.abbreviate(e));
        }
        return e.getAsString();
    }

    /** A boolean ({@code true} or {@code false}). */
    boolean bool(String name) {
        JsonElement e = field(name);
        if (!e.isJsonPrimitive() || !e.getAsJsonPrimitive().isBoolean()) {
            throw invalid("field '" + name + "' must be true or false, got " + Json.abbreviate(e));
        }
        return e.getAsBoolean();
    }

    /** {@code [[begin,end],...]}: half-open intervals, one per dimension. */
    List<long[]> intervals(String name) {
        JsonElement e = field(name);
        if (!e.isJsonArray()) {
            throw invalid("field '" + name + "' must be an array of [begin,end] pairs, got " + Json.abbreviate(e));
        }
        List<long[]> out = new ArrayList<>();
        for (JsonElement pair : e.getAsJsonArray()) {
            OptionalLong b = pair.isJsonArray() && pair.getAsJsonArray().size() == 2
                    ? Json.integer(pair.getAsJsonArray().get(0)) : OptionalLong.empty();
            OptionalLong en = pair.isJsonArray() && pair.getAsJsonArray().size() == 2
                    ? Json.integer(pair.getAsJsonArray().get(1)) : OptionalLong.empty();
            if (b.isEmpty() || en.isEmpty()) {
                throw invalid("field '" + name + "' must hold [begin,end] integer pairs, got " + Json.abbreviate(pair));
            }
            out.add(new long[] {b.getAsLong(), en.getAsLong()});
        }
        return out;
    }
}
