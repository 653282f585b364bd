package org.axe4j.tvm;

/**
 * The path every {@code TVMFFIFunctionCall} of the bridge takes, chosen once per JVM: {@code "jni"},
 * a plain JNI function in {@code libaxe4j_jni.so} (built into the jar when the build machine has a C
 * compiler), or {@code "jna"}, JNA direct mapping ({@link Ffi}). JNI is used whenever its library
 * loads; {@code -Daxe4j.tvm.jni=false} forces JNA. Falling back logs one line and changes nothing
 * else: both paths run the same frames and the same error handling.
 */
public final class FastCall {
    /** {@code -Daxe4j.tvm.jni=false} forces the JNA path. */
    public static final String JNI_PROPERTY = "axe4j.tvm.jni";
    public static final String JNI = "jni";
    public static final String JNA = "jna";

    private FastCall() {}

    /** The path chosen for this JVM, {@value #JNI} or {@value #JNA}; loads TVM's libraries first. */
    public static String mode() {
        TvmLibraries.load();
        return Chosen.PATH.mode();
    }

    /** The path and why it was chosen, for logs and diagnostics. */
    public static String describe() {
        TvmLibraries.load();
        return Chosen.PATH.mode() + " (" + Chosen.PATH.reason() + ")";
    }

    /** {@code TVMFFIFunctionCall} through the chosen path; callers check the return code. */
    static int functionCall(long function, long args, int numArgs, long result) {
        // a static final: the JIT folds the branch away
        return Chosen.USE_JNI ? JniCalls.functionCall(function, args, numArgs, result)
                : Ffi.TVMFFIFunctionCall(function, args, numArgs, result);
    }

    /** Which path and why; immutable. */
    record CallPath(String mode, String reason) {}

    /** Initialized on first use, after TVM's libraries are loaded (every caller holds a TVM handle). */
    private static final class Chosen {
        static final CallPath PATH = choose();
        static final boolean USE_JNI = PATH.mode().equals(JNI);

        private static CallPath choose() {
            TvmLibraries.load();
            if ("false".equalsIgnoreCase(System.getProperty(JNI_PROPERTY, "").trim())) {
                CallPath path = new CallPath(JNA, "-D" + JNI_PROPERTY + "=false");
                log(System.Logger.Level.DEBUG, path);
                return path;
            }
            try {
                CallPath path = new CallPath(JNI, "loaded " + JniCalls.load());
                log(System.Logger.Level.DEBUG, path);
                return path;
            } catch (Exception | LinkageError e) {
                CallPath path = new CallPath(JNA, "JNI fast path unavailable: " + e);
                log(System.Logger.Level.INFO, path);
                return path;
            }
        }

        private static void log(System.Logger.Level level, CallPath path) {
            System.getLogger(FastCall.class.getName()).log(level, "axe4j: TVM calls go through {0} ({1})",
                    path.mode(), path.reason());
        }
    }
}
