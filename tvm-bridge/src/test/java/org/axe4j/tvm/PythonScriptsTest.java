package org.axe4j.tvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
}
