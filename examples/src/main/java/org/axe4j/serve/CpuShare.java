package org.axe4j.serve;

import java.util.List;
import java.util.Set;
import org.axe4j.tvm.CpuPool;
import org.axe4j.tvm.Tvm;

/**
 * Each worker's share of TVM's CPU pool. TVM keeps one pool per calling thread (thread-local), each as large as the
 * process's pool size T ({@code TVM_NUM_THREADS}, which {@link CpuPool} sets from the usable cores): W workers running
 * kernels at once would run W x T compute threads, whose pools spin for work while the others compute. So a thread
 * that runs a kernel sizes its own pool once, to {@code max(1, T / W)} threads ({@code runtime.config_threadpool}).
 *
 * <p>It also lets the pool's threads run on every CPU of the process's mask (TVM's mode -3, "threads share all
 * cores"). TVM's default (mode 1) pins pool thread i to CPU i: in a server, where connection and client threads
 * share the cores with the kernel, a pinned thread waits for its one CPU while the calling thread spins for its
 * part, and a request's kernel time grew from tens of microseconds to a scheduler time slice (gemm_128 through
 * {@code axe serve} at 2 threads: rounds down to 0.01-0.06 of ORT's rate, whose threads are not pinned).
 */
final class CpuShare {
    /** {@code runtime.config_threadpool}'s first argument: kSpecifyThreadShareAllCore (every thread, every CPU). */
    private static final int SHARE_ALL_CPUS = -3;

    private final int threadsEach;
    /** The CPUs the pool's threads may run on, as {@code config_threadpool} takes them: decimal strings. */
    private final List<String> cpus;
    private final ThreadLocal<Boolean> sized = ThreadLocal.withInitial(() -> Boolean.FALSE);

    CpuShare(int poolThreads, int workers, Set<Integer> cpus) {
        if (cpus.isEmpty()) {
            throw new IllegalArgumentException("CpuShare: no CPUs to run the pool on (the affinity mask is empty)");
        }
        this.threadsEach = Math.max(1, poolThreads / Math.max(1, workers));
        this.cpus = cpus.stream().sorted().map(String::valueOf).toList();
    }

    /** The share of {@code workers} workers in this process's pool. */
    static CpuShare forWorkers(int workers) {
        int pool = CpuPool.size().threads();
        return new CpuShare(pool > 0 ? pool : CpuPool.usableCores(), workers, CpuPool.affinity());
    }

    int threadsEach() {
        return threadsEach;
    }

    List<String> cpus() {
        return cpus;
    }

    /** Sizes the calling thread's TVM pool, the first time this thread runs a kernel. */
    void enter() {
        if (!sized.get()) {
            Tvm.call("runtime.config_threadpool", SHARE_ALL_CPUS, threadsEach, cpus);
            sized.set(Boolean.TRUE);
        }
    }
}
