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

    /** A virtual environment's folders with empty files of the given names (locate only looks at names). */
    private static Path fakeVenv(Path root, String... files) throws Exception {
        Path site = root.resolve("lib").resolve("python3.11").resolve("site-packages");
        for (String file : files) {
            Path path = site.resolve(file);
            Files.createDirectories(path.getParent());
            Files.createFile(path);
        }
        return root;
    }

    @Test
    void theNewTirxIsFoundByItsOwnLibraryNames(@TempDir Path dir) throws Exception {
        Path venv = fakeVenv(dir, "tvm_ffi/lib/libtvm_ffi.so", "tvm_tirx/lib/libtvm_runtime.so",
                "tvm_tirx/lib/libtvm_tirx_compiler.so", "tvm_tirx/lib/libtvm_tirx_llvm_backend_native.so",
                "tvm_tirx/lib/libtvm_runtime_cuda.so");
        for (String lane : new String[] {null, TvmLibraries.LANE_TIRX}) {
            TvmLibraries.Located l = TvmLibraries.locate(null, null, venv.toString(), lane, Path.of("/"));
            Path lib = venv.resolve("lib/python3.11/site-packages/tvm_tirx/lib").toAbsolutePath().normalize();
            assertEquals(lib.resolve("libtvm_runtime.so"), l.runtime());
            assertEquals(lib.resolve("libtvm_tirx_compiler.so"), l.compiler().orElseThrow());
            assertEquals(lib.resolve("libtvm_tirx_llvm_backend_native.so"), l.llvmBackend().orElseThrow());
            assertTrue(l.runtimeExtra().isEmpty());
        }
        // A library folder given outright: the new TIRx's compiler beside its runtime.
        Path lib = venv.resolve("lib/python3.11/site-packages/tvm_tirx/lib");
        Path ffi = venv.resolve("lib/python3.11/site-packages/tvm_ffi/lib");
        TvmLibraries.Located explicit = TvmLibraries.locate(ffi + java.io.File.pathSeparator + lib, null, null,
                Path.of("/"));
        assertTrue(explicit.compiler().orElseThrow().endsWith("libtvm_tirx_compiler.so"));
    }

    @Test
    void theLaneChoosesBetweenTwoTvmsInOneVenv(@TempDir Path dir) throws Exception {
        Path venv = fakeVenv(dir, "tvm_ffi/lib/libtvm_ffi.so", "tvm/lib/libtvm_runtime.so",
                "tvm/lib/libtvm_compiler.so", "tvm_tirx/lib/libtvm_runtime.so", "tvm_tirx/lib/libtvm_tirx_compiler.so");
        TvmLibraries.Located unset = TvmLibraries.locate(null, null, venv.toString(), null, Path.of("/"));
        TvmLibraries.Located tvm = TvmLibraries.locate(null, null, venv.toString(), TvmLibraries.LANE_TVM, Path.of("/"));
        TvmLibraries.Located tirx = TvmLibraries.locate(null, null, venv.toString(), TvmLibraries.LANE_TIRX,
                Path.of("/"));
        assertTrue(unset.compiler().orElseThrow().endsWith(Path.of("tvm", "lib", "libtvm_compiler.so")));
        assertEquals(unset, tvm);
        assertTrue(tirx.runtime().endsWith(Path.of("tvm_tirx", "lib", "libtvm_runtime.so")));
        assertTrue(tirx.compiler().orElseThrow().endsWith(Path.of("tvm_tirx", "lib", "libtvm_tirx_compiler.so")));
        TvmLoadException bad = assertThrows(TvmLoadException.class,
                () -> TvmLibraries.locate(null, null, venv.toString(), "tirx", Path.of("/")));
        assertTrue(bad.getMessage().contains("'tirx'") && bad.getMessage().contains(TvmLibraries.LANE_PROPERTY),
                bad.getMessage());
    }

    @Test
    void theTirxLaneWalksUpToVenvTirx(@TempDir Path dir) throws Exception {
        Path deep = Files.createDirectories(dir.resolve("a"));
        TvmLoadException e = assertThrows(TvmLoadException.class,
                () -> TvmLibraries.locate(null, null, null, TvmLibraries.LANE_TIRX, deep));
        assertTrue(e.getMessage().contains(deep.resolve(".venv-tirx").toString()), e.getMessage());
        assertTrue(e.getMessage().contains("ci/setup-tirx.sh"), e.getMessage());
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
