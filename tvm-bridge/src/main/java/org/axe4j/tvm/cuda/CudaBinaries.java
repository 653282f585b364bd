package org.axe4j.tvm.cuda;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArraySet;
import java.util.function.Supplier;
import org.axe4j.tvm.Tvm;

/**
 * Compiled CUDA code for modules that carry CUDA source.
 *
 * <p>TVM 0.27 keeps a CUDA module's C++ source in the exported library and compiles it when the
 * library is loaded, through the global {@code tvm_callback_cuda_compile}, which TVM's Python
 * registers. A JVM has no Python, so the bridge registers its own {@code tvm_callback_cuda_compile}
 * (only where none is registered: inside a Python TVM process, TVM's nvcc callback stays). It
 * compiles nothing: it hashes the source it is handed and returns the fatbin of that SHA-256,
 * {@code <sha256>.fatbin}, from the fatbin folders:
 * <ol>
 *   <li>the sidecar of each module loaded, {@code <module file>.fatbins/}, which
 *       {@code axe4j.export_library} writes beside the library;</li>
 *   <li>the folders of {@code -Daxe4j.cuda.fatbins} or {@code AXE4J_CUDA_FATBINS} (a path list).</li>
 * </ol>
 * The store is content-addressed, so a fatbin can only ever serve the source it was made from; an
 * edited library whose source no longer matches gets a clear error, never stale code. Before handing
 * a fatbin over, the archs it holds are checked against this machine's GPUs, so a wrong arch is
 * reported with both archs instead of failing inside {@code cuModuleLoadData}.
 */
public final class CudaBinaries {
    public static final String CALLBACK = "tvm_callback_cuda_compile";
    public static final String PROPERTY = "axe4j.cuda.fatbins";
    public static final String ENV = "AXE4J_CUDA_FATBINS";
    public static final String SIDECAR_SUFFIX = ".fatbins";

    private static final Set<Path> SIDECARS = new CopyOnWriteArraySet<>();
    private static final ThreadLocal<Path> LOADING = new ThreadLocal<>();
    private static final ThreadLocal<CudaException> FAILURE = new ThreadLocal<>();

    private CudaBinaries() {}

    /** The fatbin folder written beside {@code module}: {@code gemm.so} has {@code gemm.so.fatbins/}. */
    public static Path sidecarOf(Path module) {
        return module.resolveSibling(module.getFileName() + SIDECAR_SUFFIX);
    }

    /** A scope in which {@code module} is being loaded on this thread: its sidecar joins the search. */
    public static Loading loading(Path module) {
        Path sidecar = sidecarOf(module);
        if (Files.isDirectory(sidecar)) {
            SIDECARS.add(sidecar.toAbsolutePath().normalize());
        }
        Path previous = LOADING.get();
        LOADING.set(module);
        FAILURE.remove();
        return new Loading(previous);
    }

    /** Ends a {@link #loading} scope. */
    public static final class Loading implements AutoCloseable {
        private final Path previous;

        private Loading(Path previous) {
            this.previous = previous;
        }

        /** The failure of this thread's last fatbin request, taken once (so the caller sees Java's exception). */
        public Optional<CudaException> takeFailure() {
            CudaException failure = FAILURE.get();
            FAILURE.remove();
            return Optional.ofNullable(failure);
        }

        @Override
        public void close() {
            if (previous == null) {
                LOADING.remove();
            } else {
                LOADING.set(previous);
            }
        }
    }

    /** Every folder searched, in order: module sidecars, then the configured folders. */
    public static List<Path> folders() {
        Set<Path> all = new LinkedHashSet<>(SIDECARS);
        String configured = System.getProperty(PROPERTY);
        if (configured == null || configured.isBlank()) {
            configured = System.getenv(ENV);
        }
        if (configured != null) {
            for (String part : configured.split(File.pathSeparator)) {
                if (!part.isBlank()) {
                    all.add(Paths.get(part.trim()).toAbsolutePath().normalize());
                }
            }
        }
        return List.copyOf(all);
    }

    /** Adds a folder of {@code <sha256>.fatbin} files to the search (e.g. a bundle's shared folder). */
    public static void addFolder(Path folder) {
        if (!Files.isDirectory(folder)) {
            throw new IllegalArgumentException("CudaBinaries.addFolder: " + folder.toAbsolutePath()
                    + " is not a directory");
        }
        SIDECARS.add(folder.toAbsolutePath().normalize());
    }

    /** SHA-256 of the source's UTF-8 bytes, in hex: the fatbin's file name without {@code .fatbin}. */
    public static String sourceHash(String source) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(source.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK has no SHA-256", e);
        }
    }

    /**
     * The fatbin for {@code source}, checked against {@code gpus}' compute capabilities (an empty list
     * skips the check).
     *
     * @throws CudaException naming the module being loaded, the source's hash and the folders searched
     *     when no fatbin matches; naming the fatbin's archs and the GPUs when none of them runs it
     */
    public static Fatbin resolve(String source, List<CudaDriver.Gpu> gpus) {
        String sha = sourceHash(source);
        String module = Optional.ofNullable(LOADING.get()).map(p -> "module " + p.toAbsolutePath())
                .orElse("a CUDA module");
        List<Path> searched = folders();
        for (Path folder : searched) {
            Path file = folder.resolve(sha + ".fatbin");
            if (Files.isRegularFile(file)) {
                Fatbin fatbin;
                try {
                    fatbin = new Fatbin(Files.readAllBytes(file));
                } catch (IOException | IllegalArgumentException e) {
                    throw new CudaException(module + ": the fatbin " + file + " cannot be used: " + e.getMessage(), e);
                }
                Set<String> arches = fatbin.arches();
                boolean runs = gpus.isEmpty() || gpus.stream().anyMatch(g -> g.capability().runsAny(arches));
                if (!runs) {
                    List<String> needs = new ArrayList<>();
                    gpus.forEach(g -> needs.add(g.capability().arch() + (g.capability().major() >= 9 ? "a" : "")));
                    throw new CudaException(module + ": its CUDA code is built for " + arches + " (" + file
                            + "), which does not run on " + gpus + "; compile the module for " + needs
                            + " (target {\"kind\": \"cuda\", \"arch\": \"" + needs.get(0) + "\"})");
                }
                return fatbin;
            }
        }
        throw new CudaException(module + ": no compiled code for its CUDA source (sha256 " + sha.substring(0, 16)
                + "…, " + sha + ".fatbin) in " + searched + ". TVM compiles CUDA source when a module loads, and"
                + " this process has no compiler: export the module with axe4j.export_library(executable, path),"
                + " which writes <path>" + SIDECAR_SUFFIX + "/ beside it, or name a fatbin folder with -D"
                + PROPERTY + " or " + ENV);
    }

    /**
     * Registers the fatbin-serving {@value #CALLBACK} unless a global of that name exists (TVM's
     * Python registers an nvcc-backed one). Idempotent.
     *
     * @return whether this call registered it
     */
    public static synchronized boolean registerCallback(Supplier<List<CudaDriver.Gpu>> gpus) {
        if (Tvm.findFunction(CALLBACK).isPresent()) {
            return false;
        }
        Tvm.register(CALLBACK, args -> {
            if (args.length == 0 || !(args[0] instanceof String)) {
                throw new IllegalArgumentException(CALLBACK + " expects the CUDA source as its first argument");
            }
            try {
                return resolve((String) args[0], gpus.get()).bytes();
            } catch (CudaException e) {
                FAILURE.set(e);
                throw e;
            }
        }, false);
        return true;
    }
}
