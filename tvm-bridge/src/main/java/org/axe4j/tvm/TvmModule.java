package org.axe4j.tvm;

import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

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
     * Loads a compiled module ({@code ffi.ModuleLoadFromFile}).
     *
     * @throws IllegalArgumentException naming the path when it is not a readable file
     */
    public static TvmModule load(Path path) {
        Tvm.load();
        Path absolute = path.toAbsolutePath().normalize();
        if (!Files.isRegularFile(absolute) || !Files.isReadable(absolute)) {
            throw new IllegalArgumentException("TvmModule.load: no readable module file at " + absolute);
        }
        try {
            return (TvmModule) Tvm.cached("ffi.ModuleLoadFromFile").callRaw(absolute.toString());
        } catch (TvmException e) {
            throw new TvmException(e.kind(), "loading module " + absolute + ": " + e.tvmMessage(), e.backtrace());
        }
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
