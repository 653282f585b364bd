package org.axe4j.serve;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;
import org.axe4j.tvm.DataType;
import org.junit.jupiter.api.Test;

/**
 * The streaming JSON reader against Gson's tree reader (the reference, {@link ModuleService#parseJson} then
 * {@link Tensors#fill}): on every body it takes, the bytes it writes are the tree reader's; every body the tree
 * reader refuses, it refuses too.
 */
class JsonInputsTest {
    private static final Manifest.Function F = new Manifest.Function("f", List.of(
            new Manifest.Argument(0, "A", new long[] {3, 4}, DataType.FLOAT32, "input"),
            new Manifest.Argument(1, "B", new long[] {5}, DataType.INT32, "input"),
            new Manifest.Argument(2, "C", new long[] {2, 1, 2}, DataType.parse("float64"), "input"),
            new Manifest.Argument(3, "flag", new long[] {}, DataType.BOOL8, "input"),
            new Manifest.Argument(4, "D", new long[] {3, 4}, DataType.FLOAT32, "output")));

    /** Buffers for F's arguments, as a worker's. */
    private static Runner buffers() {
        ByteBuffer[] b = F.args().stream().map(a -> ByteBuffer.allocateDirect((int) a.bytes())
                .order(ByteOrder.nativeOrder())).toArray(ByteBuffer[]::new);
        return new Runner() {
            @Override
            public ByteBuffer buffer(int index) {
                return b[index];
            }

            @Override
            public void run() {}

            @Override
            public void close() {}
        };
    }

    private static byte[] bytes(Runner r) {
        ByteBuffer all = ByteBuffer.allocate(1024);
        for (Manifest.Argument a : F.inputs()) {
            ByteBuffer b = r.buffer(a.index()).duplicate();
            b.position(0);
            all.put(b);
        }
        return java.util.Arrays.copyOf(all.array(), all.position());
    }

    /** The tree reader's bytes, or null where it refuses the body. */
    private static byte[] reference(byte[] body) {
        Runner r = buffers();
        try {
            ModuleService.fillJson(ModuleService.parseJson(body, F), F, r);
            return bytes(r);
        } catch (HttpError e) {
            return null;
        }
    }

    private static String number(Random r, boolean integer) {
        if (integer) {
            return Integer.toString(r.nextInt(2001) - 1000);
        }
        return switch (r.nextInt(4)) {
            case 0 -> Double.toString(r.nextGaussian());
            case 1 -> String.format("%.17g", (double) (float) r.nextGaussian());
            case 2 -> Integer.toString(r.nextInt(100) - 50);
            default -> (r.nextBoolean() ? "-" : "") + r.nextInt(1000) + "e" + (r.nextInt(60) - 30);
        };
    }

    private static String space(Random r) {
        return r.nextInt(3) == 0 ? " \n\t\r".substring(0, 1 + r.nextInt(4)) : "";
    }

    private static void nested(Random r, long[] shape, int depth, boolean integer, StringBuilder out) {
        if (depth == shape.length) {
            out.append(space(r)).append(number(r, integer)).append(space(r));
            return;
        }
        out.append('[');
        for (int i = 0; i < shape[depth]; i++) {
            out.append(i > 0 ? "," : "");
            nested(r, shape, depth + 1, integer, out);
        }
        out.append(space(r)).append(']');
    }

    private static String validBody(Random r) {
        StringBuilder s = new StringBuilder(space(r) + "{" + space(r) + "\"inputs\"" + space(r) + ":" + space(r) + "{");
        List<Manifest.Argument> order = new java.util.ArrayList<>(F.inputs());
        java.util.Collections.shuffle(order, r);
        for (int i = 0; i < order.size(); i++) {
            Manifest.Argument a = order.get(i);
            s.append(i > 0 ? "," : "").append(space(r)).append('"').append(a.name()).append("\":").append(space(r));
            if (a.dtype().code() == DataType.BOOL) {
                s.append(r.nextBoolean());
            } else {
                nested(r, a.shape(), 0, a.dtype().code() == DataType.INT, s);
            }
        }
        return s.append("}").append(space(r)).append("}").append(space(r)).toString();
    }

    @Test
    void validBodiesAreReadAsTheTreeReaderReadsThem() {
        Random r = new Random(53);
        for (int i = 0; i < 3000; i++) {
            byte[] body = validBody(r).getBytes(StandardCharsets.UTF_8);
            Runner fast = buffers();
            assertTrue(JsonInputs.read(body, body.length, F, fast), new String(body, StandardCharsets.UTF_8));
            assertArrayEquals(reference(body), bytes(fast), new String(body, StandardCharsets.UTF_8));
        }
    }

    @Test
    void damagedBodiesAreRefusedWhereTheTreeReaderRefusesThemAndReadAlikeElsewhere() {
        Random r = new Random(54);
        String alphabet = "[]{},:\" -.e0123456789xtrue";
        int taken = 0;
        for (int i = 0; i < 5_000; i++) {
            StringBuilder s = new StringBuilder(validBody(r));
            for (int edits = 1 + r.nextInt(2); edits > 0; edits--) {
                int at = r.nextInt(s.length());
                switch (r.nextInt(3)) {
                    case 0 -> s.deleteCharAt(at);
                    case 1 -> s.insert(at, alphabet.charAt(r.nextInt(alphabet.length())));
                    default -> s.setCharAt(at, alphabet.charAt(r.nextInt(alphabet.length())));
                }
            }
            byte[] body = s.toString().getBytes(StandardCharsets.UTF_8);
            byte[] expected = reference(body);
            Runner fast = buffers();
            boolean read = JsonInputs.read(body, body.length, F, fast);
            if (read) {
                taken++;
                assertArrayEquals(expected, bytes(fast), s + ": read, but not as the tree reader reads it");
            }
            if (expected == null) {
                assertFalse(read, s + ": the tree reader refuses it");
            }
        }
        assertTrue(taken > 100, "only " + taken + " damaged bodies still valid: the comparison checks little");
    }
}
