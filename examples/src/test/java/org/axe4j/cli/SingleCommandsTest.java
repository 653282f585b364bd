package org.axe4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Every single command, its text and JSON answers, and every exit code. */
class SingleCommandsTest {
    static final String TC = "S[(8,2,4,2):(4@laneid,1@warpid,1@laneid,1@reg)] + R[2:4@warpid] + 5@warpid";
    /** (2,3):(1,2) by (3,2): dimension 0 would end inside the extent-2 iter. */
    static final String UNGROUPABLE = "S[(2,3):(1,2)]";

    private static void assertNoStackTrace(Tool.Result r) {
        assertFalse(r.err().contains("\tat ") || r.out().contains("\tat "), "stack trace printed:\n" + r.err());
        assertFalse(r.err().contains("Exception"), "exception class shown to the user:\n" + r.err());
    }

    private static void assertFails(int code, String kind, String... args) {
        Tool.Result r = Tool.run(args);
        assertEquals(code, r.code(), r.err());
        assertTrue(r.err().startsWith("axe: "), r.err());
        assertEquals("", r.out());
        assertNoStackTrace(r);
        String[] withJson = java.util.Arrays.copyOf(args, args.length + 1);
        withJson[args.length] = "--json";
        Tool.Result j = Tool.run(withJson);
        assertEquals(code, j.code());
        JsonObject answer = JsonParser.parseString(j.out()).getAsJsonObject();
        assertEquals(kind, answer.get("kind").getAsString(), j.out());
        assertFalse(answer.get("error").getAsString().isBlank());
    }

    @Test
    void helpPrintsUsageAndExitsZero() {
        Tool.Result top = Tool.run("--help");
        assertEquals(0, top.code());
        assertTrue(top.out().contains("axe layout <command>") && top.out().contains("axe demo"), top.out());
        Tool.Result layout = Tool.run("layout", "--help");
        assertEquals(0, layout.code());
        for (String c : new String[] {"show", "apply", "inverse", "iters", "canon", "group", "tile", "slice", "equiv",
                "storage", "pack", "unpack", "tile-to", "is-direct-sum-right", "is-direct-sum-left", "permute-by-groups",
                "apply-to-shape", "verify-well-formed", "batch",
                "exit codes"}) {
            assertTrue(layout.out().contains(c), c);
        }
        assertEquals(0, Tool.run("layout", "apply", "--help").code());
        Tool.Result none = Tool.run();
        assertEquals(2, none.code());
        assertTrue(none.err().contains("usage"));
    }

    @Test
    void applyMapsTensorCoreCoordinate2_9ToBothWarps() {
        Tool.Result r = Tool.run("layout", "apply", TC, "--shape", "8,16", "--coord", "(2,9)");
        assertEquals(0, r.code(), r.err());
        assertEquals("(2,9) -> {laneid:8, reg:1, warpid:6}\n(2,9) -> {laneid:8, reg:1, warpid:10}\n", r.out());
        Tool.Result j = Tool.run("layout", "apply", TC, "--shape", "(8,16)", "--coord", "2,9", "--json");
        assertEquals("{\"points\":[{\"laneid\":8,\"reg\":1,\"warpid\":6},{\"laneid\":8,\"reg\":1,\"warpid\":10}]}\n",
                j.out());
    }

    @Test
    void unquotedLayoutWordsAreJoined() {
        Tool.Result r = Tool.run("layout", "apply", "S[(8,2,4,2):(4@laneid,1@warpid,1@laneid,1@reg)]", "+",
                "R[2:4@warpid]", "+", "5@warpid", "--shape=8,16", "--coord=2,9", "--json");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().contains("\"warpid\":10"));
    }

    @Test
    void inverseGivesBackTheCoordinate() {
        Tool.Result r = Tool.run("layout", "inverse", TC, "--shape", "8,16", "--point", "{laneid:8, reg:1, warpid:10}");
        assertEquals(0, r.code(), r.err());
        assertEquals("{laneid:8, reg:1, warpid:10} <- (2,9)\n", r.out());
        Tool.Result outside = Tool.run("layout", "inverse", TC, "--shape", "8,16", "--point", "laneid:8", "--json");
        assertEquals("{\"coord\":null}\n", outside.out());
    }

    @Test
    void itersListShardReplicaAndOffset() {
        Tool.Result j = Tool.run("layout", "iters", TC, "--json");
        assertEquals("{\"shard\":[[8,4,\"laneid\"],[2,1,\"warpid\"],[4,1,\"laneid\"],[2,1,\"reg\"]],"
                + "\"replica\":[[2,4,\"warpid\"]],\"offset\":{\"warpid\":5}}\n", j.out());
        Tool.Result t = Tool.run("layout", "iters", "S[(3,4):(1,3)]");
        assertEquals("shard   (3,1@m) (4,3@m)\nreplica (none)\noffset  {}\n", t.out());
    }

    @Test
    void groupAnswersLayoutAndSeps() {
        Tool.Result j = Tool.run("layout", "group", "S[(2,4):(4,1)]", "--shape", "4,2", "--json");
        assertEquals("{\"layout\":\"S[(4,2):(2,1)]\",\"seps\":[0,1,2]}\n", j.out());
        Tool.Result t = Tool.run("layout", "group", "S[(2,4):(4,1)]", "--shape", "4,2");
        assertEquals("S[(4,2):(2,1)]\nseps [0,1,2]\n", t.out());
    }

    @Test
    void canonPrintsTheCanonicalForm() {
        Tool.Result t = Tool.run("layout", "canon", "S[(2,1,4,3):(12,5,3,1@warpid)]", "+", "R[(1,2):(9,-4@laneid)]");
        assertEquals(0, t.code(), t.err());
        assertEquals("S[(8,3):(3,1@warpid)] + R[2:4@laneid] - 4@laneid\n", t.out());
        Tool.Result j = Tool.run("layout", "canon", "S[(2,4):(4,1)]", "--json");
        assertEquals("{\"layout\":\"S[8:1]\"}\n", j.out());
    }

    @Test
    void equivComparesMaps() {
        assertEquals("equivalent\n", Tool.run("layout", "equiv", "S[(2,4):(4,1)]", "S[8:1]").out());
        assertEquals("not equivalent\n", Tool.run("layout", "equiv", "S[(2,4):(1,2)]", "S[8:1]").out());
        assertEquals("{\"equivalent\":true}\n",
                Tool.run("layout", "equiv", "S[2:1] + R[2:0]", "S[2:1]", "--json").out());
        assertFails(2, "invalid", "layout", "equiv", "S[8:1]");
        assertFails(2, "parse", "layout", "equiv", "S[8:1]", "S[8:1");
    }

    @Test
    void tileBuildsTheKroneckerProduct() {
        Tool.Result j = Tool.run("layout", "tile", "--outer", "S[(2,2):(2,1)]", "--outer-shape", "2,2",
                "--inner", "S[(3,4):(4,1)]", "--inner-shape", "3,4", "--json");
        assertEquals(0, j.code(), j.err());
        // span(B) = 1 + 2*4 + 3*1 = 12: the outer strides (2,1) become (24,12).
        assertEquals("{\"layout\":\"S[(2,3,2,4):(24,4,12,1)]\",\"shape\":[6,8]}\n", j.out());
        Tool.Result t = Tool.run("layout", "tile", "--outer", "S[(2,2):(2,1)]", "--outer-shape", "2,2",
                "--inner", "S[(3,4):(4,1)]", "--inner-shape", "3,4");
        assertEquals("S[(2,3,2,4):(24,4,12,1)]\nshape (6,8)\n", t.out());
        assertFails(2, "invalid", "layout", "tile", "--outer", "S[4:1]", "--outer-shape", "4",
                "--inner", "S[(3,4):(4,1)]", "--inner-shape", "3,4");
        assertFails(2, "invalid", "layout", "tile", "--outer", "S[4:1]", "--outer-shape", "4");
    }

    @Test
    void sliceTakesABoxOfTheTile() {
        Tool.Result t = Tool.run("layout", "slice", TC, "--shape", "8,16", "--region", "0:8,8:16");
        assertEquals(0, t.code(), t.err());
        assertEquals("S[(8,4,2):(4@laneid,1@laneid,1@reg)] + R[2:4@warpid] + 6@warpid\nshape (8,8)\n", t.out());
        Tool.Result j = Tool.run("layout", "slice", "S[(8,8):(8,1)]", "--shape", "8,8", "--region", "[2:6, 0:8]",
                "--json");
        assertEquals("{\"layout\":\"S[(4,8):(8,1)] + 16\",\"shape\":[4,8]}\n", j.out());
        assertFails(2, "invalid", "layout", "slice", TC, "--shape", "8,16", "--region", "0:9,0:16");
        assertFails(2, "invalid", "layout", "slice", TC, "--shape", "8,16", "--region", "4:4,0:16");
        assertFails(2, "parse", "layout", "slice", TC, "--shape", "8,16", "--region", "0-4,0:16");
    }

    @Test
    void notRepresentableExitsThree() {
        assertFails(3, "not_representable", "layout", "group", UNGROUPABLE, "--shape", "3,2");
        Tool.Result r = Tool.run("layout", "group", UNGROUPABLE, "--shape", "3,2");
        assertTrue(r.err().contains("group") && r.err().contains(UNGROUPABLE), r.err());
        // Flat indices 3,4,5 of (4,4):(1,100) are m = 300, 1, 101: unequal steps, and 3 is prime.
        assertFails(3, "not_representable", "layout", "slice", "S[(4,4):(1,100)]", "--shape", "16", "--region", "3:6");
    }

    @Test
    void badInputExitsTwoWithKindParseOrInvalid() {
        assertFails(2, "parse", "layout", "apply", "S[(8,16):(16,1]", "--shape", "8,16", "--coord", "2,9");
        assertFails(2, "parse", "layout", "apply", TC, "--shape", "8;16", "--coord", "2,9");
        assertFails(2, "invalid", "layout", "apply", TC, "--shape", "5,2", "--coord", "2,9");
        assertFails(2, "invalid", "layout", "apply", TC, "--shape", "8,16", "--coord", "8,0");
        assertFails(2, "invalid", "layout", "apply", TC, "--shape", "8,16");
        assertFails(2, "invalid", "layout", "apply", TC, "--shape", "8,16", "--coord", "2,9", "--frobnicate", "1");
        assertFails(2, "invalid", "layout", "frobnicate", TC);
        assertFails(2, "invalid", "layout", "iters");
        assertFails(2, "invalid", "layout", "show", TC, "--shape", "3,3");
        assertFails(2, "invalid", "layout", "inverse", "S[(2,2):(1,1)]", "--shape", "4", "--point", "m:1");
        Tool.Result unknown = Tool.run("frobnicate");
        assertEquals(2, unknown.code());
        assertNoStackTrace(unknown);
    }

    @Test
    void internalErrorsAreOneLineAndExitOne() {
        InputStream broken = new InputStream() {
            @Override
            public int read() {
                throw new IllegalStateException("stream broke\nsecond line");
            }
        };
        Tool.Result r = Tool.run(broken, "layout", "batch");
        assertEquals(1, r.code());
        assertEquals(1, r.err().lines().count(), r.err());
        assertTrue(r.err().startsWith("axe: internal error:"), r.err());
        assertNoStackTrace(new Tool.Result(1, r.out(), r.err().replace("IllegalStateException", "")));
        InputStream failing = new InputStream() {
            @Override
            public int read() throws IOException {
                throw new IOException("device gone");
            }
        };
        Tool.Result io = Tool.run(failing, "layout", "batch");
        assertEquals(2, io.code());
        assertEquals(1, io.err().lines().count(), io.err());
    }

    @Test
    void showPrintsSummaryTableAndWritesWellFormedSvg(@TempDir Path dir) throws Exception {
        Path svg = dir.resolve("pictures/tc.svg");
        Tool.Result r = Tool.run("layout", "show", TC, "--shape", "8,16", "--svg", svg.toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().startsWith("layout   " + TC + "\nshape    (8,16)\nsize     128 elements, 2 replicas each\n"),
                r.out());
        assertTrue(r.out().contains("spans    laneid:32 reg:2 warpid:6"), r.out());
        String row2 = r.out().lines().filter(s -> s.startsWith("2 |")).findFirst().orElseThrow();
        assertEquals("L8 W6 r1", row2.split("\\|")[10].trim());
        assertTrue(r.out().contains("legend: L = laneid, W = warpid, r = reg"));
        assertTrue(Files.exists(svg));
        DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(svg.toFile());
        assertTrue(Files.readString(svg).contains("<title>(2,9)\nL8 W6 r1\nL8 W10 r1</title>"));

        Tool.Result defaulted = Tool.run("layout", "show", TC);
        assertTrue(defaulted.out().contains("shape    (8,16)   (no --shape given"), defaulted.out());

        Tool.Result j = Tool.run("layout", "show", "S[(3,4):(1,3)]", "--json");
        JsonObject o = JsonParser.parseString(j.out()).getAsJsonObject();
        assertEquals(12, o.getAsJsonArray("cells").size());
        assertEquals("{\"coord\":[1,2],\"points\":[{\"m\":7}]}", o.getAsJsonArray("cells").get(6).toString());
    }

    @Test
    void demoPrintsThePaperExamplesAndWritesTheirPictures(@TempDir Path dir) throws Exception {
        Tool.Result r = Tool.run("demo", "--out", dir.toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().contains("(2,9) -> {laneid:8, reg:1, warpid:6} and {laneid:8, reg:1, warpid:10}"), r.out());
        assertTrue(r.out().contains("backward: {laneid:8, reg:1, warpid:10} -> (2,9)"), r.out());
        assertTrue(r.out().contains("(33,70) -> {gpuid:3, m:134}"), r.out());
        assertTrue(r.out().contains("(133,7) -> {F:519, P:5}"), r.out());
        assertTrue(r.out().contains("(131,100) -> {Col:212, Lane:3}"), r.out());
        assertTrue(r.out().contains("(1,2) -> {m:7}"), r.out());
        assertTrue(r.out().contains("-> S[(8,3):(3,1@warpid)] + R[2:4@laneid] - 4@laneid"), r.out());
        assertTrue(r.out().contains("(9,13) -> {laneid:6, reg:1, warpid:3}"), r.out());
        assertTrue(r.out().contains("-> S[(8,4,2):(4@laneid,1@laneid,1@reg)] + R[2:4@warpid] + 6@warpid by (8,8)"),
                r.out());
        assertTrue(r.out().contains("7 SVG files in " + dir), r.out());
        try (var files = Files.list(dir)) {
            for (Path f : files.toList()) {
                DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(f.toFile());
            }
        }
    }

    @Test
    void storagePackUnpackAndTileToAnswerAsTirxDoes() {
        assertEquals("S[(8,2):(4,1)]\n", Tool.run("layout", "storage", "S[(2,8,4,2):(1@laneid,4,8@laneid,1)]").out());
        assertEquals("S[(4,8,2):(16,2,1)]\n", Tool.run("layout", "unpack", "S[(4,8):(8,1)]", "--num", "2").out());
        assertEquals("S[(4,4):(4,1)]\n", Tool.run("layout", "pack", "S[(4,8):(8,1)]", "--num", "2").out());
        Tool.Result bad = Tool.run("layout", "pack", "S[(4,8):(1,4)]", "--num", "2");
        assertEquals(2, bad.code(), bad.err());
        assertTrue(bad.err().contains("innermost iter") && bad.err().contains("must be stride 1 on m"), bad.err());
        assertEquals("S[(2,4,3,8):(96,8,32,1)]\nshape (8,24)\n",
                Tool.run("layout", "tile-to", "S[(4,8):(8,1)]", "--shape", "4,8", "--to", "8,24").out());
        String requests = "{\"op\":\"unpack\",\"layout\":\"S[8:1]\",\"num\":4}\n{\"op\":\"pack\",\"layout\":\"S[8:1]\"}\n";
        String batch = Tool.run(new java.io.ByteArrayInputStream(requests.getBytes(java.nio.charset.StandardCharsets.UTF_8)),
                "layout", "batch").out();
        assertTrue(batch.startsWith("{\"layout\":\"S[(8,4):(4,1)]\"}\n"), batch);
        assertTrue(batch.contains("field 'num'"), batch);
    }

    @Test
    void directSumOfPermuteApplyToShapeAndWellFormedAnswerAsTirxDoes() {
        assertEquals("S[(2,2):(8,2)]\n", Tool.run("layout", "is-direct-sum-right", "S[(2,2):(4,1)]", "--sum", "S[16:1]",
                "--interleaved", "2,2,2,2", "--shape", "2,2").out());
        assertEquals("S[(2,2):(4,1)]\n", Tool.run("layout", "is-direct-sum-left", "S[(2,2):(8,2)]", "--sum", "S[16:1]",
                "--interleaved", "2,2,2,2", "--shape", "2,2").out());
        assertTrue(Tool.run("layout", "is-direct-sum-right", "S[2:1] + R[2:4@warpid]", "--sum", "S[4:1]",
                "--interleaved", "2,2", "--shape", "2").out().startsWith("not a direct sum: "));
        Tool.Result rank = Tool.run("layout", "is-direct-sum-right", "S[4:1]", "--sum", "S[16:1]", "--interleaved",
                "4,4", "--shape", "2,2");
        assertEquals(2, rank.code(), rank.err());
        assertTrue(rank.err().contains("interleaved_shape (4,4) has rank 2, not twice the rank 2"), rank.err());
        assertEquals("S[(3,4,2):(4,1,12)]\n", Tool.run("layout", "permute-by-groups", "S[(2,3,4):(12,4,1)]", "--seps",
                "0,1,3", "--perm", "1,0").out());
        Tool.Result overlap = Tool.run("layout", "permute-by-groups", "S[(2,3,4):(12,4,1)]", "--seps", "0,2,1,2",
                "--perm", "0,1,2");
        assertEquals(2, overlap.code(), overlap.err());
        assertTrue(overlap.err().contains("must start at 0 and end at 3"), overlap.err());
        assertEquals("values (0,1,2)\nover S[(4,2,3):(6,3,1)]\n", Tool.run("layout", "apply-to-shape", "S[(4,6):(6,1)]",
                "--shape", "8,3", "--coord", "1,2").out());
        assertEquals("well-formed\n", Tool.run("layout", "verify-well-formed", "S[(4,32):(1@warpid,1@laneid)]").out());
        assertTrue(Tool.run("layout", "verify-well-formed", "S[(2,32):(1@wgid,1@laneid)]").out()
                .startsWith("not well-formed: the thread axes of"));
        String requests = "{\"op\":\"verify_well_formed\",\"layout\":\"S[2:1@laneid]\"}\n"
                + "{\"op\":\"apply_to_shape\",\"layout\":\"S[8:1]\",\"shape\":[2,4],\"coord\":[1,3]}\n"
                + "{\"op\":\"permute_by_groups\",\"layout\":\"S[8:1]\",\"seps\":[0,1]}\n";
        String batch = Tool.run(new java.io.ByteArrayInputStream(requests.getBytes(java.nio.charset.StandardCharsets.UTF_8)),
                "layout", "batch").out();
        assertTrue(batch.startsWith("{\"well_formed\":true}\n{\"values\":[1,3],\"layout\":\"S[(2,4):(4,1)]\"}\n"), batch);
        assertTrue(batch.contains("field 'perm'"), batch);
    }
}
