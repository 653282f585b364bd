package org.axe4j.tvm;

/** A TVM error surfaced in Java: TVM's error kind (e.g. {@code ValueError}), message and backtrace. */
public class TvmException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final String kind;
    private final String tvmMessage;
    private final String backtrace;

    public TvmException(String kind, String message, String backtrace) {
        super(kind + ": " + message);
        this.kind = kind;
        this.tvmMessage = message;
        this.backtrace = backtrace == null ? "" : backtrace;
    }

    public String kind() {
        return kind;
    }

    /** The message without the kind prefix. */
    public String tvmMessage() {
        return tvmMessage;
    }

    public String backtrace() {
        return backtrace;
    }
}
