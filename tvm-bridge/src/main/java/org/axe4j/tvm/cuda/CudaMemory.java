package org.axe4j.tvm.cuda;

import org.axe4j.tvm.Device;

/**
 * Device memory ({@code cudaMalloc}), pinned host staging ({@code cudaHostAlloc}) and copies queued
 * with {@code cudaMemcpyAsync} on one stream, where the workspace's kernel also launches.
 */
public final class CudaMemory implements DeviceMemory {
    private final CudaRuntime runtime;
    private final CudaStream stream;
    private final boolean ownsStream;

    /** Memory on {@code stream}'s GPU; the stream stays the caller's. */
    public CudaMemory(Cuda cuda, CudaStream stream) {
        this(cuda.runtime(), stream, false);
    }

    private CudaMemory(CudaRuntime runtime, CudaStream stream, boolean ownsStream) {
        this.runtime = runtime;
        this.stream = stream;
        this.ownsStream = ownsStream;
    }

    /** Memory on GPU {@code ordinal} with a stream of its own, destroyed by {@link #close()}. */
    public static CudaMemory withOwnStream(Cuda cuda, int ordinal) {
        return new CudaMemory(cuda.runtime(), CudaStream.create(cuda, ordinal), true);
    }

    public CudaStream stream() {
        return stream;
    }

    @Override
    public Device device() {
        return stream.device();
    }

    @Override
    public long allocateDevice(long bytes) {
        return runtime.malloc(bytes);
    }

    @Override
    public void freeDevice(long address) {
        runtime.free(address);
    }

    @Override
    public long allocateStaging(long bytes) {
        return runtime.hostAlloc(bytes);
    }

    @Override
    public void freeStaging(long address) {
        runtime.freeHost(address);
    }

    @Override
    public void upload(long staging, long device, long bytes) {
        runtime.memcpyAsync(device, staging, bytes, CudaRuntime.HOST_TO_DEVICE, stream.handle());
    }

    @Override
    public void download(long device, long staging, long bytes) {
        runtime.memcpyAsync(staging, device, bytes, CudaRuntime.DEVICE_TO_HOST, stream.handle());
    }

    @Override
    public void synchronize(String after) {
        stream.synchronize(after);
    }

    @Override
    public AutoCloseable launching() {
        return stream.activate();
    }

    @Override
    public void close() {
        if (ownsStream) {
            stream.close();
        }
    }
}
