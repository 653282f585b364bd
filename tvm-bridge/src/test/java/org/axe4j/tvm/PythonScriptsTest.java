package org.axe4j.tvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The Python fixture scripts, run with the repository's virtual environment. */
class PythonScriptsTest {
    private static Path script(String name) {
        return TestSupport.repoRoot().resolve("tvm-bridge/src/test/python").resolve(name);
    }

    /** TVM-hosted: Python loads TVM, starts this JVM build in-process, and calls the Java globals. */
    @Test
    void tvmHostedRoundTrip() throws Exception {
        Path libjvm = Paths.get(System.getProperty("java.home"), "lib", "server", "libjvm.so");
        TestSupport.Result result = TestSupport.run(List.of(TestSupport.venvPython().toString(),
                script("hosted_roundtrip.py").toString(), "--classpath", System.getProperty("java.class.path"),
                "--jvm", libjvm.toString()), TestSupport.repoRoot(), 300);
        assertEquals(0, result.exitCode(), result.output());
        assertTrue(result.output().contains("hosted ok"), result.output());
        assertTrue(result.output().contains("restored JVM handlers for []"), result.output());
    }

    /**
     * The latency script produces Python's figures and Java's on both call paths (few iterations:
     * this checks the script, not speed).
     */
    @Test
    void callLatencyScript() throws Exception {
        TestSupport.Result result = TestSupport.run(List.of(TestSupport.venvPython().toString(),
                TestSupport.repoRoot().resolve("benchmarks/bench_call_latency.py").toString(), "--classpath", System.getProperty("java.class.path"),
                "--iterations", "20000", "--rounds", "1"), TestSupport.repoRoot(), 300);
        assertEquals(0, result.exitCode(), result.output());
        String[] lines = result.output().strip().split("\n");
        JsonObject figures = JsonParser.parseString(lines[lines.length - 1]).getAsJsonObject();
        for (String key : List.of("python_nop0_ns", "java_nop0_ns", "java_nop1_int_ns", "java_to_java_nop0_ns",
                "java_jna_nop0_ns", "java_kernel_workspace_ns", "java_jna_kernel_workspace_ns")) {
            double ns = figures.get(key).getAsDouble();
            assertTrue(ns > 0 && ns < 1_000_000, key + " = " + ns);
        }
        assertEquals(FastCall.mode(), figures.get("java_default_path").getAsString(), result.output());
        assertTrue(result.output().contains("jna/python"), result.output());
    }
}
