package org.axe4j.schedules.plan;

import com.google.gson.GsonBuilder;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The plan schema, derived from the plan records' components: {@code {"schema": VERSION, "kinds": {kind: record},
 * "records": {record: {field: type}}}}. A type is {@code "int"}, {@code "long"}, {@code "float"}, {@code "str"},
 * {@code "bool"}, {@code {"list": T}}, {@code {"map": T}} (string keys), {@code {"record": name}}, or
 * {@code {"optional": T}} for a {@link MayBeAbsent} component. {@code python/axe4j/plan_schema.json} is
 * {@link #json()} ({@code make plan-schema}); {@code PlanSchemaTest} fails when they differ.
 */
public final class PlanSchema {
    /** Written into every plan as {@code "schema"}; raise it when a record changes its fields. */
    public static final int VERSION = 2;

    private static final Map<String, Class<?>> KINDS = kinds();
    private static final Map<String, Object> SCHEMA = build();

    private PlanSchema() {}

    /** Plan kind -> its record class, in the order {@link SchedulePlan} permits them. */
    public static Map<String, Class<?>> kindClasses() {
        return KINDS;
    }

    public static String kindOf(Class<?> plan) {
        PlanKind kind = plan.getAnnotation(PlanKind.class);
        if (kind == null) {
            throw new IllegalArgumentException(plan.getName() + " is not a plan record (no @PlanKind)");
        }
        return kind.value();
    }

    /** The schema as a JSON-ready tree (see the class comment). */
    public static Map<String, Object> schema() {
        return SCHEMA;
    }

    /** The schema as the text of {@code python/axe4j/plan_schema.json}: two-space indented, newline-terminated. */
    public static String json() {
        return new GsonBuilder().setPrettyPrinting().disableHtmlEscaping().create().toJson(SCHEMA) + "\n";
    }

    /** The JSON field name of a component: snake_case, a name in capitals ({@code M}, {@code A}) as it
     * is, a {@link FieldName} as given. */
    public static String fieldName(RecordComponent c) {
        FieldName given = c.getAnnotation(FieldName.class);
        if (given != null) {
            return given.value();
        }
        String name = c.getName();
        if (name.equals(name.toUpperCase())) {
            return name;
        }
        StringBuilder out = new StringBuilder();
        for (char ch : name.toCharArray()) {
            if (Character.isUpperCase(ch)) {
                out.append('_').append(Character.toLowerCase(ch));
            } else {
                out.append(ch);
            }
        }
        return out.toString();
    }

    /** The schema name of a record: {@code Outer.Inner} for a nested one, else its simple name. */
    public static String recordName(Class<?> record) {
        Class<?> outer = record.getEnclosingClass();
        return outer == null ? record.getSimpleName() : outer.getSimpleName() + "." + record.getSimpleName();
    }

    /** Prints {@link #json()} (written to python/axe4j/plan_schema.json by {@code make plan-schema}). */
    public static void main(String[] args) {
        System.out.print(json());
    }

    private static Map<String, Class<?>> kinds() {
        Map<String, Class<?>> out = new LinkedHashMap<>();
        for (Class<?> c : SchedulePlan.class.getPermittedSubclasses()) {
            Class<?> before = out.put(kindOf(c), c);
            if (before != null) {
                throw new IllegalStateException("plan kind " + kindOf(c) + " is claimed by " + before.getName()
                        + " and " + c.getName());
            }
        }
        return out;
    }

    private static Map<String, Object> build() {
        Map<String, Object> kinds = new LinkedHashMap<>();
        Map<String, Object> records = new LinkedHashMap<>();
        KINDS.forEach((kind, c) -> {
            kinds.put(kind, recordName(c));
            describe(c, records);
        });
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("schema", VERSION);
        out.put("kinds", kinds);
        out.put("records", records);
        return out;
    }

    private static void describe(Class<?> record, Map<String, Object> records) {
        String name = recordName(record);
        if (records.containsKey(name)) {
            if (records.get(name) == null) {
                throw new IllegalStateException("plan record " + name + " contains itself");
            }
            return;
        }
        if (!record.isRecord()) {
            throw new IllegalStateException(record.getName() + " is not a record");
        }
        records.put(name, null);
        Map<String, Object> fields = new LinkedHashMap<>();
        for (RecordComponent c : record.getRecordComponents()) {
            Object type = type(c.getGenericType(), record.getSimpleName() + "." + c.getName(), records);
            fields.put(fieldName(c), c.isAnnotationPresent(MayBeAbsent.class) ? Map.of("optional", type) : type);
        }
        records.put(name, fields);
    }

    private static Object type(Type t, String where, Map<String, Object> records) {
        if (t instanceof ParameterizedType p) {
            Type raw = p.getRawType();
            Type[] args = p.getActualTypeArguments();
            if (raw == List.class) {
                return Map.of("list", type(args[0], where, records));
            }
            if (raw == Map.class && args[0] == String.class) {
                return Map.of("map", type(args[1], where, records));
            }
            throw new IllegalStateException(where + ": type " + t + " has no plan schema (List<X> or Map<String, X>)");
        }
        if (t == int.class || t == Integer.class) {
            return "int";
        }
        if (t == long.class || t == Long.class) {
            return "long";
        }
        if (t == double.class || t == Double.class) {
            return "float";
        }
        if (t == boolean.class || t == Boolean.class) {
            return "bool";
        }
        if (t == String.class) {
            return "str";
        }
        if (t instanceof Class<?> c && c.isRecord()) {
            describe(c, records);
            return Map.of("record", recordName(c));
        }
        throw new IllegalStateException(where + ": type " + t + " has no plan schema");
    }
}
