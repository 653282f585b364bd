package org.axe4j.tvm.cuda;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An nvcc fatbin: what {@code cuModuleLoadData} takes. It opens with the magic {@code 0xBA55ED50}
 * (little-endian bytes {@code 50 ED 55 BA}); its cubins name their arch ({@code sm_90a}) in the
 * entry headers and ELF notes, which is how {@link #arches()} reads it.
 */
public record Fatbin(byte[] bytes) {
    static final int MAGIC = 0xBA55ED50;
    private static final Pattern ARCH = Pattern.compile("sm_[0-9]+a?");

    public Fatbin {
        if (bytes == null || bytes.length < 16) {
            throw new IllegalArgumentException("Fatbin: " + (bytes == null ? "null" : bytes.length + " bytes")
                    + " is too short to be a fatbin");
        }
        if (ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).getInt(0) != MAGIC) {
            throw new IllegalArgumentException("Fatbin: the bytes do not start with the fatbin magic 50 ed 55 ba");
        }
        bytes = bytes.clone();
    }

    @Override
    public byte[] bytes() {
        return bytes.clone();
    }

    /** The archs its code is for, e.g. {@code [sm_90a]}. */
    public Set<String> arches() {
        Set<String> found = new TreeSet<>();
        Matcher m = ARCH.matcher(new String(bytes, StandardCharsets.ISO_8859_1));
        while (m.find()) {
            found.add(m.group());
        }
        return found;
    }
}
