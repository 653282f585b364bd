package org.axe4j.serve;

import java.io.IOException;
import java.io.InputStream;

/**
 * A connection's bytes as they arrive, buffered and unsynchronized (one thread reads a connection): the request heads
 * are read line by line from the buffer, bodies through {@link #read}, and what a client sent ahead (a pipelined
 * request) stays buffered for the next request.
 */
final class SocketInput {
    private final InputStream in;
    private final byte[] buffer;
    private int position;
    private int limit;

    SocketInput(InputStream in, int bufferBytes) {
        this.in = in;
        this.buffer = new byte[bufferBytes];
    }

    /** Whether bytes are buffered (a pipelined request, or the start of a body). */
    boolean buffered() {
        return position < limit;
    }

    /** Waits until a byte is buffered; false if the stream ended first. */
    boolean await() throws IOException {
        return position < limit || fill() > 0;
    }

    /** Up to {@code length} bytes (at least one unless the stream ended: -1); large reads bypass the buffer. */
    int read(byte[] target, int offset, int length) throws IOException {
        if (length == 0) {
            return 0;
        }
        if (position == limit) {
            if (length >= buffer.length) {
                return in.read(target, offset, length);
            }
            if (fill() <= 0) {
                return -1;
            }
        }
        int n = Math.min(length, limit - position);
        System.arraycopy(buffer, position, target, offset, n);
        position += n;
        return n;
    }

    /**
     * One line ending in LF (a CR before it dropped), as ISO-8859-1 text, at most {@code max} bytes, or null if the
     * stream ended before any byte of it.
     *
     * @throws LineTooLong past {@code max} bytes
     * @throws java.io.EOFException if the stream ended inside the line
     */
    String line(int max) throws IOException {
        StringBuilder text = null;
        int taken = 0;
        while (true) {
            if (position == limit && fill() <= 0) {
                if (taken == 0) {
                    return null;
                }
                throw new java.io.EOFException("the connection closed inside a line of the request's head");
            }
            int start = position;
            while (position < limit && buffer[position] != '\n') {
                position++;
            }
            int n = position - start;
            taken += n;
            if (taken > max) {
                throw new LineTooLong(max);
            }
            boolean ended = position < limit;
            if (ended && text == null) {  // the usual case: the whole line was buffered
                position++;
                return latin1(start, n);
            }
            if (text == null) {
                text = new StringBuilder(Math.max(64, 2 * n));
            }
            text.append(latin1(start, n));
            if (ended) {
                position++;
                int end = text.length();
                return end > 0 && text.charAt(end - 1) == '\r' ? text.substring(0, end - 1) : text.toString();
            }
        }
    }

    private String latin1(int start, int n) {
        int end = start + n;
        if (n > 0 && buffer[end - 1] == '\r' && end < limit && buffer[end] == '\n') {
            n--;
        }
        @SuppressWarnings("deprecation")  // the ISO-8859-1 copy without a decoder
        String s = new String(buffer, 0, start, n);
        return s;
    }

    private int fill() throws IOException {
        position = 0;
        limit = 0;
        int got = in.read(buffer, 0, buffer.length);
        if (got > 0) {
            limit = got;
        }
        return got;
    }

    /** A line of the request's head longer than the limit. */
    static final class LineTooLong extends IOException {
        private static final long serialVersionUID = 1L;
        final int max;

        LineTooLong(int max) {
            super("a line of the request's head is longer than " + max + " bytes", null);
            this.max = max;
        }
    }
}
