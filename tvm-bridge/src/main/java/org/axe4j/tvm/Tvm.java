package org.axe4j.tvm;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Entry point: loads TVM ({@link TvmLibraries#load()}) on first use and gives access to the
 * global function registry, which {@code libtvm_ffi} keeps once per process and which C++,
 * Python and Java all share.
 */
public final class Tvm {
    private static final ConcurrentHashMap<String, TvmFunction> CACHED = new ConcurrentHashMap<>();
    /** Java implementations registered as globals, held here as well as in the callback table. */
    private static final ConcurrentHashMap<String, PackedFunction> REGISTERED = new ConcurrentHashMap<>();

    private Tvm() {}

    /** Loads the native libraries if needed (idempotent). */
    public static TvmLibraries.Loaded load() {
        return TvmLibraries.load();
    }

    /**
     * The global function {@code name}, or empty when none is registered. A name the runtime does
     * not have makes the compiler load first ({@link TvmLibraries#loadCompiler()}), when this
     * installation has one, so compiler functions are there when asked for.
     */
    public static Optional<TvmFunction> findFunction(String name) {
        load();
        Optional<TvmFunction> found = lookUp(name);
        if (found.isEmpty() && TvmLibraries.loadCompilerIfAvailable()) {
            found = lookUp(name);
        }
        return found;
    }

    private static Optional<TvmFunction> lookUp(String name) {
        try (CallFrame frame = CallFrame.acquire(0)) {
            long key = Values.byteArray(frame, name.getBytes(StandardCharsets.UTF_8));
            frame.buffer.putLong(CallFrame.OUT_HANDLE, 0L);
            TvmErrors.check(Ffi.TVMFFIFunctionGetGlobal(key, frame.address + CallFrame.OUT_HANDLE));
            long handle = frame.buffer.getLong(CallFrame.OUT_HANDLE);
            return handle == 0 ? Optional.empty() : Optional.of(new TvmFunction(handle));
        }
    }

    /**
     * The global function {@code name}.
     *
     * @throws NoSuchElementException naming the function when it is not registered
     */
    public static TvmFunction function(String name) {
        return findFunction(name).orElseThrow(
                () -> new NoSuchElementException("no TVM global function named '" + name + "'"));
    }

    /**
     * Calls the global {@code name} as registered now (a fresh look-up, so a global replaced later
     * by C++, Python or Java is seen); hold a {@link TvmFunction} to skip the look-up on hot paths.
     * See {@link TvmFunction#call}.
     */
    public static Object call(String name, Object... args) {
        try (TvmFunction function = function(name)) {
            return function.call(args);
        }
    }

    /**
     * A global looked up once and kept for the life of the process: only for the built-in
     * {@code ffi.*} and {@code runtime.*} globals this package uses, which nobody replaces.
     */
    static TvmFunction cached(String name) {
        TvmFunction f = CACHED.get(name);
        if (f == null) {
            f = CACHED.computeIfAbsent(name, Tvm::function);
        }
        return f;
    }

    /** Every registered global function name, in the registry's order. */
    public static List<String> globalFunctionNames() {
        try (TvmFunction names = (TvmFunction) call("ffi.FunctionListGlobalNamesFunctor")) {
            long count = (Long) names.call(-1L);
            List<String> result = new ArrayList<>((int) count);
            for (long i = 0; i < count; i++) {
                result.add((String) names.call(i));
            }
            return result;
        }
    }

    /**
     * Registers a Java implementation as the TVM global {@code name}, callable from C++, Python
     * and Java.
     *
     * @param override whether to replace an existing global of that name (else TVM raises)
     */
    public static TvmFunction register(String name, PackedFunction implementation, boolean override) {
        load();
        TvmFunction function = Callbacks.create(implementation);
        try (CallFrame frame = CallFrame.acquire(0)) {
            long key = Values.byteArray(frame, name.getBytes(StandardCharsets.UTF_8));
            if (Ffi.TVMFFIFunctionSetGlobal(key, function.handle(), override ? 1 : 0) != 0) {
                function.close();
                throw TvmErrors.fromRaised();
            }
        }
        REGISTERED.put(name, implementation);
        CACHED.remove(name);
        return function;
    }

    /** Parses a data type with TVM's own parser ({@code TVMFFIDataTypeFromString}). */
    public static DataType parseDataType(String text) {
        load();
        try (CallFrame frame = CallFrame.acquire(0)) {
            long key = Values.byteArray(frame, text.getBytes(StandardCharsets.UTF_8));
            TvmErrors.check(Ffi.TVMFFIDataTypeFromString(key, frame.address + CallFrame.OUT_HANDLE));
            var b = frame.buffer;
            int o = CallFrame.OUT_HANDLE;
            return new DataType(b.get(o) & 0xff, b.get(o + 1) & 0xff, b.getShort(o + 2) & 0xffff);
        }
    }

    /** Prints a data type with TVM's own printer ({@code TVMFFIDataTypeToString}). */
    public static String formatDataType(DataType type) {
        load();
        try (CallFrame frame = CallFrame.acquire(0)) {
            var b = frame.buffer;
            int o = CallFrame.OUT_HANDLE;
            b.put(o, (byte) type.code());
            b.put(o + 1, (byte) type.bits());
            b.putShort(o + 2, (short) type.lanes());
            TvmErrors.check(Ffi.TVMFFIDataTypeToString(frame.address + o, frame.address + CallFrame.RESULT));
            return (String) Values.decode(b, CallFrame.RESULT, true);
        }
    }

    /**
     * The stream that compiled kernels launch on for {@code device}, on this thread
     * ({@code TVMFFIEnvGetStream}); 0 is the device's default stream.
     */
    public static long currentStream(Device device) {
        load();
        return Ffi.TVMFFIEnvGetStream(device.deviceType(), device.deviceId());
    }

    /**
     * Makes {@code stream} the one compiled kernels launch on for {@code device}, on this thread
     * ({@code TVMFFIEnvSetStream}).
     *
     * @return the stream it replaces
     */
    public static long setCurrentStream(Device device, long stream) {
        load();
        try (CallFrame frame = CallFrame.acquire(0)) {
            frame.buffer.putLong(CallFrame.OUT_HANDLE, 0L);
            TvmErrors.check(Ffi.TVMFFIEnvSetStream(device.deviceType(), device.deviceId(), stream,
                    frame.address + CallFrame.OUT_HANDLE));
            return frame.buffer.getLong(CallFrame.OUT_HANDLE);
        }
    }

    /** An unchecked cast for call results whose kind the caller knows, e.g. {@code Map<String, Long>}. */
    @SuppressWarnings("unchecked")
    public static <T> T cast(Object value) {
        return (T) value;
    }

    /** Number of Java function implementations TVM still references (registered or anonymous). */
    public static int liveJavaFunctions() {
        return Callbacks.liveCount();
    }
}
