package org.axe4j.tvm.cuda;

import com.sun.jna.Library;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.FloatByReference;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.PointerByReference;
import java.nio.file.Path;

/**
 * The CUDA runtime calls the bridge makes itself ({@code libcudart.so.13}): device and pinned host
 * memory, asynchronous copies, streams and events. Each call's {@code cudaError_t} goes through
 * {@link #check}, which names the call and CUDA's own message.
 */
public final class CudaRuntime {
    /** {@code cudaMemcpyKind}. */
    public static final int HOST_TO_DEVICE = 1;
    public static final int DEVICE_TO_HOST = 2;
    public static final int DEVICE_TO_DEVICE = 3;

    interface Library13 extends Library {
        int cudaSetDevice(int device);

        int cudaGetDeviceCount(IntByReference count);

        int cudaMalloc(PointerByReference pointer, long bytes);

        int cudaFree(Pointer pointer);

        int cudaHostAlloc(PointerByReference pointer, long bytes, int flags);

        int cudaFreeHost(Pointer pointer);

        int cudaMemcpy(Pointer dst, Pointer src, long bytes, int kind);

        int cudaMemcpyAsync(Pointer dst, Pointer src, long bytes, int kind, Pointer stream);

        int cudaMemsetAsync(Pointer pointer, int value, long bytes, Pointer stream);

        int cudaStreamCreateWithFlags(PointerByReference stream, int flags);

        int cudaStreamDestroy(Pointer stream);

        int cudaStreamSynchronize(Pointer stream);

        int cudaDeviceSynchronize();

        int cudaEventCreate(PointerByReference event);

        int cudaEventDestroy(Pointer event);

        int cudaEventRecord(Pointer event, Pointer stream);

        int cudaEventSynchronize(Pointer event);

        int cudaEventElapsedTime(FloatByReference milliseconds, Pointer start, Pointer end);

        int cudaGetLastError();

        String cudaGetErrorString(int error);
    }

    private final Library13 lib;
    private final Path path;

    CudaRuntime(Path path) {
        this.path = path;
        this.lib = Native.load(path.toString(), Library13.class);
    }

    /** The library file this runtime came from. */
    public Path path() {
        return path;
    }

    Library13 lib() {
        return lib;
    }

    /** Throws a {@link CudaException} naming {@code call} when {@code code} is not {@code cudaSuccess}. */
    public void check(int code, String call) {
        if (code != 0) {
            throw new CudaException(code, call + ": " + lib.cudaGetErrorString(code) + " (cudaError " + code + ")");
        }
    }

    public void setDevice(int ordinal) {
        check(lib.cudaSetDevice(ordinal), "cudaSetDevice(" + ordinal + ")");
    }

    public long malloc(long bytes) {
        PointerByReference out = new PointerByReference();
        check(lib.cudaMalloc(out, Math.max(1, bytes)), "cudaMalloc(" + bytes + " bytes)");
        return Pointer.nativeValue(out.getValue());
    }

    public void free(long address) {
        check(lib.cudaFree(new Pointer(address)), "cudaFree");
    }

    /** Page-locked host memory (portable: usable from every context), for fast asynchronous copies. */
    public long hostAlloc(long bytes) {
        PointerByReference out = new PointerByReference();
        check(lib.cudaHostAlloc(out, Math.max(1, bytes), 1), "cudaHostAlloc(" + bytes + " bytes)");
        return Pointer.nativeValue(out.getValue());
    }

    public void freeHost(long address) {
        check(lib.cudaFreeHost(new Pointer(address)), "cudaFreeHost");
    }

    public void memcpy(long dst, long src, long bytes, int kind) {
        check(lib.cudaMemcpy(new Pointer(dst), new Pointer(src), bytes, kind), "cudaMemcpy(" + bytes + " bytes)");
    }

    public void memcpyAsync(long dst, long src, long bytes, int kind, long stream) {
        check(lib.cudaMemcpyAsync(new Pointer(dst), new Pointer(src), bytes, kind, pointer(stream)),
                "cudaMemcpyAsync(" + bytes + " bytes)");
    }

    public void memsetAsync(long address, int value, long bytes, long stream) {
        check(lib.cudaMemsetAsync(new Pointer(address), value, bytes, pointer(stream)),
                "cudaMemsetAsync(" + bytes + " bytes)");
    }

    /** A non-blocking stream (it does not synchronise with the legacy default stream). */
    public long streamCreate() {
        PointerByReference out = new PointerByReference();
        check(lib.cudaStreamCreateWithFlags(out, 1), "cudaStreamCreateWithFlags");
        return Pointer.nativeValue(out.getValue());
    }

    public void streamDestroy(long stream) {
        check(lib.cudaStreamDestroy(pointer(stream)), "cudaStreamDestroy");
    }

    public void streamSynchronize(long stream, String after) {
        check(lib.cudaStreamSynchronize(pointer(stream)), "cudaStreamSynchronize after " + after);
    }

    public void deviceSynchronize(String after) {
        check(lib.cudaDeviceSynchronize(), "cudaDeviceSynchronize after " + after);
    }

    public long eventCreate() {
        PointerByReference out = new PointerByReference();
        check(lib.cudaEventCreate(out), "cudaEventCreate");
        return Pointer.nativeValue(out.getValue());
    }

    public void eventDestroy(long event) {
        check(lib.cudaEventDestroy(pointer(event)), "cudaEventDestroy");
    }

    public void eventRecord(long event, long stream) {
        check(lib.cudaEventRecord(pointer(event), pointer(stream)), "cudaEventRecord");
    }

    /** Milliseconds between two recorded events, after waiting for {@code end}. */
    public float elapsedMs(long start, long end, String what) {
        check(lib.cudaEventSynchronize(pointer(end)), "cudaEventSynchronize after " + what);
        FloatByReference ms = new FloatByReference();
        check(lib.cudaEventElapsedTime(ms, pointer(start), pointer(end)), "cudaEventElapsedTime");
        return ms.getValue();
    }

    /** The sticky error of the last launch, if any. */
    public void checkLastError(String after) {
        check(lib.cudaGetLastError(), "kernel launch " + after);
    }

    private static Pointer pointer(long address) {
        return address == 0 ? null : new Pointer(address);
    }
}
