package org.axe4j.tvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TvmLibrariesTest {
    @Test
    void missingLibrariesNameEveryPlaceSearched(@TempDir Path empty) throws Exception {
        Path other = Files.createDirectory(empty.resolve("other"));
        String list = empty + java.io.File.pathSeparator + other;
        TvmLoadException e = assertThrows(TvmLoadException.class, () -> TvmLibraries.locate(list, null, null, empty));
        assertTrue(e.getMessage().contains(empty.toString()), e.getMessage());
        assertTrue(e.getMessage().contains(other.toString()), e.getMessage());
        assertTrue(e.getMessage().contains("libtvm_ffi.so"), e.getMessage());
        assertTrue(e.getMessage().contains(TvmLibraries.LIBDIR_PROPERTY), e.getMessage());
    }

    @Test
    void missingVirtualEnvironmentIsNamed(@TempDir Path empty) {
        Path venv = empty.resolve("no-venv");
        TvmLoadException e = assertThrows(TvmLoadException.class,
                () -> TvmLibraries.locate(null, null, venv.toString(), empty));
        assertTrue(e.getMessage().contains(venv.resolve("lib").toString()), e.getMessage());
        assertTrue(e.getMessage().contains(TvmLibraries.VENV_ENV), e.getMessage());
    }

    @Test
    void walkUpFromTheWorkingDirectoryListsEachCandidate(@TempDir Path empty) throws Exception {
        Path deep = Files.createDirectories(empty.resolve("a").resolve("b"));
        TvmLoadException e = assertThrows(TvmLoadException.class, () -> TvmLibraries.locate(null, null, null, deep));
        assertTrue(e.getMessage().contains(deep.resolve(".venv").toString()), e.getMessage());
        assertTrue(e.getMessage().contains(empty.resolve("a").resolve(".venv").toString()), e.getMessage());
    }

    @Test
    void findsTheRepositoryVirtualEnvironmentEachWay() {
        Path root = TestSupport.repoRoot();
        TvmLibraries.Located walked = TvmLibraries.locate(null, null, null, root.resolve("tvm-bridge"));
        TvmLibraries.Located viaVenv = TvmLibraries.locate(null, null, root.resolve(".venv").toString(), root);
        String dirs = walked.ffi().getParent() + java.io.File.pathSeparator + walked.runtime().getParent();
        TvmLibraries.Located explicit = TvmLibraries.locate(dirs, null, null, Path.of("/"));
        assertEquals(walked.ffi(), viaVenv.ffi());
        assertEquals(walked.compiler(), explicit.compiler());
        assertTrue(walked.compiler().isPresent());
        assertTrue(walked.ffi().endsWith(Path.of("tvm_ffi", "lib", "libtvm_ffi.so")));
        assertTrue(walked.runtimeExtra().isPresent());
    }

    @Test
    void loadIsIdempotentAcrossThreads() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<TvmLibraries.Loaded>> results = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                results.add(pool.submit((Callable<TvmLibraries.Loaded>) TvmLibraries::load));
            }
            TvmLibraries.Loaded first = results.get(0).get();
            for (Future<TvmLibraries.Loaded> f : results) {
                assertSame(first, f.get());
            }
            assertSame(first, TvmLibraries.load());
        } finally {
            pool.shutdown();
        }
        TvmLibraries.loadCompiler();
        String diagnostics = TvmLibraries.diagnostics();
        assertTrue(diagnostics.contains("libtvm_runtime.so"), diagnostics);
        assertTrue(diagnostics.contains("libtvm_compiler.so"), diagnostics);
        boolean hasCudaDriver = Files.exists(Path.of("/usr/lib/x86_64-linux-gnu/libcuda.so.1"));
        if (!hasCudaDriver) {
            assertTrue(diagnostics.contains("libtvm_runtime_cuda.so (no CUDA driver"), diagnostics);
        }
    }

    @Test
    void theJvmKeepsItsSignalHandlersAfterLoading() {
        long before = Libc.handlerOf(Libc.currentAction(Libc.SIGSEGV));
        TvmLibraries.Loaded loaded = TvmLibraries.load();
        TvmLibraries.loadAdditional("libtvm_ffi_testing.so");
        assertEquals(before, Libc.handlerOf(Libc.currentAction(Libc.SIGSEGV)));
        // libtvm_ffi's backtrace support replaces SIGSEGV when first loaded: the guard saw and undid it
        assertTrue(loaded.restoredSignals().contains("SIGSEGV") || !loaded.reusedPaths().isEmpty(),
                loaded.describe());
    }

    @Test
    void implicitNullChecksSurviveInThisJvm() {
        TvmLibraries.load();
        assertEquals(200_000L, NullCheckProbe.exercise());
    }

    /** The remedy matters: without it the same probe crashes its JVM; with it the probe finishes. */
    @Test
    void withoutTheRestoreTheProbeCrashes() throws Exception {
        TestSupport.Result guarded = TestSupport.run(
                TestSupport.javaCommand(NullCheckProbe.class.getName()), TestSupport.repoRoot(), 120);
        assertEquals(0, guarded.exitCode(), guarded.output());
        assertTrue(guarded.output().contains("survived 200000"), guarded.output());

        List<String> unguarded = new ArrayList<>(List.of(TestSupport.javaExecutable().toString(),
                "-D" + TvmLibraries.KEEP_FOREIGN_HANDLERS_PROPERTY + "=true", "-cp",
                System.getProperty("java.class.path"), NullCheckProbe.class.getName()));
        TestSupport.Result crashed = TestSupport.run(unguarded, TestSupport.repoRoot(), 120);
        assertNotEquals(0, crashed.exitCode(), crashed.output());
        assertFalse(crashed.output().contains("survived"), crashed.output());
        // the fault went to libtvm_ffi's handler instead of the JVM's
        assertTrue(crashed.output().contains("Segfault encountered"), crashed.output());
    }
}
