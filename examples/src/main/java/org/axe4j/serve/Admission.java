package org.axe4j.serve;

import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The HTTP server's executor: a request is admitted while fewer than {@code threads + queue} are in flight and runs
 * at once on a thread of its own (reused), where a request for work then waits for one of the {@code threads} kernel
 * workers ({@link #workers}, fair: the wait is the queue). Any more goes to a small pool that answers it at once
 * ({@link #admitted()} is false there: 429 for work; health, readiness and metrics are still answered). So health
 * checks never wait behind kernels, and a slow client holds a worker only while its body is read into one.
 */
final class Admission implements Executor {
    private static final ThreadLocal<Boolean> ADMITTED = ThreadLocal.withInitial(() -> false);
    private static final ThreadLocal<Long> ARRIVED = ThreadLocal.withInitial(System::nanoTime);

    final int threads;
    final int capacity;
    /** Permits to run a kernel: one per worker thread the service was given. */
    final Semaphore workers;
    private final ExecutorService requests;
    private final ExecutorService overflow;
    private final AtomicInteger inFlight = new AtomicInteger();

    Admission(int threads, int queue) {
        this.threads = threads;
        this.capacity = threads + queue;
        workers = new Semaphore(threads, true);
        requests = Executors.newCachedThreadPool(named("axe-serve-request"));
        overflow = Executors.newFixedThreadPool(1, named("axe-serve-overflow"));
    }

    private static java.util.concurrent.ThreadFactory named(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    @Override
    public void execute(Runnable exchange) {
        long arrived = System.nanoTime();
        if (inFlight.incrementAndGet() <= capacity) {
            requests.execute(() -> {
                ADMITTED.set(true);
                ARRIVED.set(arrived);
                try {
                    exchange.run();
                } finally {
                    inFlight.decrementAndGet();
                }
            });
        } else {
            inFlight.decrementAndGet();
            overflow.execute(() -> {
                ADMITTED.set(false);
                ARRIVED.set(arrived);
                exchange.run();
            });
        }
    }

    /** Whether the request on this thread was admitted (false: the queue was full). */
    static boolean admitted() {
        return ADMITTED.get();
    }

    /** When the request on this thread reached the executor ({@link System#nanoTime}). */
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

    void shutdown() throws InterruptedException {
        requests.shutdown();
        overflow.shutdown();
        requests.awaitTermination(5, TimeUnit.SECONDS);
        overflow.awaitTermination(5, TimeUnit.SECONDS);
    }
}
