/**
 * CUDA from the JVM, with no Python in the process: loading CUDA modules, device memory, streams,
 * timing and a cuBLAS peer.
 *
 * <h2>Loading</h2>
 * A library exported by TVM 0.27 keeps its CUDA module as C++ source and compiles it when it loads,
 * through the global {@code tvm_callback_cuda_compile}. {@link org.axe4j.tvm.cuda.Cuda#enable()}
 * checks the driver ({@link org.axe4j.tvm.cuda.CudaDriver}), loads the CUDA 13 runtime
 * ({@link org.axe4j.tvm.cuda.CudaLibraries}) and TVM's {@code libtvm_runtime_cuda.so}, and registers
 * a callback that serves the fatbin whose name is the source's SHA-256
 * ({@link org.axe4j.tvm.cuda.CudaBinaries}); {@code axe4j.export_library} writes those fatbins beside
 * the library. {@link org.axe4j.tvm.TvmModule#load} does all of this by itself on the first CUDA
 * module, so a service loads a CUDA kernel exactly as a CPU one:
 * <pre>
 * Kernel gemm = ModuleCache.shared().kernel(Path.of("gemm.so"), "gemm");   // gemm.so.fatbins/ beside it
 * </pre>
 * No driver, no GPU, no fatbin for the source, or a fatbin for another arch each end in a
 * {@link org.axe4j.tvm.cuda.CudaException} that names the module, the archs and what is missing.
 *
 * <h2>Running</h2>
 * A {@link org.axe4j.tvm.cuda.DeviceWorkspace} holds one thread's device tensors and pinned staging
 * buffers; copies and launches are queued on a {@link org.axe4j.tvm.cuda.CudaStream}, which a kernel
 * launches on while the stream is {@link org.axe4j.tvm.cuda.CudaStream#activate() active} (TVM's
 * per-thread {@code TVMFFIEnvSetStream}). {@link org.axe4j.tvm.TvmTensor#wrapAddress} makes a TVM
 * tensor (DLPack) over memory any other library allocated. {@link org.axe4j.tvm.cuda.GpuTimer} times
 * with CUDA events and an optional L2 flush; {@link org.axe4j.tvm.cuda.Cublas} runs the same GEMM as
 * the native cuBLAS harness, so a comparison needs no second process.
 */
package org.axe4j.tvm.cuda;
