package org.axe4j.tvm;

import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.axe4j.tvm.cuda.Cuda;
import org.axe4j.tvm.cuda.CudaBinaries;
import org.axe4j.tvm.cuda.CudaException;

/**
 * A TVM runtime module ({@code ffi.Module}), e.g. a library written by {@code export_library}.
 * Functions are looked up with {@code ffi.ModuleGetFunction}; timing uses TVM's
 * {@code runtime.RPCTimeEvaluator}, which also works on local modules.
 */
public final class TvmModule extends TvmObject {
    TvmModule(long handle) {
        super(handle);
    }

    /**
     * Loads a compiled module ({@code ffi.ModuleLoadFromFile}). A library that holds CUDA code sets
     * up CUDA support on first use ({@link Cuda#enable()}) and takes its compiled code from the
     * fatbins beside it ({@link CudaBinaries}).
     *
     * @throws IllegalArgumentException naming the path when it is not a readable file
     * @throws CudaException naming the module when its CUDA code cannot be had: no driver or GPU, no
     *     fatbin for its source, or a fatbin for another arch
     */
    public static TvmModule load(Path path) {
        Tvm.load();
        Path absolute = path.toAbsolutePath().normalize();
        if (!Files.isRegularFile(absolute) || !Files.isReadable(absolute)) {
            throw new IllegalArgumentException("TvmModule.load: no readable module file at " + absolute);
        }
        try (CudaBinaries.Loading loading = CudaBinaries.loading(absolute)) {
            try {
                return loadFile(absolute);
            } catch (TvmException e) {
                if (!Cuda.isMissingCudaLoader(e) || Cuda.isEnabled()) {
                    throw loading.takeFailure().map(RuntimeException.class::cast).orElseGet(() -> located(absolute, e));
                }
            }
            // the library holds a CUDA module: set up CUDA support, then load again
            try {
                Cuda.enable();
            } catch (CudaException | TvmLoadException e) {
                throw new CudaException("loading module " + absolute + ": it holds CUDA code, and CUDA support cannot"
                        + " be set up: " + e.getMessage(), e);
            }
            try {
                return loadFile(absolute);
            } catch (TvmException e) {
                throw loading.takeFailure().map(RuntimeException.class::cast).orElseGet(() -> located(absolute, e));
            }
        }
    }

    private static TvmModule loadFile(Path absolute) {
        return (TvmModule) Tvm.cached("ffi.ModuleLoadFromFile").callRaw(absolute.toString());
    }

    private static TvmException located(Path module, TvmException e) {
        return new TvmException(e.kind(), "loading module " + module + ": " + e.tvmMessage(), e.backtrace());
    }

    /** The module kind, e.g. {@code library} or {@code llvm}. */
    public String kind() {
        return (String) Tvm.cached("ffi.ModuleGetKind").call(this);
    }

    /** The function {@code name}, searching imported modules too. */
    public Optional<TvmFunction> findFunction(String name) {
        Object f = Tvm.cached("ffi.ModuleGetFunction").call(this, name, true);
        return Optional.ofNullable((TvmFunction) f);
    }

    public TvmFunction function(String name) {
        return findFunction(name).orElseThrow(() -> new java.util.NoSuchElementException(
                "module " + kind() + " has no function '" + name + "'"));
    }

    /**
     * Times {@code name} with TVM's time evaluator: each of {@code repeat} measurements runs the
     * function {@code number} times (more if needed to last {@code minRepeatMs}) and reports seconds
     * per run.
     */
    public Timing time(String name, Device device, int number, int repeat, int minRepeatMs, Object... args) {
        try (TvmFunction evaluator = (TvmFunction) Tvm.cached("runtime.RPCTimeEvaluator").call(this, name,
                (long) device.deviceType(), (long) device.deviceId(), (long) number, (long) repeat, (long) minRepeatMs,
                100L, 0L, 1L, 0L, "")) {
            byte[] blob = (byte[]) evaluator.call(args);
            if (blob.length != repeat * 8) {
                throw new IllegalStateException("time evaluator returned " + blob.length + " bytes for " + repeat
                        + " repeats");
            }
            java.nio.ByteBuffer seconds = java.nio.ByteBuffer.wrap(blob).order(ByteOrder.nativeOrder());
            List<Double> values = new ArrayList<>(repeat);
            for (int i = 0; i < repeat; i++) {
                values.add(seconds.getDouble(8 * i));
            }
            return new Timing(values);
        }
    }

    @Override
    public String toString() {
        return isClosed() ? "TvmModule(released)" : "Module(" + kind() + ")";
    }
}
