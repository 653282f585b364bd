package org.axe4j.serve;

import java.util.function.Supplier;
import org.axe4j.tvm.cuda.Cuda;
import org.axe4j.tvm.cuda.CudaMemory;
import org.axe4j.tvm.cuda.DeviceMemory;

/** Device memory for a CUDA module's runners: GPU 0, a stream per thread, pinned staging ({@link CudaMemory}). */
final class CudaMemories {
    private CudaMemories() {}

    static Supplier<DeviceMemory> perThread() {
        return () -> CudaMemory.withOwnStream(Cuda.enable(), 0);
    }
}
