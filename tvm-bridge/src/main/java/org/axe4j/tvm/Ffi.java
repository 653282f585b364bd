package org.axe4j.tvm;

import com.sun.jna.Callback;
import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;

/**
 * Direct-mapped entry points of {@code libtvm_ffi.so} (declarations follow
 * {@code tvm/ffi/c_api.h}). Every pointer is passed as a {@code long} address: direct mapping
 * then costs one JNI transition and no marshalling, which is what the hot call path needs.
 * Registered once by {@link TvmLibraries#load()}.
 */
final class Ffi {
    private Ffi() {}

    /** {@code TVMFFISafeCallType}: {@code int (*)(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result)}. */
    interface SafeCall extends Callback {
        int invoke(long self, long args, int numArgs, long result);
    }

    /** {@code void (*deleter)(void* self)}. */
    interface Deleter extends Callback {
        void invoke(long self);
    }

    static void register(NativeLibrary ffiLibrary) {
        Native.register(Ffi.class, ffiLibrary);
    }

    static native int TVMFFIFunctionCall(long func, long args, int numArgs, long result);

    static native int TVMFFIObjectIncRef(long obj);

    static native int TVMFFIObjectDecRef(long obj);

    static native int TVMFFIFunctionGetGlobal(long nameByteArray, long outHandle);

    static native int TVMFFIFunctionSetGlobal(long nameByteArray, long function, int allowOverride);

    static native int TVMFFIFunctionCreate(long self, SafeCall safeCall, Deleter deleter, long outHandle);

    static native void TVMFFIErrorMoveFromRaised(long outHandle);

    static native void TVMFFIErrorSetRaisedFromCStr(byte[] kind, byte[] message);

    static native int TVMFFITypeKeyToIndex(long typeKeyByteArray, long outIndex);

    static native long TVMFFIGetTypeInfo(int typeIndex);

    static native int TVMFFIStringFromByteArray(long input, long outAny);

    static native int TVMFFIBytesFromByteArray(long input, long outAny);

    static native int TVMFFIDataTypeFromString(long input, long outDataType);

    static native int TVMFFIDataTypeToString(long dataType, long outAny);

    static native int TVMFFITensorFromDLPack(long managed, int requireAlignment, int requireContiguous, long outHandle);

    static native int TVMFFITensorToDLPack(long tensor, long outManaged);

    static native int TVMFFIAnyViewToOwnedAny(long view, long outAny);

    static native void TVMFFIGetVersion(long outVersion);

    static native int TVMFFIEnvSetStream(int deviceType, int deviceId, long stream, long outOriginal);

    static native long TVMFFIEnvGetStream(int deviceType, int deviceId);
}
