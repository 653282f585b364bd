package org.axe4j.tvm.cuda;

import com.sun.jna.Library;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.FloatByReference;
import com.sun.jna.ptr.PointerByReference;
import java.nio.file.Path;

/**
 * cuBLAS ({@code libcublas.so.13}) for the one call the GEMM comparisons need, set up exactly like
 * the native harness {@code native/cublas_gemm_bench.cu}: row-major {@code D = A B^T} with A (M x K),
 * B (N x K) and D (M x N) is column-major {@code D^T = B A^T}, i.e. {@code cublasGemmEx(T, N, N, M,
 * K, B, ldb = K, A, lda = K, D, ldd = N)}, FP32 compute, the default algorithm, on this handle's
 * stream.
 */
public final class Cublas implements AutoCloseable {
    private static final int OP_N = 0;
    private static final int OP_T = 1;
    private static final int COMPUTE_32F = 68;
    private static final int GEMM_DEFAULT = -1;

    /** {@code cudaDataType} of the 16-bit element types. */
    public enum Element {
        FLOAT16(2), BFLOAT16(14);

        final int code;

        Element(int code) {
            this.code = code;
        }
    }

    interface Library13 extends Library {
        int cublasCreate_v2(PointerByReference handle);

        int cublasDestroy_v2(Pointer handle);

        int cublasSetStream_v2(Pointer handle, Pointer stream);

        int cublasGemmEx(Pointer handle, int transa, int transb, int m, int n, int k, FloatByReference alpha,
                         Pointer a, int aType, int lda, Pointer b, int bType, int ldb, FloatByReference beta,
                         Pointer c, int cType, int ldc, int computeType, int algo);

        String cublasGetStatusString(int status);
    }

    private final Library13 lib;
    private final Pointer handle;
    private final Path path;
    private final FloatByReference one = new FloatByReference(1f);
    private final FloatByReference zero = new FloatByReference(0f);

    private Cublas(Library13 lib, Pointer handle, Path path) {
        this.lib = lib;
        this.handle = handle;
        this.path = path;
    }

    /**
     * A cuBLAS handle whose calls go to {@code stream}.
     *
     * @throws CudaException naming the folders searched when there is no {@code libcublas.so.13}
     */
    public static Cublas create(Cuda cuda, CudaStream stream) {
        Path path = CudaLibraries.require("libcublas.so.13", "the cuBLAS comparison");
        Library13 lib = Native.load(path.toString(), Library13.class);
        PointerByReference out = new PointerByReference();
        int status = lib.cublasCreate_v2(out);
        if (status != 0) {
            throw new CudaException(status, "cublasCreate: " + lib.cublasGetStatusString(status));
        }
        Cublas cublas = new Cublas(lib, out.getValue(), path);
        cublas.check(lib.cublasSetStream_v2(out.getValue(), stream.handle() == 0 ? null
                : new Pointer(stream.handle())), "cublasSetStream");
        return cublas;
    }

    public Path path() {
        return path;
    }

    /** Queues row-major {@code D = A B^T} (device addresses) on the handle's stream. */
    public void gemmABt(long a, long b, long d, int m, int n, int k, Element element) {
        if (m < 1 || n < 1 || k < 1) {
            throw new IllegalArgumentException("Cublas.gemmABt: M, N, K (" + m + ", " + n + ", " + k + ") must be >= 1");
        }
        check(lib.cublasGemmEx(handle, OP_T, OP_N, n, m, k, one, new Pointer(b), element.code, k, new Pointer(a),
                element.code, k, zero, new Pointer(d), element.code, n, COMPUTE_32F, GEMM_DEFAULT), "cublasGemmEx");
    }

    private void check(int status, String call) {
        if (status != 0) {
            throw new CudaException(status, call + ": " + lib.cublasGetStatusString(status));
        }
    }

    @Override
    public void close() {
        lib.cublasDestroy_v2(handle);
    }
}
