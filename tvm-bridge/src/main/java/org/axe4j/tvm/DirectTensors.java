package org.axe4j.tvm;

import com.sun.jna.Native;
import com.sun.jna.Pointer;
import java.lang.ref.Cleaner;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Zero-copy tensors over Java memory and Java views of tensor memory.
 *
 * <p>{@link #wrap}: a {@code DLManagedTensor} (64 bytes, then the shape) is built in memory from
 * {@code malloc}; its {@code data} is the buffer's address and its {@code manager_ctx} an id under
 * which this class holds the buffer. {@code TVMFFITensorFromDLPack} adopts it. When TVM drops the
 * last reference it calls the deleter, which forgets the buffer and frees the struct: the buffer
 * stays reachable exactly as long as TVM can read or write it.
 *
 * <p>{@link #view}: a direct buffer over a CPU tensor's memory that holds one reference to the
 * tensor until the buffer (and every slice or typed view of it, which reference it) is collected.
 */
final class DirectTensors {
    /** {@code DLManagedTensor}: {@code DLTensor dl_tensor @0 (48 bytes), manager_ctx @48, deleter @56}. */
    static final int MANAGED_BYTES = 64;
    /** The alignment TVM's allocator gives tensors, and which its compiled CPU kernels rely on. */
    static final int ALIGNMENT = 64;
    private static final Map<Long, Object> HELD = new ConcurrentHashMap<>();
    private static final AtomicLong NEXT_ID = new AtomicLong(1);
    private static final Cleaner VIEWS = Cleaner.create();

    /** {@code void deleter(DLManagedTensor* self)}: static, so the GC never frees the native stub. */
    private static final Ffi.Deleter DELETER = managed -> {
        long id = new Pointer(managed).getLong(48);
        HELD.remove(id);
        Native.free(managed);
    };
    private static final long DELETER_ADDRESS = Pointer.nativeValue(
            com.sun.jna.CallbackReference.getFunctionPointer(DELETER));

    private DirectTensors() {}

    /** Number of Java buffers TVM tensors still share. */
    static int liveWrapped() {
        return HELD.size();
    }

    static TvmTensor wrap(ByteBuffer buffer, long[] shape, DataType dtype) {
        if (buffer == null) {
            throw new IllegalArgumentException("TvmTensor.wrap: buffer is null");
        }
        if (!buffer.isDirect()) {
            throw new IllegalArgumentException("TvmTensor.wrap: buffer must be direct (ByteBuffer.allocateDirect or"
                    + " TvmTensor.allocateDirect), not a heap buffer, which the GC may move");
        }
        if (buffer.isReadOnly()) {
            throw new IllegalArgumentException("TvmTensor.wrap: buffer is read-only, and TVM functions may write a tensor");
        }
        if (shape == null || dtype == null) {
            throw new IllegalArgumentException("TvmTensor.wrap: shape and dtype must not be null");
        }
        if (dtype.bits() % 8 != 0) {
            throw new IllegalArgumentException("TvmTensor.wrap: dtype " + dtype + " is not a whole number of bytes");
        }
        long elements = 1;
        for (int i = 0; i < shape.length; i++) {
            if (shape[i] < 0) {
                throw new IllegalArgumentException("TvmTensor.wrap: shape " + Arrays.toString(shape) + " has extent "
                        + shape[i] + " at dimension " + i + "; extents must be >= 0");
            }
            elements = Math.multiplyExact(elements, shape[i]);
        }
        long bytes = Math.multiplyExact(elements, (long) dtype.bytes());
        if (bytes > buffer.remaining()) {
            throw new IllegalArgumentException("TvmTensor.wrap: a " + dtype + Arrays.toString(shape) + " tensor needs "
                    + bytes + " bytes, the buffer has " + buffer.remaining() + " remaining from position "
                    + buffer.position());
        }
        long data = Pointer.nativeValue(Native.getDirectBufferPointer(buffer)) + buffer.position();
        if (data % ALIGNMENT != 0) {
            throw new IllegalArgumentException("TvmTensor.wrap: the buffer's data at position " + buffer.position()
                    + " starts at an address that is " + (data % ALIGNMENT) + " bytes past a multiple of " + ALIGNMENT
                    + "; TVM's compiled kernels assume " + ALIGNMENT + "-byte aligned tensors (unaligned data makes"
                    + " their vector loads fault). Use TvmTensor.allocateDirect or ByteBuffer.alignedSlice(64)");
        }
        return adopt(data, Device.cpu(), shape, dtype, buffer);
    }

    /**
     * A tensor over memory at {@code data} on {@code device} (host, pinned host or device memory that
     * the caller allocated), compact row-major; {@code owner} stays strongly reachable until TVM drops
     * the tensor, so memory freed when the owner is collected or closed outlives every TVM use.
     */
    static TvmTensor wrapAddress(long data, long[] shape, DataType dtype, Device device, Object owner) {
        if (data == 0) {
            throw new IllegalArgumentException("TvmTensor.wrapAddress: address is null");
        }
        if (shape == null || dtype == null || device == null || owner == null) {
            throw new IllegalArgumentException("TvmTensor.wrapAddress: shape, dtype, device and owner must not be null");
        }
        for (int i = 0; i < shape.length; i++) {
            if (shape[i] < 0) {
                throw new IllegalArgumentException("TvmTensor.wrapAddress: shape " + Arrays.toString(shape)
                        + " has extent " + shape[i] + " at dimension " + i + "; extents must be >= 0");
            }
        }
        if (data % ALIGNMENT != 0) {
            throw new IllegalArgumentException("TvmTensor.wrapAddress: address 0x" + Long.toHexString(data) + " is "
                    + (data % ALIGNMENT) + " bytes past a multiple of " + ALIGNMENT + "; TVM's kernels assume "
                    + ALIGNMENT + "-byte aligned tensors");
        }
        return adopt(data, device, shape, dtype, owner);
    }

    /** Builds the {@code DLManagedTensor} and hands it to TVM; {@code owner} is held until the deleter runs. */
    private static TvmTensor adopt(long data, Device device, long[] shape, DataType dtype, Object owner) {
        Tvm.load();
        long managed = Native.malloc(MANAGED_BYTES + 8L * Math.max(1, shape.length));
        if (managed == 0) {
            throw new OutOfMemoryError("TvmTensor: malloc of a DLManagedTensor failed");
        }
        long id = NEXT_ID.getAndIncrement();
        Pointer m = new Pointer(managed);
        m.setLong(0, data);
        m.setInt(8, device.deviceType());
        m.setInt(12, device.deviceId());
        m.setInt(16, shape.length);
        m.setByte(20, (byte) dtype.code());
        m.setByte(21, (byte) dtype.bits());
        m.setShort(22, (short) dtype.lanes());
        m.setLong(24, managed + MANAGED_BYTES);
        m.setLong(32, 0L); // compact row-major
        m.setLong(40, 0L);
        m.setLong(48, id);
        m.setLong(56, DELETER_ADDRESS);
        for (int i = 0; i < shape.length; i++) {
            m.setLong(MANAGED_BYTES + 8L * i, shape[i]);
        }
        HELD.put(id, owner);
        try (CallFrame frame = CallFrame.acquire(0)) {
            int rc = Ffi.TVMFFITensorFromDLPack(managed, ALIGNMENT, 1, frame.address + CallFrame.OUT_HANDLE);
            if (rc != 0) {
                // not adopted: the deleter was not called, so release here
                HELD.remove(id);
                Native.free(managed);
                throw TvmErrors.fromRaised();
            }
            return new TvmTensor(frame.buffer.getLong(CallFrame.OUT_HANDLE));
        }
    }

    /** A direct buffer over the bytes of a CPU tensor, keeping the tensor alive while reachable. */
    static ByteBuffer view(TvmTensor tensor) {
        Device device = tensor.device();
        if (device.deviceType() != Device.CPU && device.deviceType() != Device.CUDA_HOST) {
            throw new IllegalStateException("TvmTensor.asByteBuffer: the tensor lives on " + device
                    + ", not in host memory; copy it with copyTo");
        }
        if (!tensor.isContiguous()) {
            throw new IllegalStateException("TvmTensor.asByteBuffer: the tensor is strided, not compact row-major");
        }
        long bytes = tensor.byteSize();
        if (bytes > Integer.MAX_VALUE) {
            throw new IllegalStateException("TvmTensor.asByteBuffer: " + bytes + " bytes do not fit one ByteBuffer");
        }
        long handle = tensor.handle();
        Ffi.TVMFFIObjectIncRef(handle);
        ByteBuffer view = bytes == 0 ? ByteBuffer.allocateDirect(0)
                : new Pointer(tensor.dataAddress()).getByteBuffer(0, bytes);
        view.order(ByteOrder.nativeOrder());
        VIEWS.register(view, () -> Ffi.TVMFFIObjectDecRef(handle));
        return view;
    }

    /** A zeroed direct buffer of {@code bytes} bytes whose address is a multiple of 64, in native order. */
    static ByteBuffer allocateAligned(long bytes) {
        if (bytes < 0 || bytes > Integer.MAX_VALUE - 256) {
            throw new IllegalArgumentException("TvmTensor.allocateDirect: bytes (" + bytes + ") must be between 0 and "
                    + (Integer.MAX_VALUE - 256));
        }
        // alignedSlice also rounds the capacity down to a multiple of 64: allocate whole 64-byte units plus one
        int units = (int) ((bytes + 63) / 64);
        return ByteBuffer.allocateDirect(64 * (units + 1)).alignedSlice(64).limit((int) bytes).slice()
                .order(ByteOrder.nativeOrder());
    }
}
