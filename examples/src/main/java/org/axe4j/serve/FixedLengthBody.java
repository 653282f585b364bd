package org.axe4j.serve;

import java.io.EOFException;
import java.io.IOException;

/** A request body of Content-Length bytes: -1 after them; the connection closing before them is an EOFException. */
final class FixedLengthBody extends RequestBody {
    private final SocketInput in;
    private final long length;
    private long remaining;

    /** {@code beforeFirstRead} runs once, before the first byte is asked for (it sends 100 Continue). */
    FixedLengthBody(SocketInput in, long length, Runnable beforeFirstRead) {
        super(beforeFirstRead);
        this.in = in;
        this.length = length;
        this.remaining = length;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        if (remaining == 0) {
            return -1;
        }
        if (len == 0) {
            return 0;
        }
        start();
        int got = in.read(b, off, (int) Math.min(len, remaining));
        if (got < 0) {
            throw new EOFException("the connection closed after " + (length - remaining) + " of the body's " + length
                    + " bytes");
        }
        remaining -= got;
        return got;
    }

    /** Whether every byte of the body was read. */
    boolean finished() {
        return remaining == 0;
    }

    /** The bytes not yet read. */
    long remaining() {
        return remaining;
    }
}
