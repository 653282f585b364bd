package org.axe4j.serve;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.axe4j.tvm.Kernel;
import org.axe4j.tvm.ParallelPool;
import org.axe4j.tvm.TvmModule;
import org.axe4j.tvm.cuda.CudaBinaries;
import org.axe4j.tvm.cuda.DeviceMemory;

/**
 * One loaded version of a module: its manifest, a kernel per function and its {@link Runner}s (one per worker and
 * function, made on first use and reused).
 *
 * <p>The library (and its fatbin folder) is copied into a folder of its own first, so that a new version at the same
 * path loads afresh (the dynamic loader would hand back the library already open under that name). Requests hold the
 * version while they use it ({@link #tryAcquire}, {@link #release}); once it is retired and the last request let go,
 * its runners, kernels and module are closed and its folder deleted.
 */
final class LoadedModule {
    final Manifest manifest;
    final int generation;
    /** Whether axe4j's pool ({@link ParallelPool}) took the kernels' parallel loops, and why not; null: not asked. */
    final ParallelPool.Adoption parallelLoops;
    private final Path folder;
    private final TvmModule module;
    private final Map<String, Kernel> kernels = new HashMap<>();
    private final Map<String, Supplier<Runner>> makers = new HashMap<>();
    /** Each function's idle runners: at most one per worker is made, as a runner is used under a worker's permit. */
    private final Map<String, Queue<Runner>> idle = new HashMap<>();
    private final Queue<Runner> made = new ConcurrentLinkedQueue<>();
    /** 1 for the service's own hold while current, plus one per request using it; closed at 0. */
    private final AtomicInteger holds = new AtomicInteger(1);

    /**
     * Loads {@code library} by its manifest as version {@code generation}, in a copy under {@code scratch}.
     * {@code memories} makes each thread's device memory (null: CPU modules run in place, CUDA ones on the GPU);
     * {@code backend}, when not null, makes the runners instead of the module's kernels.
     *
     * @throws IllegalArgumentException or a TVM/CUDA exception naming what failed; nothing is left behind then
     */
    static LoadedModule load(Path library, int generation, Path scratch, Supplier<DeviceMemory> memories,
                             Backend backend) {
        Manifest manifest = Manifest.read(library);
        Path folder = scratch.resolve("v" + generation);
        try {
            Files.createDirectories(folder);
            Path copy = folder.resolve(library.getFileName());
            Files.copy(library, copy);
            Path fatbins = CudaBinaries.sidecarOf(library);
            if (Files.isDirectory(fatbins)) {
                Path target = Files.createDirectory(CudaBinaries.sidecarOf(copy));
                try (Stream<Path> files = Files.list(fatbins)) {
                    for (Path f : (Iterable<Path>) files::iterator) {
                        Files.copy(f, target.resolve(f.getFileName()));
                    }
                }
            }
            TvmModule module = TvmModule.load(copy);
            ParallelPool.Adoption loops = backend == null && memories == null && !manifest.onCuda()
                    && ParallelPool.started() ? ParallelPool.adopt(copy) : null;
            return new LoadedModule(manifest, generation, folder, module, memories, backend, loops);
        } catch (IOException e) {
            delete(folder);
            throw new UncheckedIOException("copying " + library + " to " + folder + ": " + e.getMessage(), e);
        } catch (RuntimeException e) {
            delete(folder);
            throw e;
        }
    }

    private LoadedModule(Manifest manifest, int generation, Path folder, TvmModule module,
                         Supplier<DeviceMemory> memories, Backend backend, ParallelPool.Adoption parallelLoops) {
        this.manifest = manifest;
        this.parallelLoops = parallelLoops;
        this.generation = generation;
        this.folder = folder;
        this.module = module;
        try {
            for (Manifest.Function f : manifest.functions().values()) {
                Kernel kernel = Kernel.of(module, f.name());
                kernels.put(f.name(), kernel);
                Supplier<Runner> make = backend != null ? backend.runners(f.name(), f.specs())
                        : memories != null ? () -> Runner.onDevice(kernel, f, memories)
                        : manifest.onCuda() ? () -> Runner.onDevice(kernel, f, CudaMemories.perThread())
                        : () -> Runner.onCpu(kernel, f.specs());
                makers.put(f.name(), make);
                idle.put(f.name(), new ConcurrentLinkedQueue<>());
            }
        } catch (RuntimeException e) {
            closeAll();
            throw new IllegalArgumentException("module " + manifest.library() + " does not match its manifest: "
                    + e.getMessage(), e);
        }
    }

    /**
     * Whether the kernels may ask for a TVM pool, which {@link CpuShare} sizes: they have parallel loops (run on TVM's
     * pools, or on axe4j's with {@code runtime.NumThreads} still giving a blocked GEMM its runs), or it is not known.
     */
    boolean usesTvmPool() {
        return parallelLoops == null || parallelLoops.hasParallelLoops();
    }

    /** An idle runner for {@code function} (made when there is none); the caller holds a worker's permit. */
    Runner take(String function) {
        Runner r = idle.get(function).poll();
        if (r == null) {
            r = makers.get(function).get();
            made.add(r);
        }
        return r;
    }

    /** Hands a runner back after the request used it. */
    void give(String function, Runner runner) {
        idle.get(function).add(runner);
    }

    /** Takes a hold for one request; false once the version is closed (the caller takes the current one again). */
    boolean tryAcquire() {
        for (int h = holds.get(); h > 0; h = holds.get()) {
            if (holds.compareAndSet(h, h + 1)) {
                return true;
            }
        }
        return false;
    }

    void release() {
        if (holds.decrementAndGet() == 0) {
            closeAll();
        }
    }

    /** Drops the service's own hold: closes now if idle, else when the last request releases. */
    void retire() {
        release();
    }

    /** Runners made so far (at most one per worker and function): what the version holds in memory. */
    int runnersMade() {
        return made.size();
    }

    private void closeAll() {
        for (Runner r; (r = made.poll()) != null; ) {
            r.close();
        }
        kernels.values().forEach(Kernel::close);
        module.close();
        delete(folder);
    }

    private static void delete(Path folder) {
        if (!Files.exists(folder)) {
            return;
        }
        try (Stream<Path> all = Files.walk(folder)) {
            all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
            // a scratch folder left behind is removed with the service's scratch folder at exit
        }
    }
}
