package org.axe4j.tvm;

import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Pointer;

/**
 * The few libc calls the loader needs: {@code sigaction} to save and restore the JVM's signal
 * handlers around the load of TVM's libraries, {@code dlopen(RTLD_NOLOAD)} to tell whether
 * a library is already in the process ({@code dlsym} to find a loaded module's symbols), and the C environment and affinity mask that size TVM's
 * thread pool ({@link CpuPool}).
 */
final class Libc {
    /** {@code struct sigaction} is 152 bytes on x86-64 and aarch64 glibc; the buffer leaves room. */
    static final int SIGACTION_BYTES = 256;
    static final int RTLD_NOW = 0x2;
    static final int RTLD_NOLOAD = 0x4;
    static final int RTLD_GLOBAL = 0x100;
    /** Keeps the object mapped after {@code dlclose}: a loaded TVM library is never unloaded. */
    static final int RTLD_NODELETE = 0x1000;
    static final int RTLD_LOCAL = 0;

    static final int SIGILL = 4;
    static final int SIGBUS = 7;
    static final int SIGFPE = 8;
    static final int SIGSEGV = 11;

    private static volatile boolean registered;

    private Libc() {}

    static synchronized void ensureRegistered() {
        if (!registered) {
            Native.register(Libc.class, NativeLibrary.getInstance("c"));
            registered = true;
        }
    }

    static native int sigaction(int signal, Pointer action, Pointer oldAction);

    static native Pointer dlopen(String path, int flags);

    /** The address of {@code symbol} in the object {@code handle} (glibc 2.34+ keeps dlsym in libc). */
    static native Pointer dlsym(Pointer handle, String symbol);

    static native int dlclose(Pointer handle);

    /** The CPUs this process may run on, as a bit mask of {@code size} bytes; 0 on success. */
    static native int sched_getaffinity(int pid, long size, Pointer mask);

    /** The C environment's value (what TVM's {@code getenv} sees; Java's {@code System.getenv} is a copy). */
    static native String getenv(String name);

    static native int setenv(String name, String value, int overwrite);

    /** Sets {@code name} in the C environment unless it is set. */
    static void setenv(String name, String value) {
        ensureRegistered();
        if (setenv(name, value, 0) != 0) {
            throw new IllegalStateException("setenv(" + name + ") failed");
        }
    }

    /** Returns free heap pages to the system, so resident size reflects live allocations. */
    static native int malloc_trim(long pad);

    /** The installed action of {@code signal}, as raw bytes of {@code struct sigaction}. */
    static Memory currentAction(int signal) {
        ensureRegistered();
        Memory saved = new Memory(SIGACTION_BYTES);
        saved.clear();
        if (sigaction(signal, null, saved) != 0) {
            throw new IllegalStateException("sigaction(" + signal + ") query failed");
        }
        return saved;
    }

    /** The handler address (first field of {@code struct sigaction}). */
    static long handlerOf(Memory action) {
        return action.getLong(0);
    }

    static void install(int signal, Memory action) {
        if (sigaction(signal, action, null) != 0) {
            throw new IllegalStateException("sigaction(" + signal + ") restore failed");
        }
    }

    /** Whether the shared object at {@code path} is already mapped in this process. */
    static boolean isLoaded(String path) {
        ensureRegistered();
        return dlopen(path, RTLD_NOW | RTLD_NOLOAD) != null;
    }
}
