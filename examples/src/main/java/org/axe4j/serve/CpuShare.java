package org.axe4j.serve;

import java.util.List;
import java.util.Set;
import org.axe4j.tvm.CpuPool;
import org.axe4j.tvm.FastCall;
import org.axe4j.tvm.ParallelPool;
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

    /** {@code AXE4J_CPU_POOL=tvm} keeps TVM's own pools (for comparison); anything else uses axe4j's. */
    static final String POOL_ENV = "AXE4J_CPU_POOL";

    private final int threadsEach;
    /** The pool kernels run their parallel loops on, in words (the start-up line). */
    private final String parallelPool;
    /** The CPUs the pool's threads may run on, as {@code config_threadpool} takes them: decimal strings. */
    private final List<String> cpus;
    private final ThreadLocal<Boolean> sized = ThreadLocal.withInitial(() -> Boolean.FALSE);

    CpuShare(int poolThreads, int workers, Set<Integer> cpus) {
        this(poolThreads, workers, cpus, "TVM's");
    }

    private CpuShare(int poolThreads, int workers, Set<Integer> cpus, String parallelPool) {
        if (cpus.isEmpty()) {
            throw new IllegalArgumentException("CpuShare: no CPUs to run the pool on (the affinity mask is empty)");
        }
        this.threadsEach = eachOf(poolThreads, workers);
        this.cpus = cpus.stream().sorted().map(String::valueOf).toList();
        this.parallelPool = parallelPool;
    }

    private static int eachOf(int poolThreads, int workers) {
        return Math.max(1, poolThreads / Math.max(1, workers));
    }

    /**
     * The share of {@code workers} workers in this process's pool, with axe4j's parallel pool started for them
     * ({@link #startParallelPool}) unless {@value #POOL_ENV}{@code =tvm}.
     */
    static CpuShare forWorkers(int workers) {
        int sized = CpuPool.size().threads();
        int pool = sized > 0 ? sized : CpuPool.usableCores();
        String parallelPool = "tvm".equals(System.getenv(POOL_ENV)) ? "TVM's (" + POOL_ENV + "=tvm)"
                : startParallelPool(pool, workers);
        return new CpuShare(pool, workers, CpuPool.affinity(), parallelPool);
    }

    /**
     * Starts axe4j's parallel pool ({@link ParallelPool}: a kernel's caller never waits for a task no thread has
     * begun) for the workers: {@code max(0, T - W)} helper threads shared by all workers, {@code max(1, T / W)} tasks a
     * kernel. Modules the service loads then run their parallel loops on it ({@link LoadedModule}). Without the JNI
     * library TVM's pools stay, sized by {@link #enter}.
     *
     * @return which pool the kernels run on, for the start-up line
     */
    private static String startParallelPool(int poolThreads, int workers) {
        if (!ParallelPool.available()) {
            return "TVM's (axe4j's needs the JNI library: " + FastCall.describe() + ")";
        }
        int helpers = ParallelPool.start(Math.max(0, poolThreads - Math.max(1, workers)),
                eachOf(poolThreads, workers));
        return "axe4j's: " + helpers + " helper thread(s), " + ParallelPool.tasksPerLaunch() + " task(s) a kernel";
    }

    /** The pool kernels run their parallel loops on, in words. */
    String parallelPool() {
        return parallelPool;
    }

    int threadsEach() {
        return threadsEach;
    }

    List<String> cpus() {
        return cpus;
    }

    /**
     * Sizes the calling thread's TVM pool, the first time this thread runs a kernel: the pool that runs the parallel
     * loops of modules that stay on TVM's pools ({@link ParallelPool#adopt} says when), and for every module with
     * parallel loops the count {@code runtime.NumThreads} gives it (the blocked CPU GEMM takes its runs from it;
     * unsized, it would say T where axe4j's pool gives a kernel T / W tasks).
     */
    void enter() {
        if (!sized.get()) {
            Tvm.call("runtime.config_threadpool", SHARE_ALL_CPUS, threadsEach, cpus);
            sized.set(Boolean.TRUE);
        }
    }
}
