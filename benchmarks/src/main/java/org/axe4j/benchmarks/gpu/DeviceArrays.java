package org.axe4j.benchmarks.gpu;

import com.sun.jna.Memory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import org.axe4j.tvm.DataType;
import org.axe4j.tvm.Device;
import org.axe4j.tvm.TvmTensor;
import org.axe4j.tvm.cuda.Cuda;
import org.axe4j.tvm.cuda.CudaRuntime;

/** Device arrays a run allocates ({@code cudaMalloc}), as TVM tensors, all freed together by {@link #close()}. */
final class DeviceArrays implements AutoCloseable {
    private final CudaRuntime runtime;
    private final Device device;
    private final List<Long> allocations = new ArrayList<>();
    private final List<TvmTensor> tensors = new ArrayList<>();

    DeviceArrays(Cuda cuda, Device device) {
        this.runtime = cuda.runtime();
        this.device = device;
    }

    static long bytes(long[] shape, DataType dtype) {
        long n = dtype.bytes();
        for (long d : shape) {
            n = Math.multiplyExact(n, d);
        }
        return n;
    }

    /** A zeroed device tensor. */
    TvmTensor zeros(long[] shape, DataType dtype) {
        long size = bytes(shape, dtype);
        long address = runtime.malloc(size);
        allocations.add(address);
        runtime.memsetAsync(address, 0, size, 0);
        runtime.deviceSynchronize("zeroing a " + dtype + java.util.Arrays.toString(shape) + " array");
        TvmTensor tensor = TvmTensor.wrapAddress(address, shape, dtype, device, this);
        tensors.add(tensor);
        return tensor;
    }

    /** A device tensor holding {@code data} (little-endian element bytes, exactly its size). */
    TvmTensor upload(ByteBuffer data, long[] shape, DataType dtype) {
        TvmTensor tensor = zeros(shape, dtype);
        copyIn(tensor, data);
        return tensor;
    }

    void copyIn(TvmTensor tensor, ByteBuffer data) {
        long size = tensor.byteSize();
        if (data.remaining() != size) {
            throw new IllegalArgumentException("DeviceArrays: " + data.remaining() + " bytes for " + tensor);
        }
        Memory staging = new Memory(Math.max(1, size));
        staging.getByteBuffer(0, size).put(data.duplicate());
        runtime.memcpy(tensor.dataAddress(), com.sun.jna.Pointer.nativeValue(staging), size,
                CudaRuntime.HOST_TO_DEVICE);
    }

    void zero(TvmTensor tensor) {
        runtime.memsetAsync(tensor.dataAddress(), 0, tensor.byteSize(), 0);
    }

    /** The tensor's bytes (waits for the device). */
    ByteBuffer download(TvmTensor tensor) {
        long size = tensor.byteSize();
        Memory staging = new Memory(Math.max(1, size));
        runtime.deviceSynchronize("the work before a download");
        runtime.memcpy(com.sun.jna.Pointer.nativeValue(staging), tensor.dataAddress(), size, CudaRuntime.DEVICE_TO_HOST);
        ByteBuffer copy = ByteBuffer.allocate((int) size).order(ByteOrder.LITTLE_ENDIAN);
        copy.put(staging.getByteBuffer(0, size)).flip();
        return copy;
    }

    @Override
    public void close() {
        runtime.deviceSynchronize("the run, before freeing its arrays");
        tensors.forEach(TvmTensor::close);
        allocations.forEach(runtime::free);
        tensors.clear();
        allocations.clear();
    }
}
