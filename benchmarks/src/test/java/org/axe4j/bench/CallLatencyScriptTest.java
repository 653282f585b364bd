package org.axe4j.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.axe4j.tvm.FastCall;
import org.junit.jupiter.api.Test;

/** benchmarks/bench_call_latency.py, run with the repository's virtual environment on this module's classpath. */
class CallLatencyScriptTest {
    private static final long TIMEOUT_SECONDS = 300;

    /** The repository root (surefire passes it; else the parent of the module directory). */
    private static Path repoRoot() {
        String root = System.getProperty("axe4j.repo.root");
        return (root != null ? Paths.get(root) : Paths.get(System.getProperty("user.dir")).getParent())
                .toAbsolutePath().normalize();
    }

    /**
     * The script produces Python's figures and Java's on both call paths (few iterations: this checks the script
     * and {@link CallLatency}, not speed).
     */
    @Test
    void scriptReportsEveryFigureOnBothCallPaths() throws IOException, InterruptedException {
        Path python = repoRoot().resolve(".venv/bin/python");
        assertTrue(Files.isExecutable(python), "the TVM virtual environment is missing: " + python
                + " is not an executable; run `bash ci/setup-python.sh` in " + repoRoot());
        List<String> command = List.of(python.toString(), repoRoot().resolve("benchmarks/bench_call_latency.py")
                .toString(), "--classpath", System.getProperty("java.class.path"), "--iterations", "20000",
                "--rounds", "1");
        Path log = Files.createTempFile("axe4j-call-latency", ".log");
        Process process = new ProcessBuilder(command).directory(repoRoot().toFile()).redirectErrorStream(true)
                .redirectOutput(log.toFile()).start();
        boolean finished = process.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS);
        if (!finished) {
            process.destroyForcibly();
        }
        String output = Files.readString(log, StandardCharsets.UTF_8);
        Files.deleteIfExists(log);
        assertTrue(finished, "timed out after " + TIMEOUT_SECONDS + " s: " + command + "\n" + output);
        assertEquals(0, process.exitValue(), output);
        String[] lines = output.strip().split("\n");
        JsonObject figures = JsonParser.parseString(lines[lines.length - 1]).getAsJsonObject();
        for (String key : List.of("python_nop0_ns", "java_nop0_ns", "java_nop1_int_ns", "java_to_java_nop0_ns",
                "java_jna_nop0_ns", "java_kernel_workspace_ns", "java_jna_kernel_workspace_ns")) {
            double ns = figures.get(key).getAsDouble();
            assertTrue(ns > 0 && ns < 1_000_000, key + " = " + ns);
        }
        assertEquals(FastCall.mode(), figures.get("java_default_path").getAsString(), output);
        assertTrue(output.contains("jna/python"), output);
    }
}
