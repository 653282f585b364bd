package org.axe4j.tvm.cuda;

import com.sun.jna.Native;
import com.sun.jna.Pointer;
import org.axe4j.tvm.Device;

/**
 * Tensors and staging both in host memory, copies done at once: a {@link DeviceWorkspace} over CPU
 * kernels, so that its logic (staging, copies in both directions, the call, the order) runs and is
 * tested where there is no GPU.
 */
public final class HostMemory implements DeviceMemory {
    private static final int ALIGNMENT = 64;

    @Override
    public Device device() {
        return Device.cpu();
    }

    @Override
    public long allocateDevice(long bytes) {
        return allocate(bytes);
    }

    @Override
    public void freeDevice(long address) {
        free(address);
    }

    @Override
    public long allocateStaging(long bytes) {
        return allocate(bytes);
    }

    @Override
    public void freeStaging(long address) {
        free(address);
    }

    @Override
    public void upload(long staging, long device, long bytes) {
        copy(staging, device, bytes);
    }

    @Override
    public void download(long device, long staging, long bytes) {
        copy(device, staging, bytes);
    }

    @Override
    public void synchronize(String after) {
        // copies and CPU kernels are done when their calls return
    }

    @Override
    public AutoCloseable launching() {
        return () -> { };
    }

    @Override
    public void close() {
        // nothing held beyond the allocations, which their owner frees
    }

    /** 64-byte aligned: the raw block is {@code bytes + 64 + 8}, its address kept just below the aligned one. */
    private static long allocate(long bytes) {
        long raw = Native.malloc(Math.max(1, bytes) + ALIGNMENT + 8);
        if (raw == 0) {
            throw new OutOfMemoryError("HostMemory: malloc(" + bytes + ") failed");
        }
        long aligned = (raw + 8 + ALIGNMENT - 1) & -ALIGNMENT;
        new Pointer(aligned - 8).setLong(0, raw);
        return aligned;
    }

    private static void free(long aligned) {
        Native.free(new Pointer(aligned - 8).getLong(0));
    }

    private static void copy(long from, long to, long bytes) {
        if (bytes > 0) {
            new Pointer(to).write(0, new Pointer(from).getByteArray(0, Math.toIntExact(bytes)), 0, (int) bytes);
        }
    }
}
