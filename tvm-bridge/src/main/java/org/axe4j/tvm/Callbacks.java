package org.axe4j.tvm;

import com.sun.jna.Pointer;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Java functions as TVM functions. Each implementation gets an id, passed to
 * {@code TVMFFIFunctionCreate} as the {@code self} pointer; one shared safe-call entry point
 * looks the implementation up by id. The table holds the implementations strongly until TVM calls
 * the deleter, so a function stays callable for as long as TVM references it (for globals: the
 * life of the process). The two JNA callback objects are static, so the GC never frees them.
 *
 * <p>Anything thrown by the implementation is caught and raised as a TVM error
 * ({@link TvmErrors#raise}); it never crosses the native frames as a Java exception.
 */
final class Callbacks {
    private static final Map<Long, PackedFunction> TABLE = new ConcurrentHashMap<>();
    private static final AtomicLong NEXT_ID = new AtomicLong(1);

    private static final Ffi.SafeCall SAFE_CALL = Callbacks::safeCall;
    private static final Ffi.Deleter DELETER = id -> TABLE.remove(id);

    private Callbacks() {}

    static TvmFunction create(PackedFunction implementation) {
        long id = NEXT_ID.getAndIncrement();
        TABLE.put(id, implementation);
        try (CallFrame frame = CallFrame.acquire(0)) {
            frame.buffer.putLong(CallFrame.OUT_HANDLE, 0L);
            if (Ffi.TVMFFIFunctionCreate(id, SAFE_CALL, DELETER, frame.address + CallFrame.OUT_HANDLE) != 0) {
                TABLE.remove(id);
                throw TvmErrors.fromRaised();
            }
            return new TvmFunction(frame.buffer.getLong(CallFrame.OUT_HANDLE));
        }
    }

    /** Number of Java implementations TVM currently references. */
    static int liveCount() {
        return TABLE.size();
    }

    private static int safeCall(long self, long args, int numArgs, long result) {
        try {
            PackedFunction implementation = TABLE.get(self);
            if (implementation == null) {
                throw new IllegalStateException("Java function #" + self + " was already released");
            }
            Object[] decoded = new Object[numArgs];
            if (numArgs > 0) {
                ByteBuffer view = new Pointer(args).getByteBuffer(0, (long) numArgs * CallFrame.ANY_BYTES)
                        .order(ByteOrder.nativeOrder());
                for (int i = 0; i < numArgs; i++) {
                    decoded[i] = Values.decode(view, i * CallFrame.ANY_BYTES, false);
                }
            }
            Object value = implementation.apply(decoded);
            try (CallFrame frame = CallFrame.acquire(0)) {
                Values.encode(frame, CallFrame.RESULT, value, true);
                ByteBuffer out = new Pointer(result).getByteBuffer(0, CallFrame.ANY_BYTES).order(ByteOrder.nativeOrder());
                out.putLong(0, frame.buffer.getLong(CallFrame.RESULT));
                out.putLong(8, frame.buffer.getLong(CallFrame.RESULT + 8));
            }
            return 0;
        } catch (Throwable t) {
            try {
                TvmErrors.raise(t);
            } catch (Throwable nested) {
                return -1;
            }
            return -1;
        }
    }
}
