package org.axe4j.serve;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/**
 * A request body read from the connection: a single byte is a read of one, and {@code beforeFirstRead} (which sends
 * {@code 100 Continue} to a client that asked for it) runs once, when the first byte is asked for.
 */
abstract class RequestBody extends InputStream {
    private final Runnable beforeFirstRead;
    private boolean started;

    RequestBody(Runnable beforeFirstRead) {
        this.beforeFirstRead = beforeFirstRead;
    }

    @Override
    public final int read() throws IOException {
        byte[] one = new byte[1];
        return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int available() {
        return 0;
    }

    /** Runs {@code beforeFirstRead} the first time; true that time (the caller then reads what comes first). */
    final boolean start() throws IOException {
        if (started) {
            return false;
        }
        started = true;
        try {
            beforeFirstRead.run();
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
        return true;
    }
}
