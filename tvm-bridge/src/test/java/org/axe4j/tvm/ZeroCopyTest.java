package org.axe4j.tvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Tensors over direct buffers, views of tensor memory, the module cache and kernels from many threads. */
class ZeroCopyTest {
    static final int N = 1000;
    @TempDir
    static Path kernels;
    static Path vectorAdd;

    @BeforeAll
    static void export() throws Exception {
        Path script = TestSupport.repoRoot().resolve("tvm-bridge/src/test/python/export_kernels.py");
        TestSupport.Result result = TestSupport.run(List.of(TestSupport.venvPython().toString(), script.toString(),
                kernels.toString(), String.valueOf(N)), TestSupport.repoRoot(), 300);
        assertEquals(0, result.exitCode(), result.output());
        vectorAdd = kernels.resolve("vector_add.so");
        Tvm.load();
    }

    static long residentKb() throws Exception {
        return ResourceTest.residentKb();
    }

    @Test
    void aKernelReadsAndWritesJavaBuffersInPlace() {
        ByteBuffer a = TvmTensor.allocateDirect(4L * N);
        ByteBuffer b = TvmTensor.allocateDirect(4L * N);
        ByteBuffer c = TvmTensor.allocateDirect(4L * N);
        for (int i = 0; i < N; i++) {
            a.putFloat(4 * i, i);
            b.putFloat(4 * i, 2 * i + 1);
        }
        long[] shape = {N};
        Kernel add = ModuleCache.shared().kernel(vectorAdd, "vector_add");
        try (TvmTensor ta = TvmTensor.wrap(a, shape, DataType.FLOAT32);
             TvmTensor tb = TvmTensor.wrap(b, shape, DataType.FLOAT32);
             TvmTensor tc = TvmTensor.wrap(c, shape, DataType.FLOAT32)) {
            assertEquals(com.sun.jna.Pointer.nativeValue(com.sun.jna.Native.getDirectBufferPointer(a)), ta.dataAddress());
            add.call(ta, tb, tc);
            for (int i = 0; i < N; i++) {
                assertEquals(3 * i + 1, c.getFloat(4 * i), "C[" + i + "] in the Java buffer");
            }
            a.putFloat(0, 100); // a later write by Java is what the next call reads
            add.call(ta, tb, tc);
            assertEquals(101, c.getFloat(0));
            // a view of the output tensor is the same memory as c
            FloatBuffer view = tc.asByteBuffer().asFloatBuffer();
            assertEquals(101, view.get(0));
            assertEquals(3 * 7 + 1, view.get(7));
        }
    }

    @Test
    void aViewOutlivesItsWrapperAndCopiesNothing() {
        TvmTensor t = TvmTensor.empty(new long[] {4, 8}, DataType.INT32, Device.cpu());
        int[] values = new int[32];
        for (int i = 0; i < 32; i++) {
            values[i] = i * i;
        }
        t.copyFrom(values);
        ByteBuffer view = t.asByteBuffer();
        assertEquals(128, view.capacity());
        assertSame(ByteOrder.nativeOrder(), view.order());
        t.close();
        System.gc(); // the wrapper is gone; the view still holds the tensor
        for (int i = 0; i < 32; i++) {
            assertEquals(i * i, view.getInt(4 * i));
        }
        view.putInt(0, -5);
        assertEquals(-5, view.getInt(0));
    }

    @Test
    void wrappedBuffersAreReleasedWhenTvmDropsTheTensor() throws Exception {
        int before = TvmTensor.liveWrappedBuffers();
        TvmTensor t = TvmTensor.wrap(TvmTensor.allocateDirect(64), new long[] {16}, DataType.FLOAT32);
        assertEquals(before + 1, TvmTensor.liveWrappedBuffers());
        TvmObject shared = t.share(); // a second TVM reference keeps the buffer
        t.close();
        assertEquals(before + 1, TvmTensor.liveWrappedBuffers());
        shared.close();
        assertEquals(before, TvmTensor.liveWrappedBuffers());
    }

    @Test
    void badBuffersAreNamed() {
        long[] shape = {N};
        IllegalArgumentException heap = assertThrows(IllegalArgumentException.class,
                () -> TvmTensor.wrap(ByteBuffer.allocate(4 * N), shape, DataType.FLOAT32));
        assertTrue(heap.getMessage().contains("direct"), heap.getMessage());
        IllegalArgumentException small = assertThrows(IllegalArgumentException.class,
                () -> TvmTensor.wrap(TvmTensor.allocateDirect(4L * N - 1), shape, DataType.FLOAT32));
        assertTrue(small.getMessage().contains("4000 bytes") && small.getMessage().contains("3999"), small.getMessage());
        IllegalArgumentException negative = assertThrows(IllegalArgumentException.class,
                () -> TvmTensor.wrap(TvmTensor.allocateDirect(16), new long[] {2, -1}, DataType.FLOAT32));
        assertTrue(negative.getMessage().contains("-1") && negative.getMessage().contains("dimension 1"),
                negative.getMessage());
        IllegalArgumentException readOnly = assertThrows(IllegalArgumentException.class,
                () -> TvmTensor.wrap(TvmTensor.allocateDirect(16).asReadOnlyBuffer(), new long[] {4}, DataType.FLOAT32));
        assertTrue(readOnly.getMessage().contains("read-only"), readOnly.getMessage());
        ByteBuffer shifted = TvmTensor.allocateDirect(4L * N + 64).position(4).slice();
        IllegalArgumentException unaligned = assertThrows(IllegalArgumentException.class,
                () -> TvmTensor.wrap(shifted, shape, DataType.FLOAT32));
        assertTrue(unaligned.getMessage().contains("4 bytes past a multiple of 64"), unaligned.getMessage());
        IllegalArgumentException nullBuffer = assertThrows(IllegalArgumentException.class,
                () -> TvmTensor.wrap(null, shape, DataType.FLOAT32));
        assertTrue(nullBuffer.getMessage().contains("buffer"), nullBuffer.getMessage());
        // a wrong shape for the kernel is TVM's error, not a crash
        Kernel add = ModuleCache.shared().kernel(vectorAdd, "vector_add");
        try (TvmTensor three = TvmTensor.wrap(TvmTensor.allocateDirect(12), new long[] {3}, DataType.FLOAT32)) {
            assertThrows(TvmException.class, () -> add.call(three, three, three));
        }
    }

    @Test
    void theCacheLoadsOnceAndNamesBadPaths(@TempDir Path dir) throws Exception {
        try (ModuleCache cache = new ModuleCache()) {
            Path link = Files.createSymbolicLink(dir.resolve("link.so"), vectorAdd);
            assertSame(cache.module(vectorAdd), cache.module(link));
            assertSame(cache.kernel(vectorAdd, "vector_add"), cache.kernel(link, "vector_add"));
            assertEquals(1, cache.size());
            IllegalArgumentException missing = assertThrows(IllegalArgumentException.class,
                    () -> cache.module(dir.resolve("none.so")));
            assertTrue(missing.getMessage().contains("none.so"), missing.getMessage());
            java.util.NoSuchElementException noFunction = assertThrows(java.util.NoSuchElementException.class,
                    () -> cache.kernel(vectorAdd, "no_such_kernel"));
            assertTrue(noFunction.getMessage().contains("no_such_kernel"), noFunction.getMessage());
        }
    }

    /** Eight threads load through one cache and call one kernel, each with its own workspace. */
    @Test
    void oneKernelFromManyThreads() throws Exception {
        try (ModuleCache cache = new ModuleCache()) {
            List<Kernel.TensorSpec> specs = List.of(new Kernel.TensorSpec(new long[] {N}, DataType.FLOAT32),
                    new Kernel.TensorSpec(new long[] {N}, DataType.FLOAT32),
                    new Kernel.TensorSpec(new long[] {N}, DataType.FLOAT32));
            ExecutorService pool = Executors.newFixedThreadPool(8);
            try {
                List<Future<Kernel>> futures = new ArrayList<>();
                for (int t = 0; t < 8; t++) {
                    final int seed = t;
                    futures.add(pool.submit(() -> {
                        Kernel k = cache.kernel(vectorAdd, "vector_add");
                        try (Kernel.Workspace w = k.newWorkspace(specs)) {
                            FloatBuffer a = w.buffer(0).asFloatBuffer();
                            FloatBuffer b = w.buffer(1).asFloatBuffer();
                            FloatBuffer c = w.buffer(2).asFloatBuffer();
                            for (int round = 0; round < 2000; round++) {
                                float base = seed * 10_000 + round;
                                a.put(0, base).put(N - 1, -base);
                                b.put(0, 1).put(N - 1, 2);
                                w.call();
                                if (c.get(0) != base + 1 || c.get(N - 1) != -base + 2) {
                                    throw new AssertionError("thread " + seed + " round " + round + ": " + c.get(0));
                                }
                            }
                        }
                        return k;
                    }));
                }
                Kernel first = futures.get(0).get();
                for (Future<Kernel> f : futures) {
                    assertSame(first, f.get());
                }
            } finally {
                pool.shutdown();
            }
            assertEquals(1, cache.size());
        }
    }
}
