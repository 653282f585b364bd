package org.axe4j.tvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.FloatBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.axe4j.tvm.cuda.DeviceWorkspace;
import org.axe4j.tvm.cuda.HostMemory;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link DeviceWorkspace} over {@link HostMemory}: the staging, copies and call of a device kernel,
 * run on an exported CPU {@code vector_add} and checked element by element; the per-thread stream
 * setting that CUDA launches read; tensors over foreign memory.
 */
class DeviceWorkspaceTest {
    private static final int N = 1000;
    private static final List<Kernel.TensorSpec> SPECS = List.of(
            new Kernel.TensorSpec(new long[] {N}, DataType.FLOAT32), new Kernel.TensorSpec(new long[] {N}, DataType.FLOAT32),
            new Kernel.TensorSpec(new long[] {N}, DataType.FLOAT32));

    @TempDir
    static Path work;
    static Kernel vectorAdd;

    @BeforeAll
    static void export() throws Exception {
        Path kernels = Files.createDirectory(work.resolve("kernels"));
        Path script = TestSupport.repoRoot().resolve("tvm-bridge/src/test/python/export_kernels.py");
        TestSupport.Result built = TestSupport.run(List.of(TestSupport.venvPython().toString(), script.toString(),
                kernels.toString(), Integer.toString(N)), TestSupport.repoRoot(), 300);
        assertEquals(0, built.exitCode(), built.output());
        vectorAdd = ModuleCache.shared().kernel(kernels.resolve("vector_add.so"), "vector_add");
    }

    @Test
    void uploadCallDownloadComputesEveryElementAndReusesTheMemory() {
        try (DeviceWorkspace w = DeviceWorkspace.create(vectorAdd, SPECS, new HostMemory())) {
            for (int round = 0; round < 3; round++) {
                FloatBuffer a = w.host(0).asFloatBuffer();
                FloatBuffer b = w.host(1).asFloatBuffer();
                for (int i = 0; i < N; i++) {
                    a.put(i, i * 0.5f + round);
                    b.put(i, 3 - i);
                }
                w.host(2).asFloatBuffer().put(0, Float.NaN);
                w.upload(0, 1);
                w.call();
                assertTrue(Float.isNaN(w.host(2).asFloatBuffer().get(0)), "the output is staged only by download");
                w.download(2);
                FloatBuffer c = w.host(2).asFloatBuffer();
                for (int i = 0; i < N; i++) {
                    assertEquals(i * 0.5f + round + (3 - i), c.get(i), "element " + i + " of round " + round);
                }
            }
            assertEquals(Device.cpu(), w.tensor(2).device());
            assertEquals(N, w.tensor(0).elementCount());
        }
    }

    @Test
    void aClosedWorkspaceAndABadIndexAreNamed() {
        DeviceWorkspace w = DeviceWorkspace.create(vectorAdd, SPECS, new HostMemory());
        IndexOutOfBoundsException index = assertThrows(IndexOutOfBoundsException.class, () -> w.upload(3));
        assertTrue(index.getMessage().contains("argument 3 of 3"), index.getMessage());
        w.close();
        IllegalStateException closed = assertThrows(IllegalStateException.class, w::call);
        assertTrue(closed.getMessage().contains("vector_add is closed"), closed.getMessage());
        assertThrows(IllegalStateException.class, () -> w.host(0));
        IllegalArgumentException none = assertThrows(IllegalArgumentException.class,
                () -> DeviceWorkspace.create(vectorAdd, List.of(), new HostMemory()));
        assertTrue(none.getMessage().contains("at least one tensor spec"), none.getMessage());
    }

    @Test
    void aWrongShapeIsTvmsErrorAndTheWorkspaceStaysUsable() {
        List<Kernel.TensorSpec> wrong = List.of(SPECS.get(0), SPECS.get(1),
                new Kernel.TensorSpec(new long[] {N + 1}, DataType.FLOAT32));
        try (DeviceWorkspace w = DeviceWorkspace.create(vectorAdd, wrong, new HostMemory())) {
            TvmException e = assertThrows(TvmException.class, w::call);
            assertTrue(e.getMessage().contains("vector_add"), e.getMessage());
        }
    }

    @Test
    void theLaunchStreamIsPerThreadAndPutBack() throws Exception {
        Device gpu = Device.cuda(0);
        long before = Tvm.currentStream(gpu);
        long previous = Tvm.setCurrentStream(gpu, 0x1234L);
        assertEquals(before, previous);
        assertEquals(0x1234L, Tvm.currentStream(gpu));
        AtomicLong seen = new AtomicLong(-1);
        Thread other = new Thread(() -> seen.set(Tvm.currentStream(gpu)));
        other.start();
        other.join();
        assertEquals(0L, seen.get(), "another thread keeps its own (default) stream");
        assertEquals(0L, Tvm.currentStream(Device.cuda(1)), "another device keeps its own stream");
        assertEquals(0x1234L, Tvm.setCurrentStream(gpu, before));
        assertEquals(before, Tvm.currentStream(gpu));
    }

    @Test
    void foreignMemoryBecomesATensorAndBadAddressesAreRefused() {
        java.nio.ByteBuffer memory = TvmTensor.allocateDirect(4 * 8);
        long address = com.sun.jna.Pointer.nativeValue(com.sun.jna.Native.getDirectBufferPointer(memory));
        memory.asFloatBuffer().put(new float[] {1, 2, 3, 4, 5, 6, 7, 8});
        try (TvmTensor t = TvmTensor.wrapAddress(address, new long[] {2, 4}, DataType.FLOAT32, Device.cpu(), memory)) {
            assertEquals(8f, t.toFloatArray()[7]);
            assertEquals(Device.cpu(), t.device());
        }
        IllegalArgumentException unaligned = assertThrows(IllegalArgumentException.class,
                () -> TvmTensor.wrapAddress(address + 4, new long[] {2}, DataType.FLOAT32, Device.cpu(), memory));
        assertTrue(unaligned.getMessage().contains("4 bytes past a multiple of 64"), unaligned.getMessage());
        IllegalArgumentException nil = assertThrows(IllegalArgumentException.class,
                () -> TvmTensor.wrapAddress(0, new long[] {2}, DataType.FLOAT32, Device.cuda(0), memory));
        assertTrue(nil.getMessage().contains("address is null"), nil.getMessage());
    }
}
