package org.axe4j.tvm;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Properties;

/**
 * TVM's runtime libraries from the {@code org.axe4j:tvm-runtime-natives} jar (classifier
 * {@value #PLATFORM}): {@code libtvm_ffi.so} and {@code libtvm_runtime.so} taken from the pinned
 * Python wheels when the jar was built, listed with their SHA-256 in
 * {@value #RESOURCE_DIR}{@code /natives.properties}.
 *
 * <p>The files are extracted once into {@code <cache>/<first 16 hex digits of the listing's hash>/},
 * where {@code <cache>} is {@code -Daxe4j.tvm.nativesCache}, else {@code AXE4J_NATIVES_CACHE}, else
 * {@code <java.io.tmpdir>/axe4j-natives-<user.name>}. Each file is written under a temporary name and
 * moved into place, and a file already there is used only when its hash matches, so concurrent JVMs
 * and damaged caches are safe.
 */
public final class RuntimeNatives {
    public static final String PLATFORM = "linux-x86_64";
    public static final String RESOURCE_DIR = "org/axe4j/tvm/natives/" + PLATFORM;
    public static final String CACHE_PROPERTY = "axe4j.tvm.nativesCache";
    public static final String CACHE_ENV = "AXE4J_NATIVES_CACHE";

    private RuntimeNatives() {}

    /** Whether this JVM runs on the platform the natives jar is built for. */
    static boolean platformMatches() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        return os.startsWith("linux") && (arch.equals("amd64") || arch.equals("x86_64"));
    }

    /**
     * Extracts the libraries when the jar is on the class path and returns their directory; else
     * notes in {@code searched} why not and returns empty.
     *
     * @throws TvmLoadException when the jar is there but its files cannot be extracted or are damaged
     */
    static Optional<Path> extractIfPresent(List<String> searched) {
        ClassLoader loader = RuntimeNatives.class.getClassLoader();
        String listing = RESOURCE_DIR + "/natives.properties";
        if (loader.getResource(listing) == null) {
            searched.add("class path resource " + listing + " (no tvm-runtime-natives jar, classifier " + PLATFORM + ")");
            return Optional.empty();
        }
        if (!platformMatches()) {
            searched.add("class path resource " + listing + " (built for " + PLATFORM + ", this JVM runs on "
                    + System.getProperty("os.name") + "/" + System.getProperty("os.arch") + ")");
            return Optional.empty();
        }
        try {
            Properties files = new Properties();
            byte[] listingBytes;
            try (InputStream in = loader.getResourceAsStream(listing)) {
                listingBytes = in.readAllBytes();
            }
            files.load(new java.io.ByteArrayInputStream(listingBytes));
            String[] names = files.getProperty("files", "").trim().split("\\s*,\\s*");
            if (names.length == 0 || names[0].isEmpty()) {
                throw new TvmLoadException("class path resource " + listing + " lists no files");
            }
            Path dir = cacheRoot().resolve(sha256(listingBytes).substring(0, 16));
            Files.createDirectories(dir);
            for (String name : names) {
                String expected = files.getProperty(name + ".sha256");
                if (expected == null) {
                    throw new TvmLoadException("class path resource " + listing + " has no " + name + ".sha256");
                }
                Path target = dir.resolve(name);
                if (Files.isRegularFile(target) && expected.equals(sha256(Files.readAllBytes(target)))) {
                    continue;
                }
                byte[] content;
                try (InputStream in = loader.getResourceAsStream(RESOURCE_DIR + "/" + name)) {
                    if (in == null) {
                        throw new TvmLoadException("the tvm-runtime-natives jar lists " + name + " but does not hold "
                                + RESOURCE_DIR + "/" + name);
                    }
                    content = in.readAllBytes();
                }
                String actual = sha256(content);
                if (!expected.equals(actual)) {
                    throw new TvmLoadException("the tvm-runtime-natives jar's " + name + " has SHA-256 " + actual
                            + ", its listing says " + expected);
                }
                Path temporary = Files.createTempFile(dir, name, ".part");
                Files.write(temporary, content);
                try {
                    Files.move(temporary, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                } catch (AtomicMoveNotSupportedException e) {
                    Files.move(temporary, target, StandardCopyOption.REPLACE_EXISTING);
                }
            }
            searched.add("class path resource " + listing + " (tvm " + files.getProperty("tvm.version", "?")
                    + ", tvm-ffi " + files.getProperty("tvm_ffi.version", "?") + ", extracted to " + dir + ")");
            return Optional.of(dir);
        } catch (IOException e) {
            throw new TvmLoadException("cannot extract TVM's runtime libraries from the tvm-runtime-natives jar into "
                    + cacheRoot() + ": " + e.getMessage() + " (set -D" + CACHE_PROPERTY + " or " + CACHE_ENV
                    + " to a writable directory)", e);
        }
    }

    static Path cacheRoot() {
        String configured = System.getProperty(CACHE_PROPERTY);
        if (configured == null || configured.isBlank()) {
            configured = System.getenv(CACHE_ENV);
        }
        if (configured != null && !configured.isBlank()) {
            return Paths.get(configured).toAbsolutePath();
        }
        return Paths.get(System.getProperty("java.io.tmpdir"), "axe4j-natives-" + System.getProperty("user.name", "user"));
    }

    static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK has no SHA-256", e);
        }
    }
}
