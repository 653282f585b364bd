package org.axe4j.tvm;

import com.sun.jna.Library;
import com.sun.jna.Memory;
import com.sun.jna.NativeLibrary;
import java.io.File;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Finds and loads TVM's shared libraries in TVM's own order:
 * {@code libtvm_ffi} (global), {@code libtvm_runtime} (global), {@code libtvm_compiler},
 * then the extras ({@code libtvm_runtime_extra}; {@code libtvm_runtime_cuda} only when a CUDA
 * driver is present).
 *
 * <p>Search order: system property {@code axe4j.tvm.libdir} or environment variable
 * {@code AXE4J_TVM_LIBDIR} (one directory or a path list); else {@code AXE4J_VENV} (a virtual
 * environment); else the nearest {@code .venv} found walking up from the working directory. Inside
 * a virtual environment the libraries live in
 * {@code lib/python3*}{@code /site-packages/{tvm_ffi/lib, tvm/lib}}.
 *
 * <p>{@code libtvm_ffi} installs its own SIGSEGV handler from a static constructor, which would
 * take over the signal the JVM uses for implicit null checks. The loader saves the JVM's actions
 * for SIGSEGV, SIGBUS, SIGFPE and SIGILL before loading and puts back every one that changed.
 * When the libraries are already in the process (a Python process that imported TVM first),
 * {@code dlopen} reuses them, no constructor runs and nothing needs restoring.
 */
public final class TvmLibraries {
    public static final String LIBDIR_PROPERTY = "axe4j.tvm.libdir";
    public static final String LIBDIR_ENV = "AXE4J_TVM_LIBDIR";
    public static final String VENV_ENV = "AXE4J_VENV";
    /**
     * Diagnosis only: {@code -Daxe4j.tvm.keepForeignSignalHandlers=true} leaves the handlers the
     * libraries install in place, reproducing the crash the restore prevents.
     */
    public static final String KEEP_FOREIGN_HANDLERS_PROPERTY = "axe4j.tvm.keepForeignSignalHandlers";

    static final String FFI = "libtvm_ffi.so";
    static final String RUNTIME = "libtvm_runtime.so";
    static final String COMPILER = "libtvm_compiler.so";
    static final String RUNTIME_EXTRA = "libtvm_runtime_extra.so";
    static final String RUNTIME_CUDA = "libtvm_runtime_cuda.so";

    private static final int[] GUARDED_SIGNALS = {Libc.SIGSEGV, Libc.SIGBUS, Libc.SIGFPE, Libc.SIGILL};

    private static volatile Loaded loaded;

    private TvmLibraries() {}

    /** Paths of the libraries found, in load order; extras may be absent. */
    public record Located(Path ffi, Path runtime, Path compiler, Optional<Path> runtimeExtra,
                          Optional<Path> runtimeCuda, List<String> searched) {}

    /** What {@link #load()} did, for logs and diagnostics. */
    public record Loaded(Located located, List<String> loadedPaths, List<String> reusedPaths,
                         List<String> skipped, List<String> restoredSignals) {
        public String describe() {
            return "tvm libraries: loaded " + loadedPaths + ", reused " + reusedPaths + ", skipped " + skipped
                    + ", restored JVM handlers for " + restoredSignals;
        }
    }

    /**
     * Loads the libraries once per process (thread-safe, idempotent) and binds the direct-mapped
     * C functions. Later calls return the first result.
     */
    public static Loaded load() {
        Loaded done = loaded;
        if (done != null) {
            return done;
        }
        synchronized (TvmLibraries.class) {
            if (loaded == null) {
                loaded = loadFrom(locate(System.getProperty(LIBDIR_PROPERTY), System.getenv(LIBDIR_ENV),
                        System.getenv(VENV_ENV), Paths.get(System.getProperty("user.dir"))));
            }
            return loaded;
        }
    }

    /**
     * Loads one more library from the directories TVM's libraries came from (e.g. a backend
     * sidecar or {@code libtvm_ffi_testing.so}), with the same signal-handler guard.
     *
     * @return the absolute path loaded
     */
    public static synchronized Path loadAdditional(String fileName) {
        Loaded done = load();
        List<Path> dirs = new ArrayList<>();
        dirs.add(done.located().ffi().getParent());
        dirs.add(done.located().runtime().getParent());
        for (Path dir : dirs) {
            Path candidate = dir.resolve(fileName);
            if (Files.isRegularFile(candidate)) {
                Map<Integer, Memory> saved = saveGuarded();
                try {
                    open(candidate, Libc.RTLD_NOW | Libc.RTLD_LOCAL, new ArrayList<>(), new ArrayList<>());
                } finally {
                    restoreChanged(saved, new ArrayList<>());
                }
                return candidate;
            }
        }
        throw new TvmLoadException("cannot find " + fileName + "; looked in: " + dirs);
    }

    /** Whether {@link #load()} has completed in this JVM. */
    public static boolean isLoaded() {
        return loaded != null;
    }

    /** A one-paragraph account of where the libraries came from and what was skipped. */
    public static String diagnostics() {
        Loaded done = loaded;
        return done == null ? "tvm libraries: not loaded" : done.describe();
    }

    /**
     * Resolves the library paths from the given configuration without loading anything.
     *
     * @throws TvmLoadException naming every place searched when a required library is missing
     */
    public static Located locate(String libdirProperty, String libdirEnv, String venvEnv, Path workingDirectory) {
        List<String> searched = new ArrayList<>();
        List<Path> dirs = new ArrayList<>();
        String explicit = nonBlank(libdirProperty) ? libdirProperty : nonBlank(libdirEnv) ? libdirEnv : null;
        String origin;
        if (explicit != null) {
            origin = nonBlank(libdirProperty) ? "system property " + LIBDIR_PROPERTY : "environment " + LIBDIR_ENV;
            for (String part : explicit.split(File.pathSeparator)) {
                if (!part.isBlank()) {
                    dirs.add(Paths.get(part.trim()));
                }
            }
        } else if (nonBlank(venvEnv)) {
            origin = "environment " + VENV_ENV;
            dirs.addAll(venvLibraryDirs(Paths.get(venvEnv), searched));
        } else {
            origin = "the nearest .venv above " + workingDirectory;
            for (Path dir = workingDirectory.toAbsolutePath().normalize(); dir != null; dir = dir.getParent()) {
                Path venv = dir.resolve(".venv");
                if (Files.isDirectory(venv)) {
                    dirs.addAll(venvLibraryDirs(venv, searched));
                    break;
                }
                searched.add(venv + " (no such directory)");
            }
        }
        Map<String, Path> found = new LinkedHashMap<>();
        for (Path dir : dirs) {
            searched.add(dir.toString());
            for (String name : List.of(FFI, RUNTIME, COMPILER, RUNTIME_EXTRA, RUNTIME_CUDA)) {
                Path candidate = dir.resolve(name);
                if (!found.containsKey(name) && Files.isRegularFile(candidate)) {
                    found.put(name, candidate.toAbsolutePath().normalize());
                }
            }
        }
        List<String> missing = new ArrayList<>();
        for (String required : List.of(FFI, RUNTIME, COMPILER)) {
            if (!found.containsKey(required)) {
                missing.add(required);
            }
        }
        if (!missing.isEmpty()) {
            throw new TvmLoadException("cannot find TVM libraries " + missing + " (searched via " + origin
                    + "); looked in: " + String.join(", ", searched)
                    + ". Set -D" + LIBDIR_PROPERTY + "=<dir>[" + File.pathSeparator + "<dir>...], " + LIBDIR_ENV
                    + ", or " + VENV_ENV + "=<virtualenv with apache-tvm>; ci/setup-python.sh creates .venv.");
        }
        return new Located(found.get(FFI), found.get(RUNTIME), found.get(COMPILER),
                Optional.ofNullable(found.get(RUNTIME_EXTRA)), Optional.ofNullable(found.get(RUNTIME_CUDA)),
                Collections.unmodifiableList(searched));
    }

    private static List<Path> venvLibraryDirs(Path venv, List<String> searched) {
        List<Path> dirs = new ArrayList<>();
        Path lib = venv.resolve("lib");
        if (!Files.isDirectory(lib)) {
            searched.add(lib + " (no such directory)");
            return dirs;
        }
        try (DirectoryStream<Path> pythons = Files.newDirectoryStream(lib, "python3*")) {
            List<Path> sorted = new ArrayList<>();
            pythons.forEach(sorted::add);
            Collections.sort(sorted);
            for (Path python : sorted) {
                Path site = python.resolve("site-packages");
                dirs.add(site.resolve("tvm_ffi").resolve("lib"));
                dirs.add(site.resolve("tvm").resolve("lib"));
            }
        } catch (IOException e) {
            searched.add(lib + " (unreadable: " + e.getMessage() + ")");
        }
        if (dirs.isEmpty()) {
            searched.add(lib.resolve("python3*") + " (no match)");
        }
        return dirs;
    }

    private static Loaded loadFrom(Located located) {
        List<String> loadedPaths = new ArrayList<>();
        List<String> reused = new ArrayList<>();
        List<String> skipped = new ArrayList<>();
        List<String> restored = new ArrayList<>();
        Map<Integer, Memory> saved = saveGuarded();
        NativeLibrary ffi;
        try {
            ffi = open(located.ffi(), Libc.RTLD_NOW | Libc.RTLD_GLOBAL, loadedPaths, reused);
            open(located.runtime(), Libc.RTLD_NOW | Libc.RTLD_GLOBAL, loadedPaths, reused);
            open(located.compiler(), Libc.RTLD_NOW | Libc.RTLD_LOCAL, loadedPaths, reused);
            if (located.runtimeExtra().isPresent()) {
                open(located.runtimeExtra().get(), Libc.RTLD_NOW | Libc.RTLD_LOCAL, loadedPaths, reused);
            } else {
                skipped.add(RUNTIME_EXTRA + " (not found)");
            }
            if (located.runtimeCuda().isPresent()) {
                if (cudaDriverPresent()) {
                    open(located.runtimeCuda().get(), Libc.RTLD_NOW | Libc.RTLD_LOCAL, loadedPaths, reused);
                } else {
                    skipped.add(located.runtimeCuda().get() + " (no CUDA driver libcuda.so.1 in this process)");
                }
            } else {
                skipped.add(RUNTIME_CUDA + " (not found)");
            }
        } finally {
            restoreChanged(saved, restored);
        }
        Ffi.register(ffi);
        return new Loaded(located, List.copyOf(loadedPaths), List.copyOf(reused), List.copyOf(skipped),
                List.copyOf(restored));
    }

    private static Map<Integer, Memory> saveGuarded() {
        Map<Integer, Memory> saved = new LinkedHashMap<>();
        for (int signal : GUARDED_SIGNALS) {
            saved.put(signal, Libc.currentAction(signal));
        }
        return saved;
    }

    private static void restoreChanged(Map<Integer, Memory> saved, List<String> restored) {
        for (Map.Entry<Integer, Memory> entry : saved.entrySet()) {
            Memory now = Libc.currentAction(entry.getKey());
            if (Libc.handlerOf(now) != Libc.handlerOf(entry.getValue())) {
                if (Boolean.getBoolean(KEEP_FOREIGN_HANDLERS_PROPERTY)) {
                    restored.add(signalName(entry.getKey()) + " (NOT restored: " + KEEP_FOREIGN_HANDLERS_PROPERTY + ")");
                    continue;
                }
                Libc.install(entry.getKey(), entry.getValue());
                restored.add(signalName(entry.getKey()));
            }
        }
    }

    static String signalName(int signal) {
        switch (signal) {
            case Libc.SIGSEGV: return "SIGSEGV";
            case Libc.SIGBUS: return "SIGBUS";
            case Libc.SIGFPE: return "SIGFPE";
            case Libc.SIGILL: return "SIGILL";
            default: return "signal " + signal;
        }
    }

    private static NativeLibrary open(Path path, int flags, List<String> loadedPaths, List<String> reused) {
        String file = path.toString();
        boolean already = Libc.isLoaded(file);
        NativeLibrary library;
        try {
            library = NativeLibrary.getInstance(file, Map.of(Library.OPTION_OPEN_FLAGS, flags));
        } catch (UnsatisfiedLinkError e) {
            throw new TvmLoadException("cannot load " + file + ": " + e.getMessage(), e);
        }
        (already ? reused : loadedPaths).add(file);
        return library;
    }

    private static boolean cudaDriverPresent() {
        try {
            NativeLibrary.getInstance("libcuda.so.1", Map.of(Library.OPTION_OPEN_FLAGS, Libc.RTLD_NOW | Libc.RTLD_LOCAL));
            return true;
        } catch (UnsatisfiedLinkError e) {
            return false;
        }
    }

    private static boolean nonBlank(String s) {
        return s != null && !s.isBlank();
    }
}
