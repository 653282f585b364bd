package org.axe4j.tvm.cuda;

/**
 * A CUDA call failed, or CUDA support cannot be had in this process. The message names the call or
 * the module, the arch and what is missing; {@link #code()} is the {@code cudaError_t} (0 when the
 * failure is not a CUDA return code, such as a missing driver).
 */
public final class CudaException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final int code;

    public CudaException(String message) {
        this(0, message);
    }

    public CudaException(int code, String message) {
        super(message);
        this.code = code;
    }

    public CudaException(String message, Throwable cause) {
        super(message, cause);
        this.code = 0;
    }

    public int code() {
        return code;
    }
}
