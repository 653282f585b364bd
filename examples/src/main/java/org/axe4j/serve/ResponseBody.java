package org.axe4j.serve;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/**
 * An answer's body as the head announced it: exactly Content-Length bytes, chunks (HTTP/1.1, length unknown), bytes
 * until the connection closes (HTTP/1.0, length unknown), or none (HEAD, 204, 304: what is written is dropped). {@link #close} ends it; whether
 * it ended as announced decides whether the connection can carry another request.
 */
final class ResponseBody extends OutputStream {
    enum Framing { FIXED, CHUNKED, UNTIL_CLOSE, NONE }

    private static final byte[] CRLF = {'\r', '\n'};
    private static final byte[] LAST_CHUNK = "0\r\n\r\n".getBytes(StandardCharsets.US_ASCII);

    private final OutputStream out;
    private final Framing framing;
    private final long length;
    private long written;
    private boolean closed;

    ResponseBody(OutputStream out, Framing framing, long length) {
        this.out = out;
        this.framing = framing;
        this.length = length;
    }

    @Override
    public void write(int b) throws IOException {
        write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
        if (framing == Framing.NONE) {
            return;  // HEAD, 204, 304: whatever the handler writes is not sent (RFC 9110 9.3.2)
        }
        if (closed) {
            throw new IOException("the answer's body is already closed");
        }
        if (len == 0) {
            return;
        }
        switch (framing) {
            case FIXED -> {
                if (written + len > length) {
                    throw new IOException("the answer's body is longer than its Content-Length " + length);
                }
                out.write(b, off, len);
            }
            case CHUNKED -> {
                out.write((Integer.toHexString(len) + "\r\n").getBytes(StandardCharsets.US_ASCII));
                out.write(b, off, len);
                out.write(CRLF);
            }
            case UNTIL_CLOSE -> out.write(b, off, len);
            default -> throw new IllegalStateException(framing.toString());
        }
        written += len;
    }

    @Override
    public void flush() throws IOException {
        out.flush();
    }

    /** Ends the body and sends what is buffered; an IOException if it is shorter than its Content-Length. */
    @Override
    public void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        if (framing == Framing.CHUNKED) {
            out.write(LAST_CHUNK);
        }
        out.flush();
        if (framing == Framing.FIXED && written != length) {
            throw new IOException("the answer's body ended after " + written + " of its Content-Length " + length
                    + " bytes");
        }
    }

    /** Whether the body ended as the head announced, so that the connection can go on. */
    boolean complete() {
        return closed && (framing != Framing.FIXED || written == length) && framing != Framing.UNTIL_CLOSE;
    }
}
