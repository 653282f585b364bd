package org.axe4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Oracle;
import org.axe4j.layout.Point;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Requests sent as an attacker or a careless script would: each gets its own clear answer (kind
 * {@code too_large} over a cap, {@code parse} for unreadable text) and the stream goes on.
 */
class HostileInputTest {
    private static List<JsonObject> answers(Tool.Result r) {
        List<JsonObject> out = new ArrayList<>();
        r.out().lines().forEach(l -> out.add(JsonParser.parseString(l).getAsJsonObject()));
        return out;
    }

    private static String kind(JsonObject answer) {
        return answer.has("kind") ? answer.get("kind").getAsString() : "ok";
    }

    @Test
    void hugeReplicaSetsAreRefusedUpFrontAndTheStreamGoesOn() {
        String input = String.join("\n",
                "{\"op\":\"apply\",\"layout\":\"S[2:1] + R[16777216:1@laneid]\",\"shape\":[2],\"coord\":[1],\"id\":1}",
                "{\"op\":\"apply\",\"layout\":\"S[2:1] + R[1048576:1@laneid]\",\"shape\":[2],\"coord\":[1],\"id\":2}",
                "{\"op\":\"inverse\",\"layout\":\"S[8:1] + R[(4096,4096):(1@a,1@b)]\",\"shape\":[8],\"point\":{\"m\":3},\"id\":3}",
                "{\"op\":\"apply\",\"layout\":\"S[2:1] + R[16777216:1@laneid]\",\"shape\":[2],\"coord\":[1],\"mode\":\"count\"}",
                "{\"op\":\"apply\",\"layout\":\"S[4:1]\",\"shape\":[4],\"coord\":[3],\"id\":5}");
        Tool.Result r = Tool.withInput(input, "layout", "batch");
        assertEquals(0, r.code(), r.err());
        List<JsonObject> out = answers(r);
        assertEquals(5, out.size(), r.out());
        assertEquals("too_large", kind(out.get(0)));
        assertTrue(out.get(0).get("error").getAsString().contains(
                "L(1) of S[2:1] + R[16777216:1@laneid] has 16777216 points, more than the cap of 65536 points"), r.out());
        assertEquals(1, out.get(0).get("id").getAsInt());
        assertEquals("too_large", kind(out.get(1)));
        assertTrue(out.get(1).get("error").getAsString().contains("has 1048576 points"), r.out());
        // The backward map needs no enumeration here: a and b are fixed by the point.
        assertEquals("{\"coord\":[3],\"id\":3}", out.get(2).toString());
        assertEquals("{\"count\":16777216}", out.get(3).toString());
        assertEquals("{\"points\":[{\"m\":3}],\"id\":5}", out.get(4).toString());
    }

    @Test
    void showOfAHugeLayoutExitsWithFourAndRaisingTheCapAnswers() {
        Tool.Result r = Tool.run("layout", "show", "S[2:1] + R[16777216:1@laneid]");
        assertEquals(Main.TOO_LARGE, r.code());
        assertEquals("", r.out());
        assertTrue(r.err().startsWith("axe: show S[2:1] + R[16777216:1@laneid] with shape (2): too large: the picture"),
                r.err());
        assertTrue(r.err().contains("33554432 points, more than the cap of 65536 points"), r.err());
        Tool.Result small = Tool.run("layout", "show", "S[2:1] + R[70000:1@laneid]", "--max-points", "140000",
                "--max-answer-bytes", "100000000");
        assertEquals(0, small.code(), small.err());
    }

    @Test
    void capsComeFromOptionsAndTheEnvironment() {
        String[] apply = {"layout", "apply", "S[2:1] + R[100:1@laneid]", "--shape", "2", "--coord", "1"};
        assertEquals(0, Tool.run(apply).code());
        Tool.Result env = Tool.run(new ByteArrayInputStream(new byte[0]), Map.of("AXE4J_MAX_POINTS", "99"), apply);
        assertEquals(Main.TOO_LARGE, env.code(), env.err());
        assertTrue(env.err().contains("has 100 points, more than the cap of 99 points"), env.err());
        String[] lowered = {"layout", "apply", "S[2:1] + R[100:1@laneid]", "--shape", "2", "--coord", "1",
            "--max-points", "50"};
        assertEquals(Main.TOO_LARGE, Tool.run(lowered).code());
        Tool.Result bad = Tool.run("layout", "apply", "S[2:1]", "--shape", "2", "--coord", "1", "--max-points", "\u0665");
        assertEquals(Main.BAD_INPUT, bad.code());
        assertTrue(bad.err().contains("option --max-points"), bad.err());
    }

    @Test
    void countAndStreamModesAnswerBigSetsExactly() {
        Layout l = Layout.parse("S[2:1] + R[(50,60):(1@laneid,7@warpid)] + 3@warpid");
        List<Point> expected = new ArrayList<>(Oracle.table(l).get(1));
        String base = "{\"op\":\"apply\",\"layout\":\"" + l + "\",\"shape\":[2],\"coord\":[1]";
        Tool.Result r = Tool.withInput(base + ",\"mode\":\"stream\",\"id\":9}\n" + base + ",\"mode\":\"count\"}\n",
                "layout", "batch");
        List<JsonObject> out = answers(r);
        assertEquals(4, out.size(), r.out());
        List<JsonObject> streamed = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            JsonObject line = out.get(i);
            assertEquals(9, line.get("id").getAsInt());
            assertEquals(i < 2, line.get("more").getAsBoolean());
            line.getAsJsonArray("points").forEach(p -> streamed.add(p.getAsJsonObject()));
        }
        assertEquals(3000, out.get(2).get("count").getAsLong());
        assertEquals(expected.size(), streamed.size());
        for (int i = 0; i < expected.size(); i++) {
            assertEquals(Json.point(expected.get(i)), streamed.get(i), "point " + i);
        }
        assertEquals("{\"count\":3000}", out.get(3).toString());
        Tool.Result text = Tool.run("layout", "apply", l.toString(), "--shape", "2", "--coord", "1", "--stream");
        assertEquals(0, text.code(), text.err());
        assertEquals(3000, text.out().lines().count());
        assertEquals("(1) -> {m:1, warpid:3}", text.out().lines().findFirst().get());
        Tool.Result count = Tool.run("layout", "apply", l.toString(), "--shape", "2", "--coord", "1", "--count");
        assertEquals("(1) -> 3000 points\n", count.out());
    }

    @Test
    void theTimeCapEndsAStreamWithAnErrorLine() {
        Tool.Result r = Tool.withInput("{\"op\":\"apply\",\"layout\":\"S[2:1] + R[16777216:1@laneid]\",\"shape\":[2],"
                + "\"coord\":[1],\"mode\":\"stream\"}\n{\"op\":\"canon\",\"layout\":\"S[(2,4):(4,1)]\"}\n",
                "layout", "batch", "--max-millis", "50");
        assertEquals(0, r.code(), r.err());
        List<JsonObject> out = answers(r);
        JsonObject last = out.get(out.size() - 2);
        assertEquals("too_large", kind(last), last.toString());
        assertTrue(last.get("error").getAsString().contains("ran longer than the time cap of 50 ms"), last.toString());
        for (JsonObject line : out.subList(0, out.size() - 2)) {
            assertTrue(line.get("more").getAsBoolean());
        }
        assertEquals("{\"layout\":\"S[8:1]\"}", out.get(out.size() - 1).toString());
    }

    @Test
    void anAnswerOverItsByteCapIsRefusedAndPointsToTheModes() {
        Tool.Result r = Tool.withInput("{\"op\":\"apply\",\"layout\":\"S[2:1] + R[64:1@laneid]\",\"shape\":[2],"
                + "\"coord\":[1]}\n", "layout", "batch", "--max-answer-bytes", "200");
        JsonObject a = answers(r).get(0);
        assertEquals("too_large", kind(a));
        assertTrue(a.get("error").getAsString().contains("more than the cap of 200 bytes"), a.toString());
        assertTrue(a.get("error").getAsString().contains("\"mode\":\"count\""), a.toString());
    }

    @Test
    void unreadableLinesAreAnsweredOneByOne() {
        String deep = "[".repeat(50_000) + "]".repeat(50_000);
        String deepObject = "{\"op\":\"canon\",\"id\":" + "[".repeat(65) + "]".repeat(65) + "}";
        String tooLong = "{\"op\":\"canon\",\"layout\":\"S[8:1]\",\"pad\":\"" + "x".repeat(300_000) + "\"}";
        byte[] notUtf8 = {'{', '"', (byte) 0xff, '"', '}'};
        ByteArrayOutputStream input = new ByteArrayOutputStream();
        for (String line : List.of(deep, deepObject, tooLong)) {
            input.writeBytes((line + "\n").getBytes(StandardCharsets.UTF_8));
        }
        input.writeBytes(notUtf8);
        input.writeBytes("\r\n{\"op\":\"canon\",\"layout\":\"S[(2,4):(4,1)]\",\"id\":[[[1]]]}\r\n".getBytes(StandardCharsets.UTF_8));
        Tool.Result r = Tool.run(new ByteArrayInputStream(input.toByteArray()), Map.of(), "layout", "batch",
                "--max-request-bytes", "200000");
        assertEquals(0, r.code(), r.err());
        List<JsonObject> out = answers(r);
        assertEquals(5, out.size(), r.out());
        assertEquals("parse", kind(out.get(0)));
        assertTrue(out.get(0).get("error").getAsString().contains("nest deeper than 64 levels"), out.get(0).toString());
        assertEquals("parse", kind(out.get(1)));
        assertEquals("too_large", kind(out.get(2)));
        assertTrue(out.get(2).get("error").getAsString().contains("more than the cap of 200000 bytes"), out.get(2).toString());
        assertEquals("parse", kind(out.get(3)));
        assertEquals("{\"layout\":\"S[8:1]\",\"id\":[[[1]]]}", out.get(4).toString());
    }

    @Test
    void batchStopsWhenItsOutputIsClosed() {
        String line = "{\"op\":\"canon\",\"layout\":\"S[(2,4):(4,1)]\"}\n";
        byte[] input = line.repeat(100_000).getBytes(StandardCharsets.UTF_8);
        int[] consumed = {0};
        InputStream in = new ByteArrayInputStream(input) {
            @Override
            public synchronized int read(byte[] b, int off, int len) {
                int n = super.read(b, off, len);
                consumed[0] += Math.max(n, 0);
                return n;
            }
        };
        OutputStream closedAfterTen = new OutputStream() {
            private int lines;

            @Override
            public void write(int b) throws IOException {
                if (b == '\n' && ++lines > 10) {
                    throw new IOException("Broken pipe");
                }
            }
        };
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Main.run(new String[] {"layout", "batch"}, in, new PrintStream(closedAfterTen, true),
                new PrintStream(err, true), Map.of());
        assertEquals(Main.OUTPUT_CLOSED, code);
        assertTrue(consumed[0] < input.length / 10, "read " + consumed[0] + " of " + input.length + " bytes");
    }

    @Test
    void aRequestThatRunsTheHeapOutIsThatRequestsError(@TempDir Path dir) throws Exception {
        // Caps raised far past what a 48 MiB heap holds: the enumeration itself runs out of memory.
        Path input = dir.resolve("in.jsonl");
        Files.writeString(input, "{\"op\":\"apply\",\"layout\":\"S[2:1] + R[16777216:1@laneid]\",\"shape\":[2],"
                + "\"coord\":[1],\"id\":1}\n{\"op\":\"apply\",\"layout\":\"S[4:1]\",\"shape\":[4],\"coord\":[2],\"id\":2}\n");
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx48m",
                "-cp", System.getProperty("java.class.path"), Main.class.getName(), "layout", "batch",
                "--max-points", "100000000", "--max-answer-bytes", "1000000000", "--max-millis", "600000")
                .redirectInput(input.toFile())
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(5, TimeUnit.MINUTES));
        assertEquals(0, p.exitValue(), out);
        List<String> lines = out.lines().toList();
        assertEquals(2, lines.size(), out);
        JsonObject first = JsonParser.parseString(lines.get(0)).getAsJsonObject();
        assertEquals("too_large", kind(first), lines.get(0));
        assertTrue(first.get("error").getAsString().contains("ran out of memory"), lines.get(0));
        assertEquals("{\"points\":[{\"m\":2}],\"id\":2}", lines.get(1));
    }

    @Test
    void distinctLongAxisNamesDoNotAccumulate(@TempDir Path dir) throws Exception {
        // 200 requests, each naming its own 300,000-character axis: 60 MB of names, in a 32 MiB heap. Names
        // once were interned without a length bound, so the later requests ran out of memory.
        Path input = dir.resolve("in.jsonl");
        StringBuilder lines = new StringBuilder();
        String body = "a".repeat(300_000);
        for (int i = 0; i < 200; i++) {
            lines.append("{\"op\":\"canon\",\"layout\":\"S[(2,4):(4@").append(body).append(i).append(",1@")
                    .append(body).append(i).append(")]\"}\n");
        }
        Files.writeString(input, lines);
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx32m",
                "-cp", System.getProperty("java.class.path"), Main.class.getName(), "layout", "batch",
                "--max-answer-bytes", "100000000")
                .redirectInput(input.toFile())
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        List<String> out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).lines().toList();
        assertTrue(p.waitFor(5, TimeUnit.MINUTES));
        assertEquals(0, p.exitValue());
        assertEquals(200, out.size());
        for (String line : out) {
            assertTrue(line.startsWith("{\"layout\":\"S[8:1@a"), line.substring(0, Math.min(200, line.length())));
        }
    }

    @Test
    void errorMessagesRepeatAtMostTheStartOfABigRequest() {
        String layout = "S[(" + "1,".repeat(20_000) + "1):(1)]";
        Tool.Result r = Tool.withInput("{\"op\":\"canon\",\"layout\":\"" + layout + "\"}\n", "layout", "batch");
        JsonObject a = answers(r).get(0);
        assertEquals("parse", kind(a));
        assertTrue(a.get("error").getAsString().length() < 2000, a.toString());
    }
}
