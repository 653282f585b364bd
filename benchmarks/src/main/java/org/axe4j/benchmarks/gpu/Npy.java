package org.axe4j.benchmarks.gpu;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/**
 * A numpy array as {@code np.save} writes it: {@code \x93NUMPY}, version, header length, a Python
 * dict {@code {'descr': '<f2', 'fortran_order': False, 'shape': (128, 64), }}, then the elements.
 * {@code .npz} files are zips of such arrays (deflated by {@code savez_compressed}).
 */
public record Npy(String descr, long[] shape, byte[] data) {
    private static final Pattern DESCR = Pattern.compile("'descr':\\s*'([^']+)'");
    private static final Pattern SHAPE = Pattern.compile("'shape':\\s*\\(([^)]*)\\)");

    /** Bytes per element, from the descr ({@code <f2} is 2). */
    public int itemSize() {
        return Integer.parseInt(descr.substring(2));
    }

    public long elements() {
        long n = 1;
        for (long d : shape) {
            n *= d;
        }
        return n;
    }

    public ByteBuffer buffer() {
        return ByteBuffer.wrap(data).order(ByteOrder.LITTLE_ENDIAN);
    }

    private record Header(String descr, long[] shape, int dataStart) {}

    private static Header header(byte[] file, String name) {
        if (file.length < 12 || file[0] != (byte) 0x93
                || !new String(file, 1, 5, StandardCharsets.US_ASCII).equals("NUMPY")) {
            throw new IllegalArgumentException(name + " is not a .npy array");
        }
        int major = file[6];
        ByteBuffer b = ByteBuffer.wrap(file).order(ByteOrder.LITTLE_ENDIAN);
        int headerLength = major == 1 ? Short.toUnsignedInt(b.getShort(8)) : b.getInt(8);
        int start = major == 1 ? 10 : 12;
        if (start + headerLength > file.length) {
            throw new IllegalArgumentException(name + ": truncated .npy header");
        }
        String text = new String(file, start, headerLength, StandardCharsets.ISO_8859_1);
        if (text.contains("'fortran_order': True")) {
            throw new IllegalArgumentException(name + ": Fortran-ordered arrays are not read");
        }
        Matcher d = DESCR.matcher(text);
        Matcher s = SHAPE.matcher(text);
        if (!d.find() || !s.find()) {
            throw new IllegalArgumentException(name + ": header without descr or shape: " + text);
        }
        List<Long> dims = new ArrayList<>();
        for (String part : s.group(1).split(",")) {
            if (!part.isBlank()) {
                dims.add(Long.parseLong(part.trim()));
            }
        }
        return new Header(d.group(1), dims.stream().mapToLong(Long::longValue).toArray(), start + headerLength);
    }

    public static Npy parse(byte[] file, String name) {
        Header h = header(file, name);
        byte[] data = java.util.Arrays.copyOfRange(file, h.dataStart(), file.length);
        Npy array = new Npy(h.descr(), h.shape(), data);
        if ((long) data.length != array.elements() * array.itemSize()) {
            throw new IllegalArgumentException(name + ": " + data.length + " bytes for " + h.descr()
                    + java.util.Arrays.toString(h.shape()));
        }
        return array;
    }

    public static Npy read(Path file) throws IOException {
        return parse(Files.readAllBytes(file), file.toString());
    }

    /** A large {@code .npy} file's elements, memory-mapped (no copy on the Java heap), and its shape. */
    public record Mapped(String descr, long[] shape, ByteBuffer data) {}

    public static Mapped map(Path file) throws IOException {
        try (java.nio.channels.FileChannel channel = java.nio.channels.FileChannel.open(file)) {
            ByteBuffer head = channel.map(java.nio.channels.FileChannel.MapMode.READ_ONLY, 0,
                    Math.min(channel.size(), 4096)).order(ByteOrder.LITTLE_ENDIAN);
            byte[] prefix = new byte[head.remaining()];
            head.get(prefix);
            Header h = header(prefix, file.toString());
            ByteBuffer data = channel.map(java.nio.channels.FileChannel.MapMode.READ_ONLY, h.dataStart(),
                    channel.size() - h.dataStart()).order(ByteOrder.LITTLE_ENDIAN);
            return new Mapped(h.descr(), h.shape(), data);
        }
    }

    /** Every array of an {@code .npz}, by name ({@code a0}, {@code e0}, ...). */
    public static Map<String, Npy> readNpz(Path file) throws IOException {
        Map<String, Npy> arrays = new LinkedHashMap<>();
        try (ZipFile zip = new ZipFile(file.toFile())) {
            for (ZipEntry entry : java.util.Collections.list(zip.entries())) {
                try (InputStream in = zip.getInputStream(entry)) {
                    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
                    in.transferTo(bytes);
                    String name = entry.getName().replaceFirst("\\.npy$", "");
                    arrays.put(name, parse(bytes.toByteArray(), file + ":" + entry.getName()));
                }
            }
        }
        return arrays;
    }
}
