package org.axe4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The permanent 64-bit edge-case set ({@code edge64.jsonl}, shared with the TVM functions' test in
 * python/tests/test_limits.py): each case's request answered exactly, or refused with its kind, by the batch
 * stream and by the single command that asks the same question.
 */
class EdgeCases64Test {
    static List<JsonObject> cases() throws IOException {
        try (InputStream in = EdgeCases64Test.class.getResourceAsStream("/edge64.jsonl")) {
            List<JsonObject> out = new ArrayList<>();
            for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
                if (!line.isBlank()) {
                    out.add(JsonParser.parseString(line).getAsJsonObject());
                }
            }
            return out;
        }
    }

    private static void check(JsonObject c, JsonObject answer) {
        String name = c.get("name").getAsString();
        if (c.has("answer")) {
            assertEquals(Tool.canonical(c.get("answer")), Tool.canonical(answer), name);
        } else {
            assertEquals(c.get("kind").getAsString(), answer.has("kind") ? answer.get("kind").getAsString() : answer.toString(),
                    name + ": " + answer);
        }
    }

    @Test
    void everyCaseInOneBatchStreamInOrder() throws IOException {
        List<JsonObject> cases = cases();
        StringBuilder input = new StringBuilder();
        for (JsonObject c : cases) {
            input.append(c.get("request")).append('\n');
        }
        Tool.Result r = Tool.withInput(input.toString(), "layout", "batch");
        assertEquals(0, r.code(), r.err());
        List<String> lines = r.out().lines().toList();
        assertEquals(cases.size(), lines.size(), r.out());
        for (int i = 0; i < cases.size(); i++) {
            check(cases.get(i), JsonParser.parseString(lines.get(i)).getAsJsonObject());
        }
    }

    @Test
    void everyCaseAlone() throws IOException {
        for (JsonObject c : cases()) {
            check(c, Batch.answerLine(c.get("request").toString()));
        }
    }

    @Test
    void singleCommandsExitWithTheCaseCodeAndSayIt() throws IOException {
        int checked = 0;
        for (JsonObject c : cases()) {
            if (!c.has("cli")) {
                continue;
            }
            JsonObject cli = c.getAsJsonObject("cli");
            JsonArray a = cli.getAsJsonArray("args");
            String[] args = new String[a.size()];
            for (int i = 0; i < args.length; i++) {
                args[i] = a.get(i).getAsString();
            }
            Tool.Result r = Tool.run(args);
            String name = c.get("name").getAsString();
            assertEquals(cli.get("exit").getAsInt(), r.code(), name + ": " + r.out() + r.err());
            String says = cli.get("says").getAsString();
            assertTrue((r.out() + r.err()).contains(says), name + ": expected '" + says + "' in " + r.out() + r.err());
            checked++;
        }
        assertTrue(checked >= 10, "cases with a command line: " + checked);
    }

    @Test
    void theSetCoversEveryKindOfAnswer() throws IOException {
        List<String> kinds = new ArrayList<>();
        for (JsonObject c : cases()) {
            kinds.add(c.has("kind") ? c.get("kind").getAsString() : "ok");
        }
        for (String kind : List.of("ok", "invalid", "parse", "too_large")) {
            assertTrue(kinds.contains(kind), kind);
        }
    }
}
