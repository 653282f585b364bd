package org.axe4j.tvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A JVM given only {@code libtvm_ffi.so} and {@code libtvm_runtime.so} (copied into a folder of
 * their own) runs an exported module, with a forced garbage collection before every call.
 */
class RuntimeOnlyTest {
    @TempDir
    static Path work;
    static Path runtimeDir;
    static Path module;

    @BeforeAll
    static void prepare() throws Exception {
        Path kernels = Files.createDirectory(work.resolve("kernels"));
        Path script = TestSupport.repoRoot().resolve("tvm-bridge/src/test/python/export_kernels.py");
        TestSupport.Result built = TestSupport.run(List.of(TestSupport.venvPython().toString(), script.toString(),
                kernels.toString(), "1000"), TestSupport.repoRoot(), 300);
        assertEquals(0, built.exitCode(), built.output());
        module = kernels.resolve("vector_add.so");
        TvmLibraries.Located full = TvmLibraries.locate(null, null, null, TestSupport.repoRoot());
        runtimeDir = Files.createDirectory(work.resolve("runtime-only"));
        Files.copy(full.ffi(), runtimeDir.resolve("libtvm_ffi.so"));
        Files.copy(full.runtime(), runtimeDir.resolve("libtvm_runtime.so"));
    }

    private static TestSupport.Result probe(String... jvmOptions) throws Exception {
        List<String> command = new ArrayList<>(List.of(TestSupport.javaExecutable().toString(),
                "-XX:-CreateCoredumpOnCrash", "-XX:ErrorFile=" + work.resolve("hs_err_%p.log"),
                "-D" + TvmLibraries.LIBDIR_PROPERTY + "=" + runtimeDir));
        command.addAll(List.of(jvmOptions));
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), RuntimeOnlyProbe.class.getName(),
                module.toString(), "1000", "30"));
        // a working directory with no .venv above it: nothing but the folder given is found
        return TestSupport.run(command, work, 120);
    }

    @Test
    void runtimeLibrariesAloneRunAModuleAcrossGarbageCollections() throws Exception {
        TestSupport.Result run = probe();
        assertEquals(0, run.exitCode(), run.output());
        assertTrue(run.output().contains("runtime-only ok 30"), run.output());
        assertTrue(run.output().contains("libtvm_compiler.so (not found: runtime only)"), run.output());
        assertTrue(run.output().contains("compiler loaded: false, mapped: false"), run.output());
        assertTrue(run.output().contains("runtime mapped after GC: true"), run.output());
        assertTrue(run.output().contains("tirx global present: false"), run.output());
    }

    /** Pinning matters: without it JNA unloads libtvm_runtime after a collection and the next call faults. */
    @Test
    void withoutPinningTheRuntimeIsUnloadedAndTheJvmDies() throws Exception {
        TestSupport.Result run = probe("-D" + TvmLibraries.UNPIN_PROPERTY + "=true");
        assertNotEquals(0, run.exitCode(), run.output());
        assertFalse(run.output().contains("runtime-only ok"), run.output());
    }

    @Test
    void aRuntimeOnlyFolderLocatesWithoutACompiler() {
        TvmLibraries.Located located = TvmLibraries.locate(runtimeDir.toString(), null, null, work);
        assertTrue(located.compiler().isEmpty());
        assertTrue(located.runtimeExtra().isEmpty());
        assertEquals(runtimeDir.resolve("libtvm_runtime.so"), located.runtime());
    }

    @Test
    void everyLoadedLibraryIsPinned() {
        Tvm.load();
        List<String> pinned = TvmLibraries.pinnedLibraries();
        assertTrue(pinned.stream().anyMatch(p -> p.endsWith("libtvm_ffi.so")), pinned.toString());
        assertTrue(pinned.stream().anyMatch(p -> p.endsWith("libtvm_runtime.so")), pinned.toString());
        Tvm.function("ir.IntImm").close(); // a compiler global: loads the compiler on demand
        assertTrue(TvmLibraries.isCompilerLoaded());
        assertTrue(TvmLibraries.pinnedLibraries().stream().anyMatch(p -> p.endsWith("libtvm_compiler.so")));
    }

    @Test
    void aBadLibrariesModeIsNamed() throws Exception {
        List<String> command = new ArrayList<>(List.of(TestSupport.javaExecutable().toString(),
                "-D" + TvmLibraries.LIBRARIES_PROPERTY + "=most", "-cp", System.getProperty("java.class.path"),
                RuntimeOnlyProbe.class.getName(), module.toString(), "1000", "1"));
        TestSupport.Result run = TestSupport.run(command, work, 60);
        assertNotEquals(0, run.exitCode(), run.output());
        assertTrue(run.output().contains("axe4j.tvm.libraries") && run.output().contains("'most'"), run.output());
    }
}
