package org.axe4j.tvm;

import com.sun.jna.Pointer;
import java.nio.file.Path;

/**
 * axe4j's parallel launcher for TVM's CPU kernels ({@code src/main/c/axe4j_pool.c}, in the JNI library): the tasks of
 * a launch are claimed one at a time by the calling thread and by idle helper threads, so a call never waits for a
 * task nobody has started. TVM's pool gives task i to pool thread i and the caller spins until that thread has run,
 * which in a busy process (a server's connection threads on the same cores) costs a scheduler time slice per call.
 *
 * <p>A loop with less than 100 us of work a launch (its time on each thread that ran a task) gains less from a helper
 * than the helper's wake-up costs the other cores: after such a launch the loop's next 63 launches run on the caller
 * alone, then one asks the helpers again. A longer launch keeps asking, even one a helper missed.
 *
 * <p>One pool per process, started once ({@link #start}); a module's kernels use it after {@link #adopt}, which
 * points the library's {@code __TVMBackendParallelLaunch} (the slot TVM fills at load) at the launcher. Kernels whose
 * module also uses TVM's parallel barrier are left to TVM's pool. Needs the JNI library ({@link FastCall}).
 */
public final class ParallelPool {
    private static final String LAUNCH_SLOT = "__TVMBackendParallelLaunch";
    private static final String BARRIER_SLOT = "__TVMBackendParallelBarrier";
    private static int helpers = -1;

    private ParallelPool() {}

    /**
     * Whether a library's kernels now run their parallel loops on this pool, whether it has any ({@code false}: its
     * kernels launch none), and in words why.
     */
    public record Adoption(boolean adopted, boolean hasParallelLoops, String reason) {}

    /**
     * Starts the pool once for the process: {@code helperThreads} helper threads, and {@code tasks} tasks for a
     * launch that leaves the count to the runtime (TVM's generated code does). Later calls change nothing.
     * One caller on T threads: {@code start(T - 1, T)}.
     *
     * @return the helper threads running
     * @throws IllegalStateException when the JNI library is not available (built without a C compiler, or JNA forced)
     * @throws IllegalArgumentException when {@code helperThreads} is negative or {@code tasks} below 1
     */
    public static synchronized int start(int helperThreads, int tasks) {
        if (helperThreads < 0 || tasks < 1) {
            throw new IllegalArgumentException("ParallelPool.start: helper threads must be at least 0 and tasks at "
                    + "least 1, got " + helperThreads + " and " + tasks);
        }
        if (helpers < 0) {
            requireJni();
            helpers = startNative(helperThreads, tasks, TvmLibraries.ffiSymbolAddress("TVMFFIErrorMoveFromRaised"),
                    TvmLibraries.ffiSymbolAddress("TVMFFIErrorSetRaised"),
                    TvmLibraries.ffiSymbolAddress("TVMFFIObjectDecRef"));
        }
        return helpers;
    }

    /** The helper threads running; -1 before {@link #start}. */
    public static synchronized int helpers() {
        return helpers;
    }

    /** Whether {@link #start} has run in this process. */
    public static synchronized boolean started() {
        return helpers >= 0;
    }

    /** Whether this JVM can run the pool: the JNI library loaded. */
    public static boolean available() {
        return FastCall.mode().equals(FastCall.JNI);
    }

    /**
     * Points the loaded shared library {@code library}'s parallel launches at this pool.
     *
     * @param library the file TVM loaded the module from (as passed to {@link TvmModule#load})
     */
    public static synchronized Adoption adopt(Path library) {
        if (helpers < 0) {
            return new Adoption(false, true, "the pool is not started (ParallelPool.start)");
        }
        Libc.ensureRegistered();
        String path = library.toAbsolutePath().toString();
        Pointer handle = Libc.dlopen(path, Libc.RTLD_NOW | Libc.RTLD_NOLOAD);
        if (handle == null) {
            return new Adoption(false, true, path + " is not loaded in this process");
        }
        try {
            Pointer slot = Libc.dlsym(handle, LAUNCH_SLOT);
            if (slot == null) {
                return new Adoption(false, false, path + " has no parallel loops (no " + LAUNCH_SLOT + ")");
            }
            if (Libc.dlsym(handle, BARRIER_SLOT) != null) {
                return new Adoption(false, true, path + " uses TVM's parallel barrier, which only TVM's pool provides");
            }
            slot.setLong(0, launcher());
            return new Adoption(true, true, path + ": parallel loops on axe4j's pool (" + helpers
                    + " helper thread(s), " + tasksPerLaunch() + " task(s) a launch)");
        } finally {
            Libc.dlclose(handle);
        }
    }

    /** Tasks run so far by the launching threads and by the pool's helpers (for tests and diagnostics). */
    public static long tasksRunByCallers() {
        return tasksRun(false);
    }

    public static long tasksRunByHelpers() {
        return tasksRun(true);
    }

    private static void requireJni() {
        if (!available()) {
            throw new IllegalStateException("axe4j's parallel pool needs the JNI library: " + FastCall.describe());
        }
    }

    private static native int startNative(int helperThreads, int tasks, long moveFromRaised, long setRaised,
                                          long decRef);

    static native long launcher();

    /** Tasks of a launch that leaves the count to the runtime. */
    public static native int tasksPerLaunch();

    /**
     * Tests: whether a parallel loop whose launch had less than {@code shortLaunchNanos} of work runs its next 63
     * launches on the caller alone (by default on, 100 us).
     */
    static native void adaptive(boolean on, long shortLaunchNanos);

    /** The default short launch, 100 us. */
    static final long SHORT_LAUNCH_NANOS = 100_000;

    /** Tests: while on, helpers claim nothing, as if the scheduler never ran them. */
    static native void hold(boolean on);

    private static native long tasksRun(boolean byHelpers);
}
