package org.axe4j.tvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The JNI fast path and the JNA fallback: same results, same errors, the right one chosen. */
class FastCallTest {
    @TempDir
    static Path kernels;
    static Path vectorAdd;

    /** {@code TVMFFIFunctionCall} through one path. */
    interface CallRoute {
        int call(long function, long args, int numArgs, long result);
    }

    @BeforeAll
    static void setUp() throws Exception {
        Path script = TestSupport.repoRoot().resolve("tvm-bridge/src/test/python/export_kernels.py");
        TestSupport.Result result = TestSupport.run(List.of(TestSupport.venvPython().toString(), script.toString(),
                kernels.toString(), "16"), TestSupport.repoRoot(), 300);
        assertEquals(0, result.exitCode(), result.output());
        vectorAdd = kernels.resolve("vector_add.so");
        assertTrue(Files.isRegularFile(vectorAdd), result.output());
        TestSupport.loadWithCppTestingGlobals();
    }

    /**
     * Where the build's C compiler ({@code CC}, else gcc) exists, the build must have bundled the
     * library and this JVM must use it.
     */
    @Test
    void jniIsChosenWhenTheLibraryIsBundled() {
        if (compilerOnPath()) {
            assertTrue(JniCalls.bundled(),
                    "a C compiler (CC, else gcc) is on PATH but the build bundled no " + JniCalls.RESOURCE);
        }
        assertEquals(JniCalls.bundled() ? FastCall.JNI : FastCall.JNA, FastCall.mode(), FastCall.describe());
    }

    /** Both paths in one JVM, on identical frames: results and TVM's error messages agree. */
    @Test
    void bothPathsGiveTheSameResultsAndErrors() {
        assumeTrue(FastCall.mode().equals(FastCall.JNI), "no JNI fast path in this build: " + FastCall.describe());
        CallRoute jni = JniCalls::functionCall;
        CallRoute jna = Ffi::TVMFFIFunctionCall;
        List<Object[]> cases = List.of(
                new Object[] {"testing.nop"},
                new Object[] {"testing.add_one", 41L},
                new Object[] {"testing.echo", "short"},
                new Object[] {"testing.echo", 2.5},
                new Object[] {"testing.test_raise_error", "ValueError", "raised on purpose"},
                new Object[] {"testing.add_one", "not a number"});
        for (Object[] c : cases) {
            TvmFunction function = Tvm.function((String) c[0]);
            Object[] args = Arrays.copyOfRange(c, 1, c.length);
            String viaJni = callVia(jni, function, args);
            assertEquals(callVia(jna, function, args), viaJni, Arrays.toString(c));
        }
        assertEquals("value 42", callVia(jni, Tvm.function("testing.add_one"), 41L));
        assertEquals("error ValueError: raised on purpose",
                callVia(jni, Tvm.function("testing.test_raise_error"), "ValueError", "raised on purpose"));
    }

    /** The public API on the chosen path: compiled kernel through a workspace and through Kernel.call. */
    @Test
    void kernelsRunOnTheChosenPath() {
        Kernel add = ModuleCache.shared().kernel(vectorAdd, "vector_add");
        Kernel.TensorSpec spec = new Kernel.TensorSpec(new long[] {16}, DataType.FLOAT32);
        try (Kernel.Workspace workspace = add.newWorkspace(List.of(spec, spec, spec))) {
            for (int i = 0; i < 16; i++) {
                workspace.buffer(0).putFloat(4 * i, i);
                workspace.buffer(1).putFloat(4 * i, 0.5f);
            }
            workspace.call();
            assertEquals(15.5f, workspace.buffer(2).getFloat(4 * 15));
            add.call(workspace.tensor(2), workspace.tensor(2), workspace.tensor(0));
            assertEquals(31f, workspace.buffer(0).getFloat(4 * 15));
        }
        TvmException error = org.junit.jupiter.api.Assertions.assertThrows(TvmException.class,
                () -> Tvm.function("testing.test_raise_error").call("IndexError", "out of range on purpose"));
        assertEquals("IndexError", error.kind());
        assertEquals("out of range on purpose", error.tvmMessage());
    }

    /**
     * A JVM on the default path and one with {@code -Daxe4j.tvm.jni=false} print the same results,
     * errors included; the forced one reports JNA, and both keep the JVM's SIGSEGV handler.
     */
    @Test
    void forcedJnaJvmAgreesWithTheDefaultJvm() throws Exception {
        List<String> chosen = probe(List.of());
        List<String> forced = probe(List.of("-D" + FastCall.JNI_PROPERTY + "=false"));
        assertEquals("mode " + (JniCalls.bundled() ? FastCall.JNI : FastCall.JNA), chosen.get(0), chosen.toString());
        assertEquals("mode " + FastCall.JNA, forced.get(0), forced.toString());
        assertEquals(chosen.subList(1, chosen.size()), forced.subList(1, forced.size()));
        assertTrue(chosen.contains("nop null"), chosen.toString());
        assertTrue(chosen.contains("add_one 42"), chosen.toString());
        assertTrue(chosen.contains("echo_string short"), chosen.toString());
        assertTrue(chosen.contains("java_global 42"), chosen.toString());
        assertTrue(chosen.contains("raised ValueError: probe message"), chosen.toString());
        assertTrue(chosen.stream().anyMatch(l -> l.startsWith("workspace 0.0,101.0,202.0,")), chosen.toString());
        assertTrue(chosen.stream().anyMatch(l -> l.startsWith("kernel_call 0.0,201.0,402.0,")), chosen.toString());
        assertTrue(chosen.stream().anyMatch(l -> l.startsWith("kernel_error ") && !l.contains("no error")),
                chosen.toString());
        assertTrue(chosen.contains("sigsegv_handler_kept true"), chosen.toString());
        assertTrue(chosen.contains("null_checks 200000"), chosen.toString());
    }

    /**
     * A class path without {@code libaxe4j_jni.so} (what a build without gcc produces): the bridge
     * falls back to JNA, gives the same results and says so in exactly one log line.
     */
    @Test
    void withoutTheLibraryTheBridgeFallsBackToJna(@TempDir Path copy) throws Exception {
        List<String> classPath = new ArrayList<>();
        boolean replaced = false;
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            Path path = Path.of(entry);
            if (Files.isDirectory(path) && Files.isRegularFile(path.resolve("org/axe4j/tvm/FastCall.class"))) {
                copyWithoutNativeLibraries(path, copy);
                entry = copy.toString();
                replaced = true;
            }
            classPath.add(entry);
        }
        assertTrue(replaced, "no class directory holding FastCall on " + System.getProperty("java.class.path"));
        List<String> output = new ArrayList<>();
        List<String> fallback = probe(List.of(), String.join(File.pathSeparator, classPath), output);
        List<String> forced = probe(List.of("-D" + FastCall.JNI_PROPERTY + "=false"));
        assertEquals("mode " + FastCall.JNA, fallback.get(0), fallback.toString());
        assertEquals(forced.subList(1, forced.size()), fallback.subList(1, fallback.size()));
        long logLines = output.stream().filter(l -> l.contains("JNI fast path unavailable")).count();
        assertEquals(1, logLines, String.join("\n", output));
    }

    private static void copyWithoutNativeLibraries(Path classes, Path target) throws java.io.IOException {
        try (var files = Files.walk(classes)) {
            for (Path source : (Iterable<Path>) files::iterator) {
                Path relative = classes.relativize(source);
                if (relative.startsWith("native")) {
                    continue;
                }
                Path destination = target.resolve(relative.toString());
                if (Files.isDirectory(source)) {
                    Files.createDirectories(destination);
                } else {
                    Files.copy(source, destination);
                }
            }
        }
    }

    private static List<String> probe(List<String> jvmOptions) throws Exception {
        return probe(jvmOptions, System.getProperty("java.class.path"), new ArrayList<>());
    }

    private static List<String> probe(List<String> jvmOptions, String classPath, List<String> output)
            throws Exception {
        List<String> command = new ArrayList<>(List.of(TestSupport.javaExecutable().toString()));
        command.addAll(jvmOptions);
        command.addAll(List.of("-cp", classPath, CallPathProbe.class.getName(), vectorAdd.toString()));
        TestSupport.Result result = TestSupport.run(command, TestSupport.repoRoot(), 120);
        assertEquals(0, result.exitCode(), result.output());
        output.addAll(List.of(result.output().split("\n")));
        List<String> lines = new ArrayList<>();
        boolean started = false;
        for (String line : result.output().split("\n")) {
            started |= line.startsWith("mode ");
            if (started) {
                lines.add(line.strip());
            }
        }
        assertTrue(started, result.output());
        return lines;
    }

    private static String callVia(CallRoute path, TvmFunction function, Object... args) {
        try (CallFrame frame = CallFrame.acquire(args.length)) {
            for (int i = 0; i < args.length; i++) {
                Values.encode(frame, frame.argOffset(i), args[i], false);
            }
            int rc = path.call(function.handle(), frame.argAddress(0), args.length, frame.address + CallFrame.RESULT);
            if (rc != 0) {
                TvmException e = TvmErrors.fromRaised();
                return "error " + e.kind() + ": " + e.tvmMessage();
            }
            return "value " + Values.decode(frame.buffer, CallFrame.RESULT, true);
        }
    }

    private static boolean compilerOnPath() {
        String compiler = System.getenv().getOrDefault("CC", "gcc");
        if (compiler.contains(File.separator)) {
            return Files.isExecutable(Path.of(compiler));
        }
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, compiler))) {
                return true;
            }
        }
        return false;
    }
}
