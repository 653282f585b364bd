package org.axe4j.tvm;

import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import java.nio.ByteBuffer;

/**
 * A TVM tensor ({@code ffi.Tensor}); its cell is a {@code DLTensor}:
 * {@code void* data @0, DLDevice device @8, int32 ndim @16, DLDataType dtype @20,
 * int64* shape @24, int64* strides @32, uint64 byte_offset @40}.
 * Copies go through TVM ({@code runtime.TVMTensorCopyFromBytes/ToBytes}), so they work for any
 * device TVM supports, not only the CPU.
 *
 * <h2>Without copies</h2>
 * {@link #wrap} makes a CPU tensor whose elements are the bytes of a direct {@link ByteBuffer}
 * (DLPack, no copy); {@link #asByteBuffer} gives a direct buffer over a CPU tensor's elements. A
 * service reads a request straight into a wrapped buffer, calls the kernel, and answers from the
 * output's buffer: no element is copied by the bridge.
 *
 * <h2>Ownership and lifetime</h2>
 * <ul>
 *   <li>{@code wrap(buffer, ...)}: TVM holds {@code buffer} (strongly, from Java) until the last TVM
 *       reference to the tensor is gone: this wrapper closed or collected, and every TVM object that
 *       kept it (a module result, a container) released. Only then may the buffer's memory be freed,
 *       which the GC does by itself. Java may read and write the buffer at any time; ordering those
 *       accesses against kernel calls on other threads is the caller's business.</li>
 *   <li>{@code asByteBuffer()}: the view holds one reference to the tensor for as long as the view,
 *       or any slice or typed view made from it, is reachable; it stays valid after this wrapper is
 *       closed. Host tensors only.</li>
 *   <li>{@code wrap} refuses data that is not 64-byte aligned: TVM's allocator gives its own tensors
 *       that alignment, and its compiled CPU kernels use aligned vector loads without checking (a
 *       misaligned numpy array passed through DLPack faults in the GEMM kernel of
 *       {@code examples/serve}). {@link #allocateDirect} gives aligned direct buffers;
 *       {@code ByteBuffer.allocateDirect} alone gives 16-byte alignment at best.</li>
 * </ul>
 * JDK 17's foreign-memory API ({@code jdk.incubator.foreign}) is an incubator module whose API
 * changed in every later release, so {@code MemorySegment}s are not accepted directly; a segment's
 * {@code asByteBuffer()} is a direct buffer that {@code wrap} takes.
 */
public final class TvmTensor extends TvmObject {
    TvmTensor(long handle) {
        super(handle);
    }

    /** Allocates an uninitialised tensor ({@code runtime.TVMTensorAllocWithScope}, global scope). */
    public static TvmTensor empty(long[] shape, DataType dtype, Device device) {
        Tvm.load();
        return (TvmTensor) Tvm.cached("runtime.TVMTensorAllocWithScope").callRaw(shape, dtype, device, null);
    }

    /**
     * A CPU tensor over {@code buffer}'s bytes from its position on, compact row-major, without
     * copying; see the class comment for who owns what.
     *
     * @throws IllegalArgumentException naming the argument when the buffer is a heap or read-only
     *     buffer, its data is not 64-byte aligned, an extent is negative, the dtype is not whole
     *     bytes or the buffer is too short
     */
    public static TvmTensor wrap(ByteBuffer buffer, long[] shape, DataType dtype) {
        return DirectTensors.wrap(buffer, shape, dtype);
    }

    /**
     * A tensor over memory the caller allocated at {@code address} on {@code device}: device memory
     * ({@code cudaMalloc}), pinned host memory, or memory another library hands over. Compact
     * row-major, 64-byte aligned. TVM holds {@code owner} strongly until its last reference to the
     * tensor is gone, so an owner that frees the memory when closed or collected must not be closed
     * before then.
     *
     * @throws IllegalArgumentException naming the argument for a null or unaligned address, a
     *     negative extent or a missing argument
     */
    public static TvmTensor wrapAddress(long address, long[] shape, DataType dtype, Device device, Object owner) {
        return DirectTensors.wrapAddress(address, shape, dtype, device, owner);
    }

    /** A zeroed, 64-byte aligned direct buffer of {@code bytes} bytes in native byte order. */
    public static ByteBuffer allocateDirect(long bytes) {
        return DirectTensors.allocateAligned(bytes);
    }

    /**
     * The tensor's elements as a direct buffer in native byte order, without copying; it keeps the
     * tensor's memory alive while reachable (class comment).
     *
     * @throws IllegalStateException when the tensor is not in host memory or not compact
     */
    public ByteBuffer asByteBuffer() {
        ByteBuffer view = DirectTensors.view(this);
        java.lang.ref.Reference.reachabilityFence(this);
        return view;
    }

    /** Number of Java owners (buffers of {@link #wrap}, owners of {@link #wrapAddress}) that TVM tensors still hold. */
    public static int liveWrappedBuffers() {
        return DirectTensors.liveWrapped();
    }

    private Pointer dl() {
        return new Pointer(handle() + HEADER_BYTES);
    }

    public long[] shape() {
        Pointer t = dl();
        int ndim = t.getInt(16);
        return ndim == 0 ? new long[0] : new Pointer(t.getLong(24)).getLongArray(0, ndim);
    }

    public int ndim() {
        return dl().getInt(16);
    }

    public DataType dtype() {
        Pointer t = dl();
        return new DataType(t.getByte(20) & 0xff, t.getByte(21) & 0xff, t.getShort(22) & 0xffff);
    }

    public Device device() {
        Pointer t = dl();
        return new Device(t.getInt(8), t.getInt(12));
    }

    /** Address of the first element ({@code data + byte_offset}). */
    public long dataAddress() {
        Pointer t = dl();
        return t.getLong(0) + t.getLong(40);
    }

    /** Whether the strides are absent or row-major compact. */
    public boolean isContiguous() {
        Pointer t = dl();
        long strides = t.getLong(32);
        if (strides == 0) {
            return true;
        }
        long[] shape = shape();
        long expected = 1;
        for (int i = shape.length - 1; i >= 0; i--) {
            if (shape[i] != 1 && new Pointer(strides).getLong(8L * i) != expected) {
                return false;
            }
            expected *= shape[i];
        }
        return true;
    }

    public long elementCount() {
        long n = 1;
        for (long d : shape()) {
            n = Math.multiplyExact(n, d);
        }
        return n;
    }

    public long byteSize() {
        return Math.multiplyExact(elementCount(), (long) dtype().bytes());
    }

    public TvmTensor copyFrom(float[] values) {
        requireElements(values.length, 4, "float[]");
        Memory m = new Memory(byteSize());
        m.write(0, values, 0, values.length);
        return copyFromAddress(m);
    }

    public TvmTensor copyFrom(double[] values) {
        requireElements(values.length, 8, "double[]");
        Memory m = new Memory(byteSize());
        m.write(0, values, 0, values.length);
        return copyFromAddress(m);
    }

    public TvmTensor copyFrom(int[] values) {
        requireElements(values.length, 4, "int[]");
        Memory m = new Memory(byteSize());
        m.write(0, values, 0, values.length);
        return copyFromAddress(m);
    }

    public TvmTensor copyFrom(long[] values) {
        requireElements(values.length, 8, "long[]");
        Memory m = new Memory(byteSize());
        m.write(0, values, 0, values.length);
        return copyFromAddress(m);
    }

    public TvmTensor copyFrom(short[] values) {
        requireElements(values.length, 2, "short[]");
        Memory m = new Memory(byteSize());
        m.write(0, values, 0, values.length);
        return copyFromAddress(m);
    }

    public TvmTensor copyFrom(byte[] values) {
        requireElements(values.length, 1, "byte[]");
        Memory m = new Memory(Math.max(1, byteSize()));
        m.write(0, values, 0, values.length);
        return copyFromAddress(m);
    }

    /** Copies {@link #byteSize()} bytes from a direct buffer, starting at its position. */
    public TvmTensor copyFrom(ByteBuffer direct) {
        Pointer source = directAddress(direct, "copyFrom");
        Tvm.cached("runtime.TVMTensorCopyFromBytes").call(this, source, byteSize());
        return this;
    }

    /** Copies the tensor into a direct buffer, starting at its position. */
    public void copyTo(ByteBuffer direct) {
        Pointer target = directAddress(direct, "copyTo");
        Tvm.cached("runtime.TVMTensorCopyToBytes").call(this, target, byteSize());
    }

    public float[] toFloatArray() {
        requireElementBytes(4, "float[]");
        return readAll().getFloatArray(0, Math.toIntExact(elementCount()));
    }

    public double[] toDoubleArray() {
        requireElementBytes(8, "double[]");
        return readAll().getDoubleArray(0, Math.toIntExact(elementCount()));
    }

    public int[] toIntArray() {
        requireElementBytes(4, "int[]");
        return readAll().getIntArray(0, Math.toIntExact(elementCount()));
    }

    public long[] toLongArray() {
        requireElementBytes(8, "long[]");
        return readAll().getLongArray(0, Math.toIntExact(elementCount()));
    }

    public short[] toShortArray() {
        requireElementBytes(2, "short[]");
        return readAll().getShortArray(0, Math.toIntExact(elementCount()));
    }

    public byte[] toByteArray() {
        return readAll().getByteArray(0, Math.toIntExact(byteSize()));
    }

    /**
     * Exports as a {@code DLManagedTensor*} ({@code TVMFFITensorToDLPack}); the consumer owns it
     * and calls its deleter, which releases TVM's reference.
     */
    public long toDLPack() {
        try (CallFrame frame = CallFrame.acquire(0)) {
            TvmErrors.check(Ffi.TVMFFITensorToDLPack(handle(), frame.address + CallFrame.OUT_HANDLE));
            return frame.buffer.getLong(CallFrame.OUT_HANDLE);
        }
    }

    /** Imports a {@code DLManagedTensor*}, taking ownership of it ({@code TVMFFITensorFromDLPack}). */
    public static TvmTensor fromDLPack(long managedTensor) {
        Tvm.load();
        try (CallFrame frame = CallFrame.acquire(0)) {
            TvmErrors.check(Ffi.TVMFFITensorFromDLPack(managedTensor, 0, 0, frame.address + CallFrame.OUT_HANDLE));
            return new TvmTensor(frame.buffer.getLong(CallFrame.OUT_HANDLE));
        }
    }

    private TvmTensor copyFromAddress(Memory source) {
        Tvm.cached("runtime.TVMTensorCopyFromBytes").call(this, source, byteSize());
        return this;
    }

    private Memory readAll() {
        Memory m = new Memory(Math.max(1, byteSize()));
        Tvm.cached("runtime.TVMTensorCopyToBytes").call(this, m, byteSize());
        return m;
    }

    private Pointer directAddress(ByteBuffer buffer, String operation) {
        if (!buffer.isDirect()) {
            throw new IllegalArgumentException("TvmTensor." + operation + ": needs a direct ByteBuffer");
        }
        if (buffer.remaining() < byteSize()) {
            throw new IllegalArgumentException("TvmTensor." + operation + ": buffer has " + buffer.remaining()
                    + " bytes remaining, tensor " + dtype() + java.util.Arrays.toString(shape()) + " needs "
                    + byteSize());
        }
        return Native.getDirectBufferPointer(buffer).share(buffer.position());
    }

    private void requireElements(int length, int elementBytes, String javaType) {
        requireElementBytes(elementBytes, javaType);
        if (length != elementCount()) {
            throw new IllegalArgumentException("TvmTensor.copyFrom(" + javaType + "): " + length
                    + " values for a tensor of " + elementCount() + " elements " + java.util.Arrays.toString(shape()));
        }
    }

    private void requireElementBytes(int elementBytes, String javaType) {
        if (dtype().bytes() != elementBytes) {
            throw new IllegalArgumentException("TvmTensor: " + javaType + " holds " + elementBytes
                    + "-byte elements but the tensor's dtype is " + dtype());
        }
    }

    @Override
    public String toString() {
        return isClosed() ? "TvmTensor(released)" : "Tensor(" + dtype() + java.util.Arrays.toString(shape()) + ", "
                + device() + ")";
    }
}
