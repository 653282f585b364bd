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
 * Finds and loads TVM's shared libraries in TVM's own order, in two steps.
 *
 * <ol>
 *   <li>{@link #load()}: the runtime, {@code libtvm_ffi} then {@code libtvm_runtime} (both global).
 *       That is all a compiled module needs: loading it, allocating tensors, calling its functions,
 *       timing them.</li>
 *   <li>{@link #loadCompiler()}: {@code libtvm_compiler}, then the extras
 *       ({@code libtvm_runtime_extra}; {@code libtvm_runtime_cuda} only when a CUDA driver is
 *       present). {@link Tvm#findFunction} and type look-ups do this step by themselves the first
 *       time a name is not in the runtime, so code that asks for compiler functions gets them;
 *       {@code -Daxe4j.tvm.libraries=all} (or {@code AXE4J_TVM_LIBRARIES=all}) loads everything at
 *       once.</li>
 * </ol>
 *
 * <p>Every library loaded stays in the process until it exits: it is opened with
 * {@code RTLD_NODELETE} and its JNA handle is held here, so no garbage collection can unload it
 * under live TVM objects.
 *
 * <p>Search order: system property {@code axe4j.tvm.libdir} or environment variable
 * {@code AXE4J_TVM_LIBDIR} (one directory or a path list); else {@code AXE4J_VENV} (a virtual
 * environment); else the nearest {@code .venv} found walking up from the working directory; else the
 * {@code tvm-runtime-natives} jar on the class path ({@link RuntimeNatives}: runtime only, extracted
 * once to a cache directory). Inside a virtual environment the libraries live in
 * {@code lib/python3*}{@code /site-packages/{tvm_ffi/lib, tvm/lib}}.
 *
 * <p>Two TVMs, one per process (the lane, docs/tvm-versions.md): apache-tvm 0.27 (package {@code tvm}: the compiler
 * is {@code libtvm_compiler}) and the new TIRx, apache-tvm-tirx (package {@code tvm_tirx}: {@code libtvm_tirx_compiler}
 * and the LLVM backend {@code libtvm_tirx_llvm_backend_native}, no {@code libtvm_runtime_extra}). Both share
 * apache-tvm-ffi's {@code libtvm_ffi}. System property {@code axe4j.tvm.lane} or environment variable
 * {@code AXE4J_TVM_LANE} ({@code tvm} or {@code tvm_tirx}) picks the package folder inside a virtual environment and
 * the walked-up folder ({@code .venv} or {@code .venv-tirx}); unset, a virtual environment's {@code tvm} is taken
 * where it has one, else its {@code tvm_tirx}. A library folder given outright is searched for either compiler.
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
    /** {@code runtime} (the default: the compiler on demand) or {@code all} (everything at once). */
    public static final String LIBRARIES_PROPERTY = "axe4j.tvm.libraries";
    public static final String LIBRARIES_ENV = "AXE4J_TVM_LIBRARIES";
    /**
     * Diagnosis only: {@code -Daxe4j.tvm.unpinLibraries=true} loads without {@code RTLD_NODELETE}
     * and without holding the JNA handles, reproducing the unload after garbage collection that
     * pinning prevents.
     */
    public static final String UNPIN_PROPERTY = "axe4j.tvm.unpinLibraries";
    /** {@code tvm} (apache-tvm 0.27) or {@code tvm_tirx} (apache-tvm-tirx): which TVM package to load. */
    public static final String LANE_PROPERTY = "axe4j.tvm.lane";
    public static final String LANE_ENV = "AXE4J_TVM_LANE";
    public static final String LANE_TVM = "tvm";
    public static final String LANE_TIRX = "tvm_tirx";

    static final String FFI = "libtvm_ffi.so";
    static final String RUNTIME = "libtvm_runtime.so";
    static final String COMPILER = "libtvm_compiler.so";
    static final String RUNTIME_EXTRA = "libtvm_runtime_extra.so";
    static final String RUNTIME_CUDA = "libtvm_runtime_cuda.so";
    static final String TIRX_COMPILER = "libtvm_tirx_compiler.so";
    static final String TIRX_LLVM_BACKEND = "libtvm_tirx_llvm_backend_native.so";

    private static final int[] GUARDED_SIGNALS = {Libc.SIGSEGV, Libc.SIGBUS, Libc.SIGFPE, Libc.SIGILL};

    private static volatile Loaded loaded;
    private static volatile Loaded compilerLoaded;
    /** {@code libtvm_ffi} as loaded by {@link #load()}: where the JNI fast path takes its entry point from. */
    private static volatile NativeLibrary ffiLibrary;
    /** Strong references: JNA closes a {@link NativeLibrary} that becomes unreachable. */
    private static final List<NativeLibrary> PINNED = Collections.synchronizedList(new ArrayList<>());

    private TvmLibraries() {}

    /**
     * Paths of the libraries found, in load order; the compiler and the extras may be absent
     * (a runtime-only installation).
     */
    public record Located(Path ffi, Path runtime, Optional<Path> compiler, Optional<Path> runtimeExtra,
                          Optional<Path> runtimeCuda, Optional<Path> llvmBackend, List<String> searched) {}

    /** What {@link #load()} did, for logs and diagnostics. */
    public record Loaded(Located located, List<String> loadedPaths, List<String> reusedPaths,
                         List<String> skipped, List<String> restoredSignals) {
        public String describe() {
            return "tvm libraries: loaded " + loadedPaths + ", reused " + reusedPaths + ", skipped " + skipped
                    + ", restored JVM handlers for " + restoredSignals;
        }
    }

    /**
     * Loads the runtime libraries once per process (thread-safe, idempotent) and binds the
     * direct-mapped C functions; with {@code axe4j.tvm.libraries=all} the compiler too. Later calls
     * return the first result.
     */
    public static Loaded load() {
        Loaded done = loaded;
        if (done != null) {
            return done;
        }
        synchronized (TvmLibraries.class) {
            if (loaded == null) {
                String mode = nonBlank(System.getProperty(LIBRARIES_PROPERTY)) ? System.getProperty(LIBRARIES_PROPERTY)
                        : System.getenv(LIBRARIES_ENV);
                if (nonBlank(mode) && !mode.equals("runtime") && !mode.equals("all")) {
                    throw new TvmLoadException(LIBRARIES_PROPERTY + " (or " + LIBRARIES_ENV + ") must be 'runtime' or"
                            + " 'all', not '" + mode + "'");
                }
                String lane = nonBlank(System.getProperty(LANE_PROPERTY)) ? System.getProperty(LANE_PROPERTY)
                        : System.getenv(LANE_ENV);
                loaded = loadRuntime(locate(System.getProperty(LIBDIR_PROPERTY), System.getenv(LIBDIR_ENV),
                        System.getenv(VENV_ENV), lane, Paths.get(System.getProperty("user.dir"))));
                if ("all".equals(mode)) {
                    loadCompiler();
                }
            }
            return loaded;
        }
    }

    /**
     * Loads {@code libtvm_compiler} and the extras after the runtime (idempotent). Returns an
     * account of everything loaded so far.
     *
     * @throws TvmLoadException naming where it looked when this installation has no compiler
     */
    public static Loaded loadCompiler() {
        Loaded done = compilerLoaded;
        if (done != null) {
            return done;
        }
        Loaded runtime = load();
        synchronized (TvmLibraries.class) {
            if (compilerLoaded == null) {
                Located located = runtime.located();
                if (located.compiler().isEmpty()) {
                    throw new TvmLoadException("this TVM installation is runtime-only: no " + COMPILER + " or "
                            + TIRX_COMPILER + " next to "
                            + located.runtime() + "; looked in: " + String.join(", ", located.searched())
                            + ". Compiling needs the apache-tvm wheel's libraries (" + VENV_ENV + " or -D"
                            + LIBDIR_PROPERTY + ")");
                }
                compilerLoaded = loadCompilerFrom(runtime);
                loaded = compilerLoaded;
            }
            return compilerLoaded;
        }
    }

    /**
     * Loads the compiler when this installation has one and it is not loaded yet.
     *
     * @return whether anything new was loaded (so a failed look-up is worth repeating)
     */
    static boolean loadCompilerIfAvailable() {
        if (compilerLoaded != null || load().located().compiler().isEmpty()) {
            return false;
        }
        loadCompiler();
        return true;
    }

    /** Whether {@code libtvm_compiler} has been loaded by this class. */
    public static boolean isCompilerLoaded() {
        return compilerLoaded != null;
    }

    /** Paths of every library this class opened or reused, in load order; all stay loaded. */
    public static List<String> pinnedLibraries() {
        synchronized (PINNED) {
            List<String> names = new ArrayList<>();
            for (NativeLibrary library : PINNED) {
                names.add(library.getFile() == null ? library.getName() : library.getFile().getPath());
            }
            return names;
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

    /**
     * Loads the CUDA runtime {@code cudart} (globally, so that TVM's CUDA library finds it by its
     * soname) and then {@code libtvm_runtime_cuda.so} from beside {@code libtvm_runtime}, with the
     * same signal-handler guard (idempotent). The CUDA library registers the {@code cuda} device API
     * and the loader of {@code cuda} modules.
     *
     * @return the path of {@code libtvm_runtime_cuda.so}
     * @throws TvmLoadException naming the folders searched when this installation has no
     *     {@code libtvm_runtime_cuda.so}, or naming the library that fails to load and why
     */
    public static synchronized Path loadCudaRuntime(Path cudart) {
        Loaded done = load();
        Path cuda = done.located().runtimeCuda().orElseThrow(() -> new TvmLoadException("this TVM installation has"
                + " no " + RUNTIME_CUDA + " beside " + done.located().runtime() + " (looked in: "
                + String.join(", ", done.located().searched()) + "); CUDA modules need it: take it from the"
                + " apache-tvm wheel or the tvm-runtime-natives jar"));
        Map<Integer, Memory> saved = saveGuarded();
        try {
            open(cudart, Libc.RTLD_NOW | Libc.RTLD_GLOBAL, new ArrayList<>(), new ArrayList<>());
            open(cuda, Libc.RTLD_NOW | Libc.RTLD_GLOBAL, new ArrayList<>(), new ArrayList<>());
        } finally {
            restoreChanged(saved, new ArrayList<>());
        }
        return cuda;
    }

    /**
     * The address of {@code symbol} in the {@code libtvm_ffi} that {@link #load()} opened, so that
     * other native code calls the very same library without opening it again.
     *
     * @throws UnsatisfiedLinkError when the library has no such symbol
     */
    static long ffiSymbolAddress(String symbol) {
        load();
        return com.sun.jna.Pointer.nativeValue(ffiLibrary.getFunction(symbol));
    }

    /**
     * {@link System#load} with the same signal-handler guard as TVM's libraries: whatever the
     * library's constructors do to SIGSEGV and friends, the JVM's handlers are put back.
     */
    static synchronized void systemLoadGuarded(Path library) {
        Map<Integer, Memory> saved = saveGuarded();
        try {
            System.load(library.toAbsolutePath().toString());
        } finally {
            restoreChanged(saved, new ArrayList<>());
        }
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
        return locate(libdirProperty, libdirEnv, venvEnv, null, workingDirectory);
    }

    /**
     * As {@link #locate(String, String, String, Path)}, for a lane: {@code tvm}, {@code tvm_tirx}, or null/blank
     * (a virtual environment's {@code tvm} where it has one, else its {@code tvm_tirx}).
     *
     * @throws TvmLoadException naming the lane when it is neither
     */
    public static Located locate(String libdirProperty, String libdirEnv, String venvEnv, String lane,
                                 Path workingDirectory) {
        if (nonBlank(lane) && !lane.equals(LANE_TVM) && !lane.equals(LANE_TIRX)) {
            throw new TvmLoadException(LANE_PROPERTY + " (or " + LANE_ENV + ") must be '" + LANE_TVM + "' or '"
                    + LANE_TIRX + "', not '" + lane + "'");
        }
        String venvName = LANE_TIRX.equals(lane) ? ".venv-tirx" : ".venv";
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
            dirs.addAll(venvLibraryDirs(Paths.get(venvEnv), lane, searched));
        } else {
            origin = "the nearest " + venvName + " above " + workingDirectory;
            for (Path dir = workingDirectory.toAbsolutePath().normalize(); dir != null; dir = dir.getParent()) {
                Path venv = dir.resolve(venvName);
                if (Files.isDirectory(venv)) {
                    dirs.addAll(venvLibraryDirs(venv, lane, searched));
                    break;
                }
                searched.add(venv + " (no such directory)");
            }
        }
        if (dirs.isEmpty() && explicit == null && !nonBlank(venvEnv)) {
            Optional<Path> natives = RuntimeNatives.extractIfPresent(searched);
            if (natives.isPresent()) {
                origin = "the tvm-runtime-natives jar on the class path";
                dirs.add(natives.get());
            }
        }
        Map<String, Path> found = new LinkedHashMap<>();
        for (Path dir : dirs) {
            searched.add(dir.toString());
            for (String name : List.of(FFI, RUNTIME, COMPILER, TIRX_COMPILER, RUNTIME_EXTRA, RUNTIME_CUDA,
                    TIRX_LLVM_BACKEND)) {
                Path candidate = dir.resolve(name);
                if (!found.containsKey(name) && Files.isRegularFile(candidate)) {
                    found.put(name, candidate.toAbsolutePath().normalize());
                }
            }
        }
        List<String> missing = new ArrayList<>();
        for (String required : List.of(FFI, RUNTIME)) {
            if (!found.containsKey(required)) {
                missing.add(required);
            }
        }
        if (!missing.isEmpty()) {
            throw new TvmLoadException("cannot find TVM libraries " + missing + " (searched via " + origin
                    + "); looked in: " + String.join(", ", searched)
                    + ". Set -D" + LIBDIR_PROPERTY + "=<dir>[" + File.pathSeparator + "<dir>...], " + LIBDIR_ENV
                    + ", or " + VENV_ENV + "=<virtualenv with apache-tvm>, or put org.axe4j:tvm-runtime-natives ("
                    + RuntimeNatives.PLATFORM + ") on the class path; ci/setup-python.sh creates .venv (apache-tvm),"
                    + " ci/setup-tirx.sh .venv-tirx (apache-tvm-tirx, -D" + LANE_PROPERTY + "=" + LANE_TIRX + ").");
        }
        // The compiler beside the runtime: 0.27's name first, then the new TIRx's.
        Path compiler = found.containsKey(COMPILER) ? found.get(COMPILER) : found.get(TIRX_COMPILER);
        return new Located(found.get(FFI), found.get(RUNTIME), Optional.ofNullable(compiler),
                Optional.ofNullable(found.get(RUNTIME_EXTRA)), Optional.ofNullable(found.get(RUNTIME_CUDA)),
                Optional.ofNullable(found.get(TIRX_LLVM_BACKEND)), Collections.unmodifiableList(searched));
    }

    private static List<Path> venvLibraryDirs(Path venv, String lane, List<String> searched) {
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
                String tvmPackage = nonBlank(lane) ? lane
                        : Files.isDirectory(site.resolve(LANE_TVM)) || !Files.isDirectory(site.resolve(LANE_TIRX))
                                ? LANE_TVM : LANE_TIRX;
                dirs.add(site.resolve("tvm_ffi").resolve("lib"));
                dirs.add(site.resolve(tvmPackage).resolve("lib"));
            }
        } catch (IOException e) {
            searched.add(lib + " (unreadable: " + e.getMessage() + ")");
        }
        if (dirs.isEmpty()) {
            searched.add(lib.resolve("python3*") + " (no match)");
        }
        return dirs;
    }

    private static Loaded loadRuntime(Located located) {
        CpuPool.size();   // before the pool can start: TVM reads TVM_NUM_THREADS when it does
        List<String> loadedPaths = new ArrayList<>();
        List<String> reused = new ArrayList<>();
        List<String> restored = new ArrayList<>();
        Map<Integer, Memory> saved = saveGuarded();
        NativeLibrary ffi;
        try {
            ffi = open(located.ffi(), Libc.RTLD_NOW | Libc.RTLD_GLOBAL, loadedPaths, reused);
            open(located.runtime(), Libc.RTLD_NOW | Libc.RTLD_GLOBAL, loadedPaths, reused);
        } finally {
            restoreChanged(saved, restored);
        }
        Ffi.register(ffi);
        ffiLibrary = ffi;
        List<String> skipped = new ArrayList<>();
        skipped.add(located.compiler().map(c -> c.getFileName() + " (on demand)")
                .orElse(COMPILER + " (not found: runtime only)"));
        return new Loaded(located, List.copyOf(loadedPaths), List.copyOf(reused), List.copyOf(skipped),
                List.copyOf(restored));
    }

    private static Loaded loadCompilerFrom(Loaded runtime) {
        Located located = runtime.located();
        List<String> loadedPaths = new ArrayList<>(runtime.loadedPaths());
        List<String> reused = new ArrayList<>(runtime.reusedPaths());
        List<String> skipped = new ArrayList<>();
        List<String> restored = new ArrayList<>(runtime.restoredSignals());
        Map<Integer, Memory> saved = saveGuarded();
        try {
            open(located.compiler().orElseThrow(), Libc.RTLD_NOW | Libc.RTLD_LOCAL, loadedPaths, reused);
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
            // The new TIRx's LLVM code generator (target llvm); it links libtvm_tirx_compiler.
            if (located.llvmBackend().isPresent()) {
                open(located.llvmBackend().get(), Libc.RTLD_NOW | Libc.RTLD_LOCAL, loadedPaths, reused);
            }
        } finally {
            List<String> now = new ArrayList<>();
            restoreChanged(saved, now);
            for (String signal : now) {
                if (!restored.contains(signal)) {
                    restored.add(signal);
                }
            }
        }
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
        boolean pin = !Boolean.getBoolean(UNPIN_PROPERTY);
        NativeLibrary library;
        try {
            library = NativeLibrary.getInstance(file,
                    Map.of(Library.OPTION_OPEN_FLAGS, pin ? flags | Libc.RTLD_NODELETE : flags));
        } catch (UnsatisfiedLinkError e) {
            throw new TvmLoadException("cannot load " + file + ": " + e.getMessage(), e);
        }
        if (pin) {
            PINNED.add(library);
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
