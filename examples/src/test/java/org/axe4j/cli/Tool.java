package org.axe4j.cli;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/** Runs the tool in-process with captured streams. */
final class Tool {
    record Result(int code, String out, String err) {}

    private Tool() {}

    static Result withInput(String stdin, String... args) {
        return run(new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)), args);
    }

    static Result run(InputStream in, String... args) {
        return run(in, java.util.Map.of(), args);
    }

    /** Runs with {@code env} as the environment the caps are read from (none of the test JVM's own). */
    static Result run(InputStream in, java.util.Map<String, String> env, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Main.run(args, in, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), env);
        return new Result(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    static Result run(String... args) {
        return withInput("", args);
    }

    /**
     * JSON text with object keys sorted and numbers as written: Gson's own equality compares numbers it parsed
     * as doubles, so 9223372036854775804 and 9223372036854775805 would compare equal.
     */
    static String canonical(com.google.gson.JsonElement e) {
        if (e.isJsonObject()) {
            java.util.TreeMap<String, String> sorted = new java.util.TreeMap<>();
            e.getAsJsonObject().entrySet().forEach(en -> sorted.put(en.getKey(), canonical(en.getValue())));
            StringBuilder sb = new StringBuilder("{");
            sorted.forEach((k, v) -> sb.append(sb.length() > 1 ? "," : "").append(new com.google.gson.JsonPrimitive(k))
                    .append(':').append(v));
            return sb.append('}').toString();
        }
        if (e.isJsonArray()) {
            StringBuilder sb = new StringBuilder("[");
            e.getAsJsonArray().forEach(x -> sb.append(sb.length() > 1 ? "," : "").append(canonical(x)));
            return sb.append(']').toString();
        }
        return e.isJsonPrimitive() && e.getAsJsonPrimitive().isNumber() ? e.getAsString() : e.toString();
    }
}
