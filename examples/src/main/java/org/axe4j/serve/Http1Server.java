package org.axe4j.serve;

import com.sun.net.httpserver.HttpHandler;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * The service's HTTP/1.1 server: an accept thread, and a thread per open connection (kept in a pool for the next
 * one) that reads each request and runs the handler on itself, so a request is never handed from thread to thread.
 * Keep-alive, pipelining, HTTP/1.0, {@code Expect: 100-continue}, Content-Length and chunked request bodies; heads are
 * bounded ({@link RequestHead}); a connection idle for {@code idleTimeoutMs} between requests is closed, and one whose
 * client stops sending for {@code readTimeoutMs} inside a request is answered 408 (head) or closed (body). Past
 * {@code maxConnections} a new connection is answered 503 and closed.
 */
final class Http1Server {
    private final ServerSocket listening;
    private final HttpHandler handler;
    private final Consumer<HttpError> refusals;
    private final int idleTimeoutMs;
    private final int readTimeoutMs;
    private final int maxConnections;
    private final Set<Http1Connection> open = ConcurrentHashMap.newKeySet();
    private final AtomicInteger connections = new AtomicInteger();
    private final ThreadPoolExecutor threads;
    private final Thread acceptor;
    private volatile boolean stopping;

    /**
     * Binds {@code address} (the port taken once this returns); {@link #start} begins serving. {@code refusals} hears
     * of each request answered by the server itself (a bad head), for the metrics.
     */
    Http1Server(InetSocketAddress address, HttpHandler handler, Consumer<HttpError> refusals, int idleTimeoutMs,
                int readTimeoutMs, int maxConnections) throws IOException {
        this.handler = handler;
        this.refusals = refusals;
        this.idleTimeoutMs = idleTimeoutMs;
        this.readTimeoutMs = readTimeoutMs;
        this.maxConnections = maxConnections;
        listening = new ServerSocket();
        listening.setReuseAddress(true);
        listening.bind(address, 256);
        AtomicInteger n = new AtomicInteger();
        threads = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 60, TimeUnit.SECONDS, new SynchronousQueue<>(), r -> {
            Thread t = new Thread(r, "axe-serve-connection-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        acceptor = new Thread(this::accept, "axe-serve-accept");
        acceptor.setDaemon(true);
    }

    void start() {
        acceptor.start();
    }

    int port() {
        return listening.getLocalPort();
    }

    private void accept() {
        while (!stopping) {
            Socket socket;
            try {
                socket = listening.accept();
            } catch (SocketException closed) {
                return;  // stop() closed the port
            } catch (IOException e) {
                continue;  // this one connection failed (e.g. reset before it was taken)
            }
            if (connections.incrementAndGet() > maxConnections) {
                connections.decrementAndGet();
                refuseBusy(socket);
                continue;
            }
            Http1Connection connection = new Http1Connection(this, socket);
            open.add(connection);
            if (stopping) {  // stop() may have closed the others between the check above and the add
                connection.close();
            }
            try {
                threads.execute(connection);
            } catch (java.util.concurrent.RejectedExecutionException stopped) {
                connection.close();
                closed(connection);
            }
        }
    }

    private void refuseBusy(Socket socket) {
        String body = "{\"error\": \"more than " + maxConnections + " open connections; retry later\", "
                + "\"kind\": \"connections\"}";
        try (socket) {
            socket.getOutputStream().write(("HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
                    + "Content-Length: " + body.length() + "\r\nRetry-After: 1\r\nConnection: close\r\n\r\n" + body)
                    .getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        } catch (IOException ignored) {
            // the client is gone already
        }
        refusals.accept(new HttpError(503, "connections", "too many open connections"));
    }

    /** Stops accepting and closes every connection (its thread ends on the closed socket). */
    void stop() {
        stopping = true;
        try {
            listening.close();
        } catch (IOException ignored) {
            // closed already
        }
        for (Http1Connection c : open) {
            c.close();
        }
        threads.shutdown();
        try {
            acceptor.join(5_000);
            threads.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    void closed(Http1Connection connection) {
        open.remove(connection);
        connections.decrementAndGet();
    }

    HttpHandler handler() {
        return handler;
    }

    void refused(HttpError e) {
        refusals.accept(e);
    }

    boolean stopping() {
        return stopping;
    }

    int idleTimeoutMs() {
        return idleTimeoutMs;
    }

    int readTimeoutMs() {
        return readTimeoutMs;
    }
}
