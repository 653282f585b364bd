package org.axe4j.cli;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.axe4j.layout.AxeException;

/**
 * {@code axe layout batch}: JSON Lines in, one JSON line out per request, in order. A bad request gets
 * {@code {"error": message, "kind": "parse"|"invalid"|"not_representable"}} and the loop goes on;
 * blank lines are skipped; stdout carries only answers. A request's {@code "id"} is echoed.
 */
final class Batch {
    private Batch() {}

    /** Answers every line of {@code in}; returns 0 at end of input. */
    static int run(InputStream in, PrintStream out) throws IOException {
        BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
        for (String line = reader.readLine(); line != null; line = reader.readLine()) {
            if (line.isBlank()) {
                continue;
            }
            out.println(Json.write(answerLine(line)));
            out.flush();
        }
        return 0;
    }

    /** The answer to one request line; never throws for bad input. */
    static JsonObject answerLine(String line) {
        JsonElement id = null;
        try {
            JsonElement request = Json.parseStrict(line);
            if (!request.isJsonObject()) {
                throw new AxeException(AxeException.Kind.INVALID, "request must be a JSON object, got " + line.strip());
            }
            id = request.getAsJsonObject().get("id");
            JsonObject answer = Operations.answer(request.getAsJsonObject());
            return withId(answer, id);
        } catch (AxeException e) {
            return withId(error(e.getMessage(), e.kind().jsonName()), id);
        } catch (RuntimeException | StackOverflowError e) {
            // A defect, not bad input: answer it (kind "internal") rather than end the stream.
            return withId(error("internal error: " + e, "internal"), id);
        }
    }

    static JsonObject error(String message, String kind) {
        JsonObject o = new JsonObject();
        o.addProperty("error", message);
        o.addProperty("kind", kind);
        return o;
    }

    private static JsonObject withId(JsonObject answer, JsonElement id) {
        if (id != null) {
            answer.add("id", id);
        }
        return answer;
    }
}
