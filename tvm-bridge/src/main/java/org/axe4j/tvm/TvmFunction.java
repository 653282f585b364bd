package org.axe4j.tvm;

import java.lang.ref.Reference;

/**
 * A TVM function object ({@code ffi.Function}). {@link #call} encodes the arguments into a pooled
 * native frame (no allocation for numbers and short strings), calls
 * {@code TVMFFIFunctionCall} through {@link FastCall} (JNI, else JNA direct mapping) and decodes the
 * owned result.
 */
public final class TvmFunction extends TvmObject {
    TvmFunction(long handle) {
        super(handle);
    }

    /** Wraps a Java implementation as a TVM function (not registered under any name). */
    public static TvmFunction of(PackedFunction implementation) {
        Tvm.load();
        return Callbacks.create(implementation);
    }

    /**
     * Calls the function. Results decode as in {@link Values}: Int to Long, Float to Double, Str to
     * String, Array to List, Map to Map, other objects to {@link TvmObject} (caller closes them).
     *
     * @throws TvmException carrying TVM's error kind, message and backtrace
     */
    public Object call(Object... args) {
        try (CallFrame frame = invoke(args)) {
            return Values.decode(frame.buffer, CallFrame.RESULT, true);
        }
    }

    /** Like {@link #call} but keeps container results as TVM objects instead of Java collections. */
    public TvmObject callRaw(Object... args) {
        try (CallFrame frame = invoke(args)) {
            int type = frame.buffer.getInt(CallFrame.RESULT);
            if (type < TypeIndex.STATIC_OBJECT_BEGIN) {
                Object plain = Values.decode(frame.buffer, CallFrame.RESULT, true);
                throw new IllegalStateException("expected an object result, got " + TypeIndex.podName(type) + " "
                        + plain);
            }
            return TvmObject.adopt(frame.buffer.getLong(CallFrame.RESULT + 8));
        }
    }

    private CallFrame invoke(Object[] args) {
        CallFrame frame = CallFrame.acquire(args.length);
        try {
            for (int i = 0; i < args.length; i++) {
                Values.encode(frame, frame.argOffset(i), args[i], false);
            }
            int rc = FastCall.functionCall(handle(), frame.argAddress(0), args.length,
                    frame.address + CallFrame.RESULT);
            Reference.reachabilityFence(args);
            Reference.reachabilityFence(this);
            if (rc != 0) {
                throw TvmErrors.fromRaised();
            }
            return frame;
        } catch (RuntimeException | Error e) {
            frame.close();
            throw e;
        }
    }
}
