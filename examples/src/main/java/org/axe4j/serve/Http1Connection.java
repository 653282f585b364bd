package org.axe4j.serve;

import com.google.gson.JsonObject;
import com.sun.net.httpserver.HttpHandler;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;

/**
 * One client connection, served on one thread from its first request to its close: read a request's head, run the
 * handler on this thread (it reads the body and writes the answer straight from and to the socket), end the
 * exchange, and read the next request (pipelined ones are already buffered). A head the server cannot take is
 * answered here (400, 408, 414, 431, 501, 505) and the connection closed.
 */
final class Http1Connection implements Runnable {
    /** What a read takes from the socket at once (larger body reads go straight into the handler's array). */
    private static final int INPUT_BUFFER = 16 * 1024;
    /** An answer's head and first bytes go out in one write; 64 KiB answers in 2-3. */
    private static final int OUTPUT_BUFFER = 32 * 1024;

    private final Http1Server server;
    private final Socket socket;

    Http1Connection(Http1Server server, Socket socket) {
        this.server = server;
        this.socket = socket;
    }

    @Override
    public void run() {
        try (socket) {
            socket.setTcpNoDelay(true);  // an answer is written whole, then flushed: no need to wait for ACKs
            SocketInput in = new SocketInput(socket.getInputStream(), INPUT_BUFFER);
            OutputStream out = new BufferedOutputStream(socket.getOutputStream(), OUTPUT_BUFFER);
            InetSocketAddress local = (InetSocketAddress) socket.getLocalSocketAddress();
            InetSocketAddress remote = (InetSocketAddress) socket.getRemoteSocketAddress();
            HttpHandler handler = server.handler();
            while (true) {
                socket.setSoTimeout(server.idleTimeoutMs());
                if (!in.buffered() && !awaitRequest(in)) {
                    return;
                }
                socket.setSoTimeout(server.readTimeoutMs());
                RequestHead head;
                try {
                    head = RequestHead.read(in);
                } catch (HttpError e) {
                    refuse(out, e);
                    return;
                } catch (SocketTimeoutException e) {
                    refuse(out, new HttpError(408, "bad_request", "the request's head did not arrive within "
                            + server.readTimeoutMs() + " ms"));
                    return;
                }
                if (head == null) {
                    return;
                }
                Exchange exchange = new Exchange(head, in, out, local, remote, !server.stopping());
                try {
                    handler.handle(exchange);
                } catch (ChunkedBody.MalformedBody e) {
                    if (exchange.getResponseCode() < 0) {
                        refuse(out, new HttpError(400, "bad_request", e.getMessage()));
                    }
                    return;
                }
                if (!exchange.finish()) {
                    lingeringClose(in);
                    return;
                }
            }
        } catch (IOException | RuntimeException e) {
            // the client went away, timed out, or broke the protocol mid-body: the connection ends here
        } finally {
            server.closed(this);
        }
    }

    /** Waits for the first byte of a request (or the client's close, or the idle timeout). */
    private static boolean awaitRequest(SocketInput in) throws IOException {
        try {
            return in.await();
        } catch (SocketTimeoutException idle) {
            return false;
        }
    }

    /** Answers a request the server refuses before any handler saw it, then closes the connection. */
    private void refuse(OutputStream out, HttpError e) throws IOException {
        server.refused(e);
        JsonObject error = new JsonObject();
        error.addProperty("error", e.getMessage());
        error.addProperty("kind", e.kind);
        byte[] body = error.toString().getBytes(StandardCharsets.UTF_8);
        out.write(("HTTP/1.1 " + e.status + " " + StatusText.of(e.status) + "\r\nDate: " + HttpDate.now()
                + "\r\nContent-Type: application/json\r\nContent-Length: " + body.length + "\r\nConnection: close\r\n\r\n")
                .getBytes(StandardCharsets.ISO_8859_1));
        out.write(body);
        out.flush();
        socket.shutdownOutput();
        drainBriefly(socket.getInputStream());
    }

    /**
     * Closes after an answer whose request was not read to its end: the sending side first, then what the client
     * still sends is read for a moment, so that the close does not reset the connection before the answer is read.
     */
    private void lingeringClose(SocketInput in) throws IOException {
        socket.shutdownOutput();
        drainBriefly(socket.getInputStream());
    }

    private void drainBriefly(InputStream in) throws IOException {
        socket.setSoTimeout(200);
        byte[] skip = new byte[8192];
        long left = Exchange.DRAIN_LIMIT;
        try {
            for (int got; left > 0 && (got = in.read(skip)) >= 0; ) {
                left -= got;
            }
        } catch (SocketTimeoutException | java.net.SocketException done) {
            // the client is reading its answer or gone
        }
    }

    void close() {
        try {
            socket.close();
        } catch (IOException ignored) {
            // already closed
        }
    }
}
