package org.axe4j.tvm.cuda;

import org.axe4j.tvm.Device;

/**
 * Where a {@link DeviceWorkspace} keeps its tensors and its host staging buffers, and how bytes move
 * between them: {@link CudaMemory} (device memory, pinned host memory, copies queued on a stream) or
 * {@link HostMemory} (both on the CPU: the same workspace logic on a machine without a GPU).
 * Addresses are raw; every method names its operation in errors.
 */
public interface DeviceMemory extends AutoCloseable {
    /** The device the tensors live on. */
    Device device();

    /** {@code bytes} of tensor memory, 64-byte aligned. */
    long allocateDevice(long bytes);

    void freeDevice(long address);

    /** {@code bytes} of host memory that copies to and from the device are fastest from. */
    long allocateStaging(long bytes);

    void freeStaging(long address);

    /** Queues a copy of {@code bytes} from staging to tensor memory. */
    void upload(long staging, long device, long bytes);

    /** Queues a copy of {@code bytes} from tensor memory to staging. */
    void download(long device, long staging, long bytes);

    /** Waits until everything queued (copies and launches) is done; {@code after} names it in an error. */
    void synchronize(String after);

    /** Kernels this thread launches inside the scope run where the copies are queued. */
    AutoCloseable launching();

    /** Releases what the memory itself holds (a stream, say), not the allocations. */
    @Override
    void close();
}
