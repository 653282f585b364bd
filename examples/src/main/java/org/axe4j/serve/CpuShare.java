package org.axe4j.serve;

import org.axe4j.tvm.CpuPool;
import org.axe4j.tvm.Tvm;

/**
 * Each worker's share of TVM's CPU pool. TVM keeps one pool per calling thread (thread-local), each as large as the
 * process's pool size T ({@code TVM_NUM_THREADS}, which {@link CpuPool} sets from the usable cores): W workers running
 * kernels at once would run W x T compute threads, whose pools spin for work while the others compute. So a thread
 * that runs a kernel sizes its own pool once, to {@code max(1, T / W)} threads ({@code runtime.config_threadpool}).
 */
final class CpuShare {
    /** {@code runtime.config_threadpool}'s first argument: TVM's default affinity mode (kBig). */
    private static final int DEFAULT_MODE = 1;

    private final int threadsEach;
    private final ThreadLocal<Boolean> sized = ThreadLocal.withInitial(() -> Boolean.FALSE);

    CpuShare(int poolThreads, int workers) {
        this.threadsEach = Math.max(1, poolThreads / Math.max(1, workers));
    }

    /** The share of {@code workers} workers in this process's pool. */
    static CpuShare forWorkers(int workers) {
        int pool = CpuPool.size().threads();
        return new CpuShare(pool > 0 ? pool : CpuPool.usableCores(), workers);
    }

    int threadsEach() {
        return threadsEach;
    }

    /** Sizes the calling thread's TVM pool, the first time this thread runs a kernel. */
    void enter() {
        if (!sized.get()) {
            Tvm.call("runtime.config_threadpool", DEFAULT_MODE, threadsEach);
            sized.set(Boolean.TRUE);
        }
    }
}
