package org.axe4j.cli;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * The lines of a request stream, each held in memory only up to a byte cap: a longer line is read to its
 * end and dropped, and reported as too long, so one huge line costs no more memory than the cap. Lines end
 * at LF, CR LF or CR (as {@link java.io.BufferedReader#readLine} reads them) and are decoded as strict UTF-8.
 */
final class RequestLines {
    /** One line: its text, or why there is none (too long: {@code bytes} is how many were read; not UTF-8). */
    record Line(String text, boolean tooLong, boolean malformed, long bytes) {}

    private final InputStream in;
    private final long cap;
    private final byte[] chunk = new byte[1 << 16];
    private int at;
    private int end;
    private boolean pendingLf;

    RequestLines(InputStream in, long cap) {
        this.in = in;
        this.cap = cap;
    }

    /** The next byte, or -1 at the end of the input. */
    private int read() throws IOException {
        if (at == end) {
            end = in.read(chunk, 0, chunk.length);
            at = 0;
            if (end <= 0) {
                end = 0;
                return -1;
            }
        }
        return chunk[at++] & 0xff;
    }

    /** The next line, or null at the end of the input. */
    Line next() throws IOException {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        long bytes = 0;
        int b = read();
        if (pendingLf && b == '\n') {
            b = read();
        }
        pendingLf = false;
        if (b < 0) {
            return null;
        }
        while (b >= 0 && b != '\n' && b != '\r') {
            if (bytes < cap) {
                buf.write(b);
            }
            bytes++;
            b = read();
        }
        pendingLf = b == '\r';
        if (bytes > cap) {
            return new Line(null, true, false, bytes);
        }
        try {
            String text = StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(buf.toByteArray())).toString();
            return new Line(text, false, false, bytes);
        } catch (CharacterCodingException e) {
            return new Line(null, false, true, bytes);
        }
    }
}
