package org.axe4j.tvm.cuda;

import org.axe4j.tvm.Device;
import org.axe4j.tvm.Tvm;

/**
 * A CUDA stream, and the scope in which compiled kernels launch on it: TVM's generated host code
 * launches on the stream {@code TVMFFIEnvGetStream} gives for the device, a per-thread setting that
 * {@link #activate()} changes and its {@link Active#close()} puts back.
 *
 * <pre>
 * try (CudaStream stream = CudaStream.create(cuda, 0); CudaStream.Active on = stream.activate()) {
 *     kernel.call(a, b, d);          // runs on stream
 *     stream.synchronize("gemm");
 * }
 * </pre>
 */
public final class CudaStream implements AutoCloseable {
    private final CudaRuntime runtime;
    private final Device device;
    private final long handle;
    private final boolean owned;
    private volatile boolean closed;

    private CudaStream(CudaRuntime runtime, Device device, long handle, boolean owned) {
        this.runtime = runtime;
        this.device = device;
        this.handle = handle;
        this.owned = owned;
    }

    /** A new non-blocking stream on GPU {@code ordinal}. */
    public static CudaStream create(Cuda cuda, int ordinal) {
        cuda.driver().gpu(ordinal);
        cuda.runtime().setDevice(ordinal);
        return new CudaStream(cuda.runtime(), Device.cuda(ordinal), cuda.runtime().streamCreate(), true);
    }

    /** The legacy default stream of GPU {@code ordinal} (handle 0; closing it does nothing). */
    public static CudaStream defaultStream(Cuda cuda, int ordinal) {
        cuda.driver().gpu(ordinal);
        return new CudaStream(cuda.runtime(), Device.cuda(ordinal), 0L, false);
    }

    public long handle() {
        return handle;
    }

    public Device device() {
        return device;
    }

    /** Kernels this thread launches on {@link #device()} go to this stream until the scope closes. */
    public Active activate() {
        requireOpen();
        return new Active(device, Tvm.setCurrentStream(device, handle));
    }

    /** Waits for everything queued on this stream; {@code after} names the work in an error. */
    public void synchronize(String after) {
        requireOpen();
        runtime.streamSynchronize(handle, after);
    }

    /** A stream made current by {@link #activate()}; closing it makes the previous one current again. */
    public static final class Active implements AutoCloseable {
        private final Device device;
        private final long previous;

        private Active(Device device, long previous) {
            this.device = device;
            this.previous = previous;
        }

        @Override
        public void close() {
            Tvm.setCurrentStream(device, previous);
        }
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("CudaStream on " + device + " is closed");
        }
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            if (owned) {
                runtime.streamDestroy(handle);
            }
        }
    }

    @Override
    public String toString() {
        return "CudaStream(" + device + ", 0x" + Long.toHexString(handle) + ")";
    }
}
