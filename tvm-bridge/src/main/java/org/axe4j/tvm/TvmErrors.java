package org.axe4j.tvm;

import com.sun.jna.Pointer;
import java.nio.charset.StandardCharsets;

/**
 * Error propagation across the ABI. TVM to Java: a non-zero return code means an Error object
 * waits in thread-local storage; {@code TVMFFIErrorMoveFromRaised} takes it, and its
 * {@code TVMFFIErrorCell} (after the 24-byte header: kind, message, backtrace as
 * {@code TVMFFIByteArray}s) becomes a {@link TvmException}. Java to TVM: a throwable becomes
 * {@code TVMFFIErrorSetRaisedFromCStr(kind, message)} and return code -1.
 */
final class TvmErrors {
    private TvmErrors() {}

    /** Throws the raised TVM error when a C call returned non-zero. */
    static void check(int returnCode) {
        if (returnCode != 0) {
            throw fromRaised();
        }
    }

    static TvmException fromRaised() {
        try (CallFrame frame = CallFrame.acquire(0)) {
            frame.buffer.putLong(CallFrame.OUT_HANDLE, 0L);
            Ffi.TVMFFIErrorMoveFromRaised(frame.address + CallFrame.OUT_HANDLE);
            long error = frame.buffer.getLong(CallFrame.OUT_HANDLE);
            if (error == 0) {
                return new TvmException("InternalError", "TVM call failed but raised no error", "");
            }
            try {
                long cell = error + TvmObject.HEADER_BYTES;
                return new TvmException(TypeInfo.readByteArrayString(cell), TypeInfo.readByteArrayString(cell + 16),
                        TypeInfo.readByteArrayString(cell + 32));
            } finally {
                Ffi.TVMFFIObjectDecRef(error);
            }
        }
    }

    /** TVM's error kind for a Java throwable. */
    static String kindOf(Throwable t) {
        if (t instanceof TvmException) {
            return ((TvmException) t).kind();
        }
        if (t instanceof IllegalArgumentException) {
            return "ValueError";
        }
        if (t instanceof IndexOutOfBoundsException) {
            return "IndexError";
        }
        if (t instanceof ClassCastException) {
            return "TypeError";
        }
        if (t instanceof UnsupportedOperationException) {
            return "NotImplementedError";
        }
        if (t instanceof java.util.NoSuchElementException) {
            return "KeyError";
        }
        return "RuntimeError";
    }

    /** The message TVM sees: the Java message, then the Java class and the Java stack top. */
    static String messageOf(Throwable t) {
        if (t instanceof TvmException) {
            return ((TvmException) t).tvmMessage();
        }
        StringBuilder text = new StringBuilder(String.valueOf(t.getMessage()));
        text.append(" [java ").append(t.getClass().getName());
        StackTraceElement[] stack = t.getStackTrace();
        if (stack.length > 0) {
            text.append(" at ").append(stack[0]);
        }
        return text.append(']').toString();
    }

    static void raise(Throwable t) {
        Ffi.TVMFFIErrorSetRaisedFromCStr(cString(kindOf(t)), cString(messageOf(t)));
    }

    private static byte[] cString(String s) {
        byte[] utf8 = s.replace('\0', ' ').getBytes(StandardCharsets.UTF_8);
        byte[] z = new byte[utf8.length + 1];
        System.arraycopy(utf8, 0, z, 0, utf8.length);
        return z;
    }

    static String readCString(long address) {
        return new Pointer(address).getString(0, "UTF-8");
    }
}
