package org.axe4j.serve;

/** A request the service refuses: the status, a short kind for the error metrics, and a message naming the problem. */
final class HttpError extends Exception {
    private static final long serialVersionUID = 1L;
    final int status;
    final String kind;

    HttpError(int status, String kind, String message) {
        super(message, null, false, false);
        this.status = status;
        this.kind = kind;
    }
}
