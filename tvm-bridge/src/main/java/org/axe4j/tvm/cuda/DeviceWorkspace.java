package org.axe4j.tvm.cuda;

import com.sun.jna.Pointer;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.function.Supplier;
import org.axe4j.tvm.Kernel;
import org.axe4j.tvm.TvmTensor;

/**
 * One thread's tensors for a kernel that runs on a device: each argument has tensor memory on the
 * device and a host staging buffer (pinned under CUDA), allocated once, so a request path allocates
 * nothing. Per request: write inputs into {@link #host(int)}, {@link #upload}, {@link #call()},
 * {@link #download} (which waits), read outputs from {@link #host(int)}. Copies and the launch are
 * queued on the memory's stream in that order. Not thread-safe: give each thread its own
 * ({@link #perThread}).
 *
 * <pre>
 * try (DeviceWorkspace w = DeviceWorkspace.create(kernel, specs, CudaMemory.withOwnStream(Cuda.enable(), 0))) {
 *     w.host(0).asShortBuffer().put(a);  w.host(1).asShortBuffer().put(b);
 *     w.upload(0, 1);  w.call();  w.download(2);
 *     short d00 = w.host(2).getShort(0);
 * }
 * </pre>
 */
public final class DeviceWorkspace implements AutoCloseable {
    private final Kernel kernel;
    private final List<Kernel.TensorSpec> specs;
    private final DeviceMemory memory;
    private final long[] deviceAddresses;
    private final long[] stagingAddresses;
    private final ByteBuffer[] staging;
    private final TvmTensor[] tensors;
    private boolean closed;

    private DeviceWorkspace(Kernel kernel, List<Kernel.TensorSpec> specs, DeviceMemory memory) {
        this.kernel = kernel;
        this.specs = List.copyOf(specs);
        this.memory = memory;
        int n = specs.size();
        deviceAddresses = new long[n];
        stagingAddresses = new long[n];
        staging = new ByteBuffer[n];
        tensors = new TvmTensor[n];
        try {
            for (int i = 0; i < n; i++) {
                Kernel.TensorSpec spec = specs.get(i);
                long bytes = spec.bytes();
                if (bytes > Integer.MAX_VALUE) {
                    throw new IllegalArgumentException("DeviceWorkspace: argument " + i + " (" + spec + ") is "
                            + bytes + " bytes; a staging buffer holds at most " + Integer.MAX_VALUE);
                }
                deviceAddresses[i] = memory.allocateDevice(bytes);
                stagingAddresses[i] = memory.allocateStaging(bytes);
                staging[i] = new Pointer(stagingAddresses[i]).getByteBuffer(0, bytes).order(ByteOrder.nativeOrder());
                tensors[i] = TvmTensor.wrapAddress(deviceAddresses[i], spec.shape(), spec.dtype(), memory.device(), this);
            }
        } catch (RuntimeException e) {
            release();
            throw e;
        }
    }

    /**
     * A workspace for {@code kernel}'s tensor arguments, one spec each in order, in {@code memory}
     * (which the workspace closes with itself).
     *
     * @throws IllegalArgumentException when there is no spec or an argument is too large to stage
     */
    public static DeviceWorkspace create(Kernel kernel, List<Kernel.TensorSpec> specs, DeviceMemory memory) {
        if (specs == null || specs.isEmpty()) {
            throw new IllegalArgumentException("DeviceWorkspace of " + kernel.name() + ": at least one tensor spec"
                    + " is needed");
        }
        return new DeviceWorkspace(kernel, specs, memory);
    }

    /** One workspace per calling thread, each with the memory {@code memories} makes (a stream each, say). */
    public static ThreadLocal<DeviceWorkspace> perThread(Kernel kernel, List<Kernel.TensorSpec> specs,
                                                         Supplier<DeviceMemory> memories) {
        List<Kernel.TensorSpec> copy = List.copyOf(specs);
        return ThreadLocal.withInitial(() -> create(kernel, copy, memories.get()));
    }

    /** Argument {@code index}'s staging bytes (native order, position 0). */
    public ByteBuffer host(int index) {
        requireOpen();
        return staging[check(index)].duplicate().order(ByteOrder.nativeOrder());
    }

    /** Argument {@code index} as a TVM tensor on the device. */
    public TvmTensor tensor(int index) {
        return tensors[check(index)];
    }

    public List<Kernel.TensorSpec> specs() {
        return specs;
    }

    public DeviceMemory memory() {
        return memory;
    }

    /** Queues the staging-to-device copy of each argument named. */
    public void upload(int... indices) {
        requireOpen();
        for (int i : indices) {
            memory.upload(stagingAddresses[check(i)], deviceAddresses[i], staging[i].capacity());
        }
    }

    /** Queues the kernel on the workspace's tensors, in argument order. */
    public void call() {
        requireOpen();
        try (AutoCloseable on = memory.launching()) {
            kernel.call((Object[]) tensors);
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException("DeviceWorkspace of " + kernel.name() + ": leaving the launch scope", e);
        }
    }

    /** Queues the device-to-staging copy of each argument named, then waits for all queued work. */
    public void download(int... indices) {
        requireOpen();
        for (int i : indices) {
            memory.download(deviceAddresses[check(i)], stagingAddresses[i], staging[i].capacity());
        }
        memory.synchronize(kernel.name() + " and its copies");
    }

    private int check(int index) {
        if (index < 0 || index >= tensors.length) {
            throw new IndexOutOfBoundsException("DeviceWorkspace of " + kernel.name() + ": argument " + index
                    + " of " + tensors.length + " (" + specs + ")");
        }
        return index;
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("DeviceWorkspace of " + kernel.name() + " is closed");
        }
    }

    /** Waits for queued work, then frees the memory and closes the memory's own resources. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            memory.synchronize("closing the workspace of " + kernel.name());
        } finally {
            release();
        }
    }

    private void release() {
        for (int i = 0; i < tensors.length; i++) {
            if (tensors[i] != null) {
                tensors[i].close();
            }
        }
        for (int i = 0; i < tensors.length; i++) {
            if (deviceAddresses[i] != 0) {
                memory.freeDevice(deviceAddresses[i]);
            }
            if (stagingAddresses[i] != 0) {
                memory.freeStaging(stagingAddresses[i]);
            }
        }
        memory.close();
    }
}
