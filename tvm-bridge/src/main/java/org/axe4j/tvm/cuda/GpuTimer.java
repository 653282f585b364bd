package org.axe4j.tvm.cuda;

import java.util.ArrayList;
import java.util.List;
import org.axe4j.tvm.Timing;

/**
 * Times GPU work with CUDA events on one stream: for each of {@code runs} launches, optionally
 * overwrite an L2 flush buffer ({@code cudaMemsetAsync}, so the launch starts with a cold L2), record
 * a start event, launch, record a stop event, and take the elapsed time. Warm-up launches come first
 * and are not timed. This is how the GPU bundle's Python runner and the cuBLAS harness time, so the
 * three are comparable.
 */
public final class GpuTimer implements AutoCloseable {
    /** Several times the L2 of an H100/H200 (50 MiB) or B200. */
    public static final long DEFAULT_FLUSH_BYTES = 512L << 20;

    private final CudaRuntime runtime;
    private final CudaStream stream;
    private final long flushBytes;
    private final long flush;
    private final long start;
    private final long stop;

    public GpuTimer(Cuda cuda, CudaStream stream, long flushBytes) {
        if (flushBytes < 0) {
            throw new IllegalArgumentException("GpuTimer: flushBytes (" + flushBytes + ") must be >= 0");
        }
        this.runtime = cuda.runtime();
        this.stream = stream;
        this.flushBytes = flushBytes;
        this.flush = flushBytes > 0 ? runtime.malloc(flushBytes) : 0L;
        this.start = runtime.eventCreate();
        this.stop = runtime.eventCreate();
    }

    /**
     * Seconds per launch of {@code launch} for each of {@code runs} timed launches (median, min and
     * max in {@link Timing}); {@code what} names the work in errors.
     */
    public Timing time(String what, Runnable launch, int warmup, int runs) {
        if (runs < 1 || warmup < 0) {
            throw new IllegalArgumentException("GpuTimer.time(" + what + "): runs (" + runs + ") must be >= 1 and"
                    + " warmup (" + warmup + ") >= 0");
        }
        try (CudaStream.Active on = stream.activate()) {
            for (int i = 0; i < warmup; i++) {
                launch.run();
            }
            stream.synchronize(what + " (warm-up)");
            List<Double> seconds = new ArrayList<>(runs);
            for (int r = 0; r < runs; r++) {
                if (flush != 0) {
                    runtime.memsetAsync(flush, r & 0xff, flushBytes, stream.handle());
                }
                runtime.eventRecord(start, stream.handle());
                launch.run();
                runtime.eventRecord(stop, stream.handle());
                seconds.add(runtime.elapsedMs(start, stop, what) * 1e-3);
            }
            return new Timing(seconds);
        }
    }

    public long flushBytes() {
        return flushBytes;
    }

    @Override
    public void close() {
        runtime.eventDestroy(start);
        runtime.eventDestroy(stop);
        if (flush != 0) {
            runtime.free(flush);
        }
    }
}
