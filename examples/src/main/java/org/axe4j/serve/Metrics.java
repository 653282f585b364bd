package org.axe4j.serve;

import java.io.IOException;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntSupplier;

/**
 * The service's counters, in Prometheus' text format ({@link #render}). Labels take only names the service knows
 * (functions of the manifest, status codes, error kinds), never a client's text, so their number stays bounded.
 */
final class Metrics {
    /** Upper bounds of the latency histogram's buckets, in seconds. */
    static final double[] BUCKETS = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10};

    private final ConcurrentHashMap<String, LongAdder> requests = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, LongAdder> errors = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, LongAdder> kernelNanos = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, LongAdder> kernelCalls = new ConcurrentHashMap<>();
    private final AtomicLongArray latencyBuckets = new AtomicLongArray(BUCKETS.length + 1);
    private final LongAdder latencyNanos = new LongAdder();
    private final LongAdder reloadsOk = new LongAdder();
    private final LongAdder reloadsFailed = new LongAdder();

    void request(String function, int status, long nanos) {
        requests.computeIfAbsent("function=\"" + function + "\",code=\"" + status + "\"", k -> new LongAdder())
                .increment();
        double seconds = nanos / 1e9;
        int b = 0;
        while (b < BUCKETS.length && seconds > BUCKETS[b]) {
            b++;
        }
        latencyBuckets.incrementAndGet(b);
        latencyNanos.add(nanos);
    }

    void error(String kind) {
        errors.computeIfAbsent(kind, k -> new LongAdder()).increment();
    }

    void kernel(String function, long nanos) {
        kernelNanos.computeIfAbsent(function, k -> new LongAdder()).add(nanos);
        kernelCalls.computeIfAbsent(function, k -> new LongAdder()).increment();
    }

    void reload(boolean ok) {
        (ok ? reloadsOk : reloadsFailed).increment();
    }

    long errors(String kind) {
        LongAdder a = errors.get(kind);
        return a == null ? 0 : a.sum();
    }

    String render(IntSupplier queued, IntSupplier inFlight, int generation, int runners) {
        StringBuilder out = new StringBuilder(4096);
        counter(out, "axe_requests_total", "Requests answered, by function and HTTP status.", requests);
        Map<String, LongAdder> byKind = new TreeMap<>();
        errors.forEach((k, v) -> byKind.put("kind=\"" + k + "\"", v));
        counter(out, "axe_errors_total", "Requests refused or failed, by kind.", byKind);
        out.append("# HELP axe_request_seconds Time from admission to the answer written.\n");
        out.append("# TYPE axe_request_seconds histogram\n");
        long cumulative = 0;
        for (int b = 0; b <= BUCKETS.length; b++) {
            cumulative += latencyBuckets.get(b);
            out.append("axe_request_seconds_bucket{le=\"").append(b < BUCKETS.length ? Double.toString(BUCKETS[b])
                    : "+Inf").append("\"} ").append(cumulative).append('\n');
        }
        out.append("axe_request_seconds_sum ").append(latencyNanos.sum() / 1e9).append('\n');
        out.append("axe_request_seconds_count ").append(cumulative).append('\n');
        Map<String, LongAdder> calls = new TreeMap<>();
        kernelCalls.forEach((k, v) -> calls.put("function=\"" + k + "\"", v));
        counter(out, "axe_kernel_calls_total", "Kernel runs, by function.", calls);
        out.append("# HELP axe_kernel_seconds_total Time in the kernel (with its copies on a device), by function.\n");
        out.append("# TYPE axe_kernel_seconds_total counter\n");
        new TreeMap<>(kernelNanos).forEach((k, v) -> out.append("axe_kernel_seconds_total{function=\"").append(k)
                .append("\"} ").append(v.sum() / 1e9).append('\n'));
        gauge(out, "axe_queue_depth", "Requests admitted and waiting for a worker.", queued.getAsInt());
        gauge(out, "axe_in_flight", "Requests admitted and not yet answered (queued or running).", inFlight.getAsInt());
        gauge(out, "axe_module_generation", "Version of the module being served (1 at start, +1 per reload).",
                generation);
        out.append("# HELP axe_reloads_total Module reloads, by result.\n# TYPE axe_reloads_total counter\n");
        out.append("axe_reloads_total{result=\"ok\"} ").append(reloadsOk.sum()).append('\n');
        out.append("axe_reloads_total{result=\"failed\"} ").append(reloadsFailed.sum()).append('\n');
        gauge(out, "axe_runners", "Tensor sets the served version holds (at most one per worker and function).",
                runners);
        Runtime rt = Runtime.getRuntime();
        gauge(out, "jvm_heap_used_bytes", "Heap in use.", ManagementFactory.getMemoryMXBean().getHeapMemoryUsage()
                .getUsed());
        gauge(out, "jvm_heap_committed_bytes", "Heap committed.", rt.totalMemory());
        gauge(out, "process_resident_memory_bytes", "Resident set size (VmRSS).", residentBytes());
        for (BufferPoolMXBean pool : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
            if (pool.getName().equals("direct")) {  // the workspaces' tensors and the JDK's socket buffers
                gauge(out, "jvm_direct_buffers", "Direct byte buffers alive.", pool.getCount());
                gauge(out, "jvm_direct_buffer_bytes", "Memory of the direct byte buffers alive.", pool.getMemoryUsed());
            }
        }
        return out.toString();
    }

    private static void counter(StringBuilder out, String name, String help, Map<String, LongAdder> series) {
        out.append("# HELP ").append(name).append(' ').append(help).append('\n');
        out.append("# TYPE ").append(name).append(" counter\n");
        new TreeMap<>(series).forEach((labels, v) -> out.append(name).append('{').append(labels).append("} ")
                .append(v.sum()).append('\n'));
    }

    private static void gauge(StringBuilder out, String name, String help, long value) {
        out.append("# HELP ").append(name).append(' ').append(help).append('\n');
        out.append("# TYPE ").append(name).append(" gauge\n").append(name).append(' ').append(value).append('\n');
    }

    /** VmRSS of this process from /proc (0 where there is none). */
    static long residentBytes() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmRSS:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
                }
            }
        } catch (IOException | NumberFormatException ignored) {
            // not Linux: no resident size to report
        }
        return 0;
    }
}
