package org.axe4j.tvm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.axe4j.tvm.cuda.ComputeCapability;
import org.axe4j.tvm.cuda.CudaBinaries;
import org.axe4j.tvm.cuda.CudaDriver;
import org.axe4j.tvm.cuda.CudaException;
import org.axe4j.tvm.cuda.CudaLibraries;
import org.axe4j.tvm.cuda.Fatbin;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Loading CUDA modules without Python: the fatbins beside an exported library serve the source it
 * carries, and every way it can fail (no driver, no fatbin for the source, a fatbin for another
 * arch) ends in an exception naming the module, the archs and what is missing. The module is a
 * one-kernel sm_90a library exported with {@code axe4j.export_library}.
 */
class CudaLoadingTest {
    private static final CudaDriver.Gpu H100 = new CudaDriver.Gpu(0, "NVIDIA H100", new ComputeCapability(9, 0));
    private static final CudaDriver.Gpu A100 = new CudaDriver.Gpu(0, "NVIDIA A100", new ComputeCapability(8, 0));

    @TempDir
    static Path work;
    static Path module;
    static String source;
    static byte[] fatbin;

    @BeforeAll
    static void export() throws Exception {
        Path out = Files.createDirectory(work.resolve("cuda"));
        Path script = TestSupport.repoRoot().resolve("tvm-bridge/src/test/python/export_kernels.py");
        TestSupport.Result built = TestSupport.run(List.of(TestSupport.venvPython().toString(), script.toString(),
                "--cuda", out.toString()), TestSupport.repoRoot(), 300);
        assertEquals(0, built.exitCode(), built.output());
        module = out.resolve("add_one_cuda.so");
        source = Files.readString(out.resolve("add_one_cuda.cu"));
        fatbin = Files.readAllBytes(CudaBinaries.sidecarOf(module).resolve(CudaBinaries.sourceHash(source) + ".fatbin"));
    }

    @Test
    void aCudaModuleWithoutADriverIsRefusedNamingTheModuleAndTheDriver() {
        if (CudaDriver.probe().present()) {
            assertEquals("library", TvmModule.load(module).kind());
            return;
        }
        CudaException e = assertThrows(CudaException.class, () -> TvmModule.load(module));
        assertTrue(e.getMessage().contains(module.toString()), e.getMessage());
        assertTrue(e.getMessage().contains("it holds CUDA code"), e.getMessage());
        assertTrue(e.getMessage().contains("libcuda.so.1"), e.getMessage());
        CudaException again = assertThrows(CudaException.class, () -> ModuleCache.shared().kernel(module, "add_one"));
        assertTrue(again.getMessage().contains("no CUDA driver"), again.getMessage());
    }

    @Test
    void theCompileCallbackServesTheFatbinOfTheSourceItIsHanded() {
        CudaBinaries.registerCallback(List::of);
        try (CudaBinaries.Loading loading = CudaBinaries.loading(module)) {
            assertArrayEquals(fatbin, (byte[]) Tvm.call(CudaBinaries.CALLBACK, source));
            assertTrue(loading.takeFailure().isEmpty());
        }
    }

    @Test
    void aSourceWithoutAFatbinIsNamedWithItsHashAndTheFoldersSearched() {
        CudaBinaries.registerCallback(List::of);
        String edited = source.replace("0x1p+0f", "0x1p+1f");
        assertFalse(edited.equals(source), "the edit must change the source");
        try (CudaBinaries.Loading loading = CudaBinaries.loading(module)) {
            TvmException e = assertThrows(TvmException.class, () -> Tvm.call(CudaBinaries.CALLBACK, edited));
            assertTrue(e.getMessage().contains("no compiled code for its CUDA source"), e.getMessage());
            CudaException failure = loading.takeFailure().orElseThrow();
            String message = failure.getMessage();
            assertTrue(message.contains("module " + module), message);
            assertTrue(message.contains(CudaBinaries.sourceHash(edited).substring(0, 16)), message);
            assertTrue(message.contains(CudaBinaries.sidecarOf(module).toString()), message);
            assertTrue(message.contains("axe4j.export_library"), message);
        }
    }

    @Test
    void aFatbinForAnotherArchIsRefusedNamingBothArchs() {
        try (CudaBinaries.Loading loading = CudaBinaries.loading(module)) {
            CudaException e = assertThrows(CudaException.class, () -> CudaBinaries.resolve(source, List.of(A100)));
            assertTrue(e.getMessage().contains("[sm_90a]"), e.getMessage());
            assertTrue(e.getMessage().contains("compute capability 8.0"), e.getMessage());
            assertTrue(e.getMessage().contains("\"arch\": \"sm_80\""), e.getMessage());
            assertTrue(e.getMessage().contains(module.toString()), e.getMessage());
            assertArrayEquals(fatbin, CudaBinaries.resolve(source, List.of(H100)).bytes());
            assertArrayEquals(fatbin, CudaBinaries.resolve(source, List.of(A100, H100)).bytes());
        }
    }

    @Test
    void theLoaderOfTheLibraryIsHandedItsSourceAndGetsItsFatbin() throws Exception {
        TestSupport.Result run = TestSupport.run(TestSupport.javaCommand(CudaLoadProbe.class.getName(),
                module.toString()), TestSupport.repoRoot(), 120);
        assertEquals(0, run.exitCode(), run.output());
        assertTrue(run.output().contains("stand-in: fmt cuda, code sha256 " + CudaBinaries.sourceHash(source)),
                run.output());
        assertTrue(run.output().contains("stand-in: callback returned " + fatbin.length + " bytes"), run.output());
        assertTrue(run.output().contains("stand-in loader stops here"), run.output());
    }

    @Test
    void aLibraryCopiedWithoutItsFatbinsFailsWithAJavaExceptionNamingIt() throws Exception {
        Path alone = Files.createDirectories(work.resolve("alone")).resolve("add_one_cuda.so");
        Files.copy(module, alone);
        TestSupport.Result run = TestSupport.run(TestSupport.javaCommand(CudaLoadProbe.class.getName(),
                alone.toString()), TestSupport.repoRoot(), 120);
        assertEquals(0, run.exitCode(), run.output());
        assertTrue(run.output().contains("CudaException: module " + alone + ": no compiled code for its CUDA source"),
                run.output());
    }

    @Test
    void computeCapabilitiesRunTheirOwnArchAndOlderMinorsOfTheirMajor() {
        ComputeCapability hopper = new ComputeCapability(9, 0);
        assertTrue(hopper.runs("sm_90a"));
        assertTrue(hopper.runs("sm_90"));
        assertFalse(hopper.runs("sm_80"));
        assertFalse(hopper.runs("sm_100a"));
        ComputeCapability ada = new ComputeCapability(8, 9);
        assertTrue(ada.runs("sm_80"));
        assertTrue(ada.runs("sm_86"));
        assertTrue(ada.runs("sm_89"));
        assertFalse(ada.runs("sm_90"));
        assertFalse(new ComputeCapability(8, 6).runs("sm_89"));
        assertFalse(new ComputeCapability(10, 3).runs("sm_100a"));
        assertTrue(new ComputeCapability(10, 3).runs("sm_100"));
        assertThrows(IllegalArgumentException.class, () -> hopper.runs("compute_90"));
        assertThrows(IllegalArgumentException.class, () -> new ComputeCapability(9, 12));
    }

    @Test
    void aFatbinNamesItsArchAndOtherBytesAreRefused() {
        assertEquals(Set.of("sm_90a"), new Fatbin(fatbin).arches());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new Fatbin("not a fatbin at all".getBytes()));
        assertTrue(e.getMessage().contains("magic"), e.getMessage());
    }

    @Test
    void aMissingCudaLibraryIsNamedWithTheFoldersSearchedAndTheSetting() {
        CudaException e = assertThrows(CudaException.class,
                () -> CudaLibraries.require("libcudart.so.99", "the test"));
        assertTrue(e.getMessage().contains("cannot find libcudart.so.99 (needed for the test)"), e.getMessage());
        assertTrue(e.getMessage().contains(CudaLibraries.ENV), e.getMessage());
    }
}
