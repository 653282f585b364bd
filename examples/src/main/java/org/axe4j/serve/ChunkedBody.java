package org.axe4j.serve;

import java.io.EOFException;
import java.io.IOException;

/**
 * A request body sent with {@code Transfer-Encoding: chunked} (RFC 9112 7.1): chunks of {@code HEX-SIZE[;ext]CRLF
 * data CRLF}, ended by a chunk of size 0 and trailer lines (read and dropped, as bounded as headers). A malformed
 * chunk is a {@link MalformedBody}.
 */
final class ChunkedBody extends RequestBody {
    private static final int MAX_SIZE_LINE = 1024;

    private final SocketInput in;
    private long chunkLeft;
    private boolean ended;

    ChunkedBody(SocketInput in, Runnable beforeFirstRead) {
        super(beforeFirstRead);
        this.in = in;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        if (ended) {
            return -1;
        }
        if (len == 0) {
            return 0;
        }
        if (start()) {
            chunkLeft = nextChunk(false);
        }
        if (chunkLeft == 0) {
            ended = true;
            return -1;
        }
        int got = in.read(b, off, (int) Math.min(len, chunkLeft));
        if (got < 0) {
            throw new EOFException("the connection closed inside a chunk of the body");
        }
        chunkLeft -= got;
        if (chunkLeft == 0) {
            chunkLeft = nextChunk(true);
            if (chunkLeft == 0) {
                ended = true;
            }
        }
        return got;
    }

    /** Reads the next chunk's size line (after the CRLF ending the chunk before); at size 0, the trailers too. */
    private long nextChunk(boolean afterData) throws IOException {
        if (afterData) {
            String end;
            try {
                end = in.line(2);
            } catch (SocketInput.LineTooLong e) {
                end = "x";
            }
            if (end == null) {
                throw new EOFException("the connection closed inside the body's chunks");
            }
            if (!end.isEmpty()) {
                throw new MalformedBody("a chunk of the body is longer than its size says");
            }
        }
        String line;
        try {
            line = in.line(MAX_SIZE_LINE);
        } catch (SocketInput.LineTooLong e) {
            throw new MalformedBody("a chunk size line is longer than " + MAX_SIZE_LINE + " bytes");
        }
        if (line == null) {
            throw new EOFException("the connection closed inside the body's chunks");
        }
        int semicolon = line.indexOf(';');
        String hex = (semicolon >= 0 ? line.substring(0, semicolon) : line).strip();
        if (!hex.matches("[0-9a-fA-F]{1,15}")) {
            throw new MalformedBody("the chunk size '" + Tensors.clip(hex) + "' is not a hexadecimal number");
        }
        long size = Long.parseLong(hex, 16);
        if (size == 0) {
            int bytes = 0;
            for (String trailer; !(trailer = line(RequestHead.MAX_HEADER_BYTES - bytes)).isEmpty(); ) {
                bytes += trailer.length() + 2;
            }
        }
        return size;
    }

    private String line(int max) throws IOException {
        try {
            String trailer = max > 0 ? in.line(max) : null;
            if (trailer == null) {
                throw new MalformedBody("the body's trailers are cut off or larger than "
                        + RequestHead.MAX_HEADER_BYTES + " bytes");
            }
            return trailer;
        } catch (SocketInput.LineTooLong e) {
            throw new MalformedBody("the body's trailers are larger than " + RequestHead.MAX_HEADER_BYTES + " bytes");
        }
    }

    /** Whether the last chunk and the trailers were read. */
    boolean finished() {
        return ended;
    }

    /** A body whose chunked framing is broken: answered 400, then the connection closes (its framing is lost). */
    static final class MalformedBody extends IOException {
        private static final long serialVersionUID = 1L;

        MalformedBody(String message) {
            super(message, null);
        }
    }
}
