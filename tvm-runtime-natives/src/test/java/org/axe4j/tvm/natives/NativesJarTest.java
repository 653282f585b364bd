package org.axe4j.tvm.natives;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/**
 * The jar's content is the pinned wheels' files, unchanged: each library's SHA-256 equals the one
 * in {@code natives.properties} and the one its wheel's {@code RECORD} lists, and the wheels'
 * license files travel with them.
 */
class NativesJarTest {
    private static final Path RESOURCES = Path.of(System.getProperty("natives.resources"));
    private static final Path LICENSES = Path.of(System.getProperty("natives.licenses"));
    private static final Path SITE = Path.of(System.getProperty("axe4j.site-packages"));

    private static Properties listing() throws IOException {
        Properties p = new Properties();
        try (Reader in = Files.newBufferedReader(RESOURCES.resolve("natives.properties"))) {
            p.load(in);
        }
        return p;
    }

    private static byte[] sha256(Path file) throws Exception {
        return MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file));
    }

    /** The RECORD line of {@code relative}: {@code path,sha256=<urlsafe base64, no padding>,size}. */
    private static String recordHash(String distInfo, String relative) throws IOException {
        for (String line : Files.readAllLines(SITE.resolve(distInfo).resolve("RECORD"))) {
            String[] parts = line.split(",");
            if (parts[0].equals(relative)) {
                return parts[1].substring("sha256=".length());
            }
        }
        throw new AssertionError(relative + " is not in " + distInfo + "/RECORD");
    }

    @Test
    void librariesAreTheWheelsFilesAsListed() throws Exception {
        Properties listing = listing();
        assertEquals(List.of("libtvm_ffi.so", "libtvm_runtime.so", "libtvm_runtime_cuda.so"),
                List.of(listing.getProperty("files").split(",")));
        String[][] origins = {
            {"libtvm_ffi.so", "apache_tvm_ffi-" + listing.getProperty("tvm_ffi.version") + ".dist-info", "tvm_ffi/lib/libtvm_ffi.so"},
            {"libtvm_runtime.so", "apache_tvm-" + listing.getProperty("tvm.version") + ".dist-info", "tvm/lib/libtvm_runtime.so"},
            {"libtvm_runtime_cuda.so", "apache_tvm-" + listing.getProperty("tvm.version") + ".dist-info",
                "tvm/lib/libtvm_runtime_cuda.so"},
        };
        for (String[] origin : origins) {
            byte[] digest = sha256(RESOURCES.resolve(origin[0]));
            assertEquals(listing.getProperty(origin[0] + ".sha256"), HexFormat.of().formatHex(digest),
                    origin[0] + ": natives.properties disagrees with the file copied from the wheel");
            assertEquals(recordHash(origin[1], origin[2]), Base64.getUrlEncoder().withoutPadding().encodeToString(digest),
                    origin[0] + ": the copy differs from the file the wheel's RECORD lists");
        }
    }

    @Test
    void theWheelsLicenseFilesAreIncluded() throws Exception {
        for (String file : List.of("apache-tvm/LICENSE", "apache-tvm-ffi/LICENSE", "apache-tvm-ffi/NOTICE")) {
            Path path = LICENSES.resolve(file);
            assertTrue(Files.isRegularFile(path), path.toString());
        }
        assertTrue(Files.readString(LICENSES.resolve("apache-tvm/LICENSE")).contains("Apache License"));
    }
}
