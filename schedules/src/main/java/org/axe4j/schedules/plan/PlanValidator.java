package org.axe4j.schedules.plan;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.gson.JsonPrimitive;
import java.util.Map;

/**
 * Checks a plan's JSON against {@link PlanSchema}, as {@code axe4j.plans} does in Python: known kind, the schema
 * version, every required field present with its type (recursively), no unknown field. A mismatch throws
 * {@link IllegalArgumentException} naming the kind, the field path and what is wrong.
 */
public final class PlanValidator {
    private PlanValidator() {}

    public static void validate(String planJson) {
        validate(JsonParser.parseString(planJson));
    }

    @SuppressWarnings("unchecked")
    public static void validate(JsonElement plan) {
        if (!plan.isJsonObject()) {
            throw new IllegalArgumentException("plan: expected an object, got " + plan);
        }
        JsonObject o = plan.getAsJsonObject();
        JsonElement kindElement = o.get("kind");
        if (kindElement == null || !isString(kindElement)) {
            throw new IllegalArgumentException("plan: field 'kind' is missing or not a string");
        }
        String kind = kindElement.getAsString();
        Map<String, Object> schema = PlanSchema.schema();
        Object record = ((Map<String, Object>) schema.get("kinds")).get(kind);
        if (record == null) {
            throw new IllegalArgumentException("plan kind '" + kind + "': unknown kind (kinds: "
                    + ((Map<String, Object>) schema.get("kinds")).keySet() + ")");
        }
        JsonElement version = o.get("schema");
        if (version == null || !isNumber(version) || version.getAsDouble() != PlanSchema.VERSION) {
            throw new IllegalArgumentException("plan kind '" + kind + "': field 'schema' is " + version
                    + ", expected schema version " + PlanSchema.VERSION);
        }
        JsonObject rest = o.deepCopy();
        rest.remove("kind");
        rest.remove("schema");
        record(rest, (String) record, kind, "");
    }

    @SuppressWarnings("unchecked")
    private static void record(JsonObject given, String name, String kind, String path) {
        JsonObject o = withoutInnerKind(given, name, kind, path);
        Map<String, Object> fields = (Map<String, Object>) ((Map<String, Object>) PlanSchema.schema().get("records"))
                .get(name);
        for (String key : o.keySet()) {
            if (!fields.containsKey(key)) {
                throw fail(kind, path + key, "unknown field (fields of " + name + ": " + fields.keySet() + ")");
            }
        }
        fields.forEach((field, type) -> {
            boolean optional = type instanceof Map<?, ?> m && m.containsKey("optional");
            Object t = optional ? ((Map<String, Object>) type).get("optional") : type;
            JsonElement v = o.get(field);
            if (v == null || v.isJsonNull()) {
                if (!optional) {
                    throw fail(kind, path + field, "missing (required by " + name + ")");
                }
                return;
            }
            value(v, t, kind, path + field);
        });
    }

    /** A plan inside a plan carries its own kind (that of its record) and schema: the fields without them. */
    @SuppressWarnings("unchecked")
    private static JsonObject withoutInnerKind(JsonObject o, String name, String kind, String path) {
        Map<String, Object> kinds = (Map<String, Object>) PlanSchema.schema().get("kinds");
        if (path.isEmpty() || !kinds.containsValue(name)) {
            return o;
        }
        JsonObject out = o.deepCopy();
        JsonElement inner = out.remove("kind");
        out.remove("schema");
        if (inner == null || !isString(inner) || !name.equals(kinds.get(inner.getAsString()))) {
            throw fail(kind, path + "kind", "is " + inner + ", not the kind of " + name);
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    private static void value(JsonElement v, Object type, String kind, String path) {
        if (type instanceof String scalar) {
            boolean ok = switch (scalar) {
                case "int", "long" -> isNumber(v) && isWhole(v.getAsJsonPrimitive());
                case "float" -> isNumber(v);
                case "str" -> isString(v);
                case "bool" -> v.isJsonPrimitive() && v.getAsJsonPrimitive().isBoolean();
                default -> throw new IllegalStateException("schema type " + scalar);
            };
            if (!ok) {
                throw fail(kind, path, "expected " + scalar + ", got " + v);
            }
            return;
        }
        Map<String, Object> t = (Map<String, Object>) type;
        if (t.containsKey("list")) {
            if (!v.isJsonArray()) {
                throw fail(kind, path, "expected a list, got " + v);
            }
            for (int i = 0; i < v.getAsJsonArray().size(); i++) {
                value(v.getAsJsonArray().get(i), t.get("list"), kind, path + "[" + i + "]");
            }
        } else if (t.containsKey("map")) {
            if (!v.isJsonObject()) {
                throw fail(kind, path, "expected an object (map), got " + v);
            }
            for (Map.Entry<String, JsonElement> e : v.getAsJsonObject().entrySet()) {
                value(e.getValue(), t.get("map"), kind, path + "." + e.getKey());
            }
        } else {
            if (!v.isJsonObject()) {
                throw fail(kind, path, "expected an object (" + t.get("record") + "), got " + v);
            }
            record(v.getAsJsonObject(), (String) t.get("record"), kind, path + ".");
        }
    }

    private static boolean isNumber(JsonElement v) {
        return v.isJsonPrimitive() && v.getAsJsonPrimitive().isNumber();
    }

    private static boolean isString(JsonElement v) {
        return v.isJsonPrimitive() && v.getAsJsonPrimitive().isString();
    }

    private static boolean isWhole(JsonPrimitive p) {
        return p.getAsBigDecimal().stripTrailingZeros().scale() <= 0;
    }

    private static IllegalArgumentException fail(String kind, String path, String what) {
        return new IllegalArgumentException("plan kind '" + kind + "': field '" + path + "': " + what);
    }
}
