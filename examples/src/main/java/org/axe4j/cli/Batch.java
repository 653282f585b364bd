package org.axe4j.cli;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.util.function.Consumer;
import org.axe4j.layout.AxeException;
import org.axe4j.layout.Budget;

/**
 * {@code axe layout batch}: JSON Lines in, one JSON line out per request, in order. A bad request gets
 * {@code {"error": message, "kind": "parse"|"invalid"|"not_representable"|"too_large"|"internal"}} and the
 * loop goes on; blank lines are skipped; stdout carries only answers. A request's {@code "id"} is echoed.
 *
 * <p>Every request runs under the {@link Budget}: a line longer than its request cap, an enumeration over
 * its point cap, an answer over its byte cap, a request over its time cap, and a request that runs the JVM
 * out of memory or stack are each that request's error (kind {@code too_large}, or {@code internal} for a
 * stack overflow, which is a defect), and the stream goes on. A streamed apply ({@code "mode":"stream"})
 * answers in several lines. The loop stops as soon as its output is closed.
 */
final class Batch {
    /** Longest error message an answer carries; longer ones are cut. */
    static final int MESSAGE_LIMIT = 4096;

    private Batch() {}

    /** Thrown by the line writer when the reader of the output has gone. */
    static final class OutputClosed extends RuntimeException {
        private static final long serialVersionUID = 1L;

        OutputClosed() {
            super("output closed", null, false, false);
        }
    }

    /** Answers every line of {@code in}; returns 0 at end of input, {@link Main#OUTPUT_CLOSED} when the output closes. */
    static int run(InputStream in, PrintStream out, Budget budget) throws IOException {
        RequestLines lines = new RequestLines(in, budget.maxRequestBytes());
        Consumer<String> emit = text -> {
            out.println(text);
            out.flush();
            if (out.checkError()) {
                throw new OutputClosed();
            }
        };
        try {
            for (RequestLines.Line line = lines.next(); line != null; line = lines.next()) {
                if (line.tooLong()) {
                    emit.accept(Json.write(error(Budget.tooLarge("the request line has more than " + line.bytes()
                            + " bytes, more than the cap of " + budget.maxRequestBytes() + " bytes").getMessage(),
                            AxeException.Kind.TOO_LARGE.jsonName())));
                } else if (line.malformed()) {
                    emit.accept(Json.write(error("malformed request: the line is not valid UTF-8", "parse")));
                } else if (!line.text().isBlank()) {
                    answer(line.text(), budget, emit);
                }
            }
        } catch (OutputClosed closed) {
            return Main.OUTPUT_CLOSED;
        }
        return 0;
    }

    /** The answer to one request line under the default budget, as one JSON object (tests, single lines). */
    static JsonObject answerLine(String line) {
        JsonObject[] last = new JsonObject[1];
        answer(line, Budget.DEFAULT, text -> last[0] = Json.parseStrict(text).getAsJsonObject());
        return last[0];
    }

    /**
     * Answers one request line through {@code emit} (one line; several for a streamed apply); never throws for
     * bad input, for a request over its budget, or for running out of memory inside the request.
     */
    static void answer(String line, Budget budget, Consumer<String> emit) {
        JsonElement[] id = {null};
        String text;
        try {
            text = budget.run(() -> {
                JsonElement request = Json.parseStrict(line);
                if (!request.isJsonObject()) {
                    throw new AxeException(AxeException.Kind.INVALID, "request must be a JSON object, got "
                            + Json.abbreviate(line.strip()));
                }
                id[0] = request.getAsJsonObject().get("id");
                JsonObject answer = Operations.answer(request.getAsJsonObject(),
                        partial -> emit.accept(capped(withId(partial, id[0]), budget)));
                return capped(withId(answer, id[0]), budget);
            });
        } catch (OutputClosed closed) {
            throw closed;
        } catch (AxeException e) {
            text = Json.write(withId(error(e.getMessage(), e.kind().jsonName()), id[0]));
        } catch (OutOfMemoryError e) {
            text = Json.write(withId(error(outOfMemory(), AxeException.Kind.TOO_LARGE.jsonName()), id[0]));
        } catch (RuntimeException | StackOverflowError e) {
            // A defect, not bad input: answer it (kind "internal") rather than end the stream.
            text = Json.write(withId(error("internal error: " + e, "internal"), id[0]));
        }
        emit.accept(text);
    }

    /** The answer as text, or a TOO_LARGE error when it has more bytes than the budget allows. */
    private static String capped(JsonObject answer, Budget budget) {
        String text = Json.write(answer);
        long bytes = Json.utf8Length(text);
        if (bytes > budget.maxAnswerBytes()) {
            throw Budget.tooLarge("the answer has " + bytes + " bytes, more than the cap of " + budget.maxAnswerBytes()
                    + " bytes" + (answer.has("points") ? " (\"mode\":\"count\" counts the points, \"mode\":\"stream\" "
                    + "sends them in lines of " + Operations.STREAM_CHUNK + ")" : ""));
        }
        return text;
    }

    /** What a request that ran the JVM out of memory is told. */
    static String outOfMemory() {
        return "too large: the request ran out of memory (the tool's heap holds "
                + Runtime.getRuntime().maxMemory() / (1 << 20) + " MiB; AXE4J_JVM_OPTS=-Xmx... raises it)";
    }

    static JsonObject error(String message, String kind) {
        JsonObject o = new JsonObject();
        o.addProperty("error", message.length() <= MESSAGE_LIMIT ? message
                : message.substring(0, MESSAGE_LIMIT) + "... (message cut at " + MESSAGE_LIMIT + " of "
                        + message.length() + " characters)");
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
