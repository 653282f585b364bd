package org.axe4j.tvm;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Compiled modules loaded once and shared by every thread. A module is keyed by its real path
 * (symbolic links resolved) together with its size and modification time: asking again for an
 * unchanged file returns the same {@link TvmModule}, a rebuilt file loads again. Thread-safe; two
 * threads asking for the same new file load it once.
 *
 * <p>Modules, and the {@link Kernel}s taken from them, live until {@link #close()}; a module closed
 * while a kernel of it still runs is safe, since TVM's functions hold their module.
 */
public final class ModuleCache implements AutoCloseable {
    private static final ModuleCache SHARED = new ModuleCache();

    private record Key(Path realPath, long size, FileTime modified) {}

    private final ConcurrentHashMap<Key, TvmModule> modules = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Kernel> kernels = new ConcurrentHashMap<>();
    private volatile boolean closed;

    public ModuleCache() {}

    /** One cache for the whole process, never closed. */
    public static ModuleCache shared() {
        return SHARED;
    }

    /**
     * The module at {@code path}, loaded on first use.
     *
     * @throws IllegalArgumentException naming the path when there is no readable file
     * @throws TvmException when TVM cannot load it
     */
    public TvmModule module(Path path) {
        if (path == null) {
            throw new IllegalArgumentException("ModuleCache.module: path is null");
        }
        if (closed) {
            throw new IllegalStateException("ModuleCache is closed");
        }
        Key key = keyOf(path);
        return modules.computeIfAbsent(key, k -> TvmModule.load(k.realPath()));
    }

    /**
     * The function {@code name} of the module at {@code path} as a {@link Kernel}, looked up once.
     *
     * @throws java.util.NoSuchElementException naming the module and function when it has none
     */
    public Kernel kernel(Path path, String name) {
        if (name == null || name.isEmpty()) {
            throw new IllegalArgumentException("ModuleCache.kernel: function name is empty");
        }
        TvmModule module = module(path);
        Key key = keyOf(path);
        return kernels.computeIfAbsent(key + "#" + name, k -> Kernel.of(module, name));
    }

    /** Number of modules held. */
    public int size() {
        return modules.size();
    }

    private static Key keyOf(Path path) {
        try {
            Path real = path.toRealPath();
            if (!Files.isRegularFile(real)) {
                throw new IllegalArgumentException("ModuleCache: " + real + " is not a regular file");
            }
            return new Key(real, Files.size(real), Files.getLastModifiedTime(real));
        } catch (NoSuchFileException e) {
            throw new IllegalArgumentException("ModuleCache: no module file at " + path.toAbsolutePath());
        } catch (IOException e) {
            throw new IllegalArgumentException("ModuleCache: cannot read " + path.toAbsolutePath() + ": " + e.getMessage(), e);
        }
    }

    /** Releases every module and kernel this cache holds. */
    @Override
    public void close() {
        if (this == SHARED) {
            throw new IllegalStateException("ModuleCache.shared() lives as long as the process");
        }
        closed = true;
        List<AutoCloseable> all = new ArrayList<>(kernels.values());
        all.addAll(modules.values());
        kernels.clear();
        modules.clear();
        for (AutoCloseable c : all) {
            try {
                c.close();
            } catch (Exception e) {
                throw new IllegalStateException("releasing a cached module failed", e);
            }
        }
    }
}
