package org.axe4j.tvm;

/** TVM's native libraries could not be found or loaded; the message names every path involved. */
public final class TvmLoadException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public TvmLoadException(String message) {
        super(message);
    }

    public TvmLoadException(String message, Throwable cause) {
        super(message, cause);
    }
}
