package org.axe4j.serve;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;

/** A request body of Content-Length bytes: -1 after them; the connection closing before them is an EOFException. */
final class FixedLengthBody extends InputStream {
    private final SocketInput in;
    private final long length;
    private final Runnable beforeFirstRead;
    private long remaining;
    private boolean started;

    /** {@code beforeFirstRead} runs once, before the first byte is asked for (it sends 100 Continue). */
    FixedLengthBody(SocketInput in, long length, Runnable beforeFirstRead) {
        this.in = in;
        this.length = length;
        this.remaining = length;
        this.beforeFirstRead = beforeFirstRead;
    }

    @Override
    public int read() throws IOException {
        byte[] one = new byte[1];
        return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        if (remaining == 0) {
            return -1;
        }
        if (len == 0) {
            return 0;
        }
        if (!started) {
            started = true;
            try {
                beforeFirstRead.run();
            } catch (java.io.UncheckedIOException e) {
                throw e.getCause();
            }
        }
        int got = in.read(b, off, (int) Math.min(len, remaining));
        if (got < 0) {
            throw new EOFException("the connection closed after " + (length - remaining) + " of the body's " + length
                    + " bytes");
        }
        remaining -= got;
        return got;
    }

    @Override
    public int available() {
        return 0;
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
