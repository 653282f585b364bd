package org.axe4j.tvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kernel calls over wrapped direct buffers, 10^6 of them ({@code -Daxe4j.leak.calls} changes the
 * count), keep resident memory flat: every call wraps three new tensors, calls the kernel, reads the
 * output through a view and releases everything.
 */
class ZeroCopyLeakTest {
    private static final long RSS_BOUND_KB = 16 * 1024;

    @Test
    void millionWrappedCallsKeepResidentMemoryFlat(@TempDir Path kernels) throws Exception {
        int calls = Integer.getInteger("axe4j.leak.calls", 1_000_000);
        Path script = TestSupport.repoRoot().resolve("tvm-bridge/src/test/python/export_kernels.py");
        TestSupport.Result result = TestSupport.run(List.of(TestSupport.venvPython().toString(), script.toString(),
                kernels.toString(), "16"), TestSupport.repoRoot(), 300);
        assertEquals(0, result.exitCode(), result.output());
        Kernel add = ModuleCache.shared().kernel(kernels.resolve("vector_add.so"), "vector_add");
        long[] shape = {16};
        // Buffers are reused; what each call creates and must release is three TVM tensors, their
        // DLManagedTensor structs, deleter calls and one view.
        ByteBuffer a = TvmTensor.allocateDirect(64);
        ByteBuffer b = TvmTensor.allocateDirect(64);
        ByteBuffer c = TvmTensor.allocateDirect(64);
        int warmUp = Math.max(10_000, calls / 10);
        run(add, shape, a, b, c, 0, warmUp);
        long before = ResourceTest.residentKb();
        long start = System.nanoTime();
        run(add, shape, a, b, c, warmUp, calls);
        double seconds = (System.nanoTime() - start) / 1e9;
        long after = ResourceTest.residentKb();
        System.out.printf("zero-copy calls: %d in %.1f s (%.2f us/call), VmRSS before %d kB, after %d kB, growth %d kB%n",
                calls, seconds, seconds * 1e6 / calls, before, after, after - before);
        assertTrue(after - before < RSS_BOUND_KB, "resident memory grew by " + (after - before) + " kB");
        System.gc();
        Thread.sleep(100);
        assertTrue(TvmTensor.liveWrappedBuffers() < 16, "wrapped buffers still held: " + TvmTensor.liveWrappedBuffers());
    }

    private static void run(Kernel add, long[] shape, ByteBuffer a, ByteBuffer b, ByteBuffer c, int from, int count) {
        for (int i = from; i < from + count; i++) {
            a.putFloat(0, i);
            b.putFloat(0, 1);
            try (TvmTensor ta = TvmTensor.wrap(a, shape, DataType.FLOAT32);
                 TvmTensor tb = TvmTensor.wrap(b, shape, DataType.FLOAT32);
                 TvmTensor tc = TvmTensor.wrap(c, shape, DataType.FLOAT32)) {
                add.call(ta, tb, tc);
                if (i % 16 == 0) {
                    float got = tc.asByteBuffer().getFloat(0);
                    if (got != (float) i + 1) {
                        throw new AssertionError("call " + i + ": C[0] = " + got);
                    }
                }
            }
        }
    }
}
