package org.axe4j.tvm;

import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * The native methods of {@code libaxe4j_jni.so} ({@code src/main/c/axe4j_jni.c}), built into the
 * jar under {@value #RESOURCE}. Only {@link FastCall} uses them, after {@link #load} succeeded.
 */
final class JniCalls {
    static final String RESOURCE = "native/" + RuntimeNatives.PLATFORM + "/libaxe4j_jni.so";

    private JniCalls() {}

    /** Hands the library the address of {@code TVMFFIFunctionCall}; false when it is null. */
    static native boolean bind(long functionCallAddress);

    /** {@code TVMFFIFunctionCall(function, args, numArgs, result)}: one plain JNI call. */
    static native int functionCall(long function, long args, int numArgs, long result);

    /** Whether this class path carries the library for this platform. */
    static boolean bundled() {
        return RuntimeNatives.platformMatches() && JniCalls.class.getClassLoader().getResource(RESOURCE) != null;
    }

    /**
     * Loads the library (straight from disk for an exploded class path, else from a temporary copy
     * of the jar entry) and binds it to {@code libtvm_ffi}'s {@code TVMFFIFunctionCall}.
     *
     * @return where the library was loaded from
     * @throws IOException when the jar entry cannot be copied out
     * @throws IllegalStateException when this platform or class path has no library for it
     * @throws LinkageError when the library does not load
     */
    static Path load() throws IOException {
        if (!RuntimeNatives.platformMatches()) {
            throw new IllegalStateException("built for " + RuntimeNatives.PLATFORM + " only, this JVM runs on "
                    + System.getProperty("os.name") + "/" + System.getProperty("os.arch"));
        }
        URL url = JniCalls.class.getClassLoader().getResource(RESOURCE);
        if (url == null) {
            throw new IllegalStateException("no " + RESOURCE + " on the class path (built without a C compiler?)");
        }
        Path library = onDisk(url);
        TvmLibraries.systemLoadGuarded(library);
        if (!bind(TvmLibraries.ffiSymbolAddress("TVMFFIFunctionCall"))) {
            throw new IllegalStateException("libtvm_ffi has no TVMFFIFunctionCall");
        }
        return library;
    }

    private static Path onDisk(URL url) throws IOException {
        if ("file".equals(url.getProtocol())) {
            try {
                return Path.of(url.toURI());
            } catch (URISyntaxException e) {
                throw new IOException("bad library URL " + url, e);
            }
        }
        // System.load needs a file: copy the jar entry out once per JVM
        Path copy = Files.createTempFile("axe4j_jni", ".so");
        copy.toFile().deleteOnExit();
        try (InputStream in = url.openStream()) {
            Files.copy(in, copy, StandardCopyOption.REPLACE_EXISTING);
        }
        return copy;
    }
}
