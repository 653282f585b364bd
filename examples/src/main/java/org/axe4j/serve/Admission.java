package org.axe4j.serve;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import java.io.IOException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Admission of requests, on the thread that reads them: a request is admitted while fewer than {@code threads + queue}
 * are in flight, where a request for work then waits for one of the {@code threads} kernel workers ({@link #workers},
 * fair: the wait is the queue). Any more is still handled, with {@link #admitted()} false (429 for work; health,
 * readiness and metrics are still answered). So health checks never wait behind kernels, and a slow client holds a
 * worker only while its body is read into one.
 */
final class Admission {
    private static final ThreadLocal<Boolean> ADMITTED = ThreadLocal.withInitial(() -> false);
    private static final ThreadLocal<Long> ARRIVED = ThreadLocal.withInitial(System::nanoTime);

    final int threads;
    final int capacity;
    /** Permits to run a kernel: one per worker thread the service was given. */
    final Semaphore workers;
    private final AtomicInteger inFlight = new AtomicInteger();

    Admission(int threads, int queue) {
        this.threads = threads;
        this.capacity = threads + queue;
        workers = new Semaphore(threads, true);
    }

    /** Handles one request on this thread, admitted or not (then counted as in flight until it is answered). */
    void handle(HttpExchange exchange, HttpHandler handler) throws IOException {
        ARRIVED.set(System.nanoTime());
        if (inFlight.incrementAndGet() <= capacity) {
            ADMITTED.set(true);
            try {
                handler.handle(exchange);
            } finally {
                inFlight.decrementAndGet();
            }
        } else {
            inFlight.decrementAndGet();
            ADMITTED.set(false);
            handler.handle(exchange);
        }
    }

    /** Whether the request on this thread was admitted (false: the queue was full). */
    static boolean admitted() {
        return ADMITTED.get();
    }

    /** When the request on this thread was read ({@link System#nanoTime}, after its head). */
    static long arrived() {
        return ARRIVED.get();
    }

    int inFlight() {
        return inFlight.get();
    }

    /** Requests waiting for a worker. */
    int queued() {
        return workers.getQueueLength();
    }
}
