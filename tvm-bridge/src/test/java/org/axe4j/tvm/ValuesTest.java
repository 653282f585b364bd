package org.axe4j.tvm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Every value kind through C++ ({@code testing.echo}, container globals) and through a Java global. */
class ValuesTest {
    /** The two echo paths: C++ {@code testing.echo} and Java {@code axe4j.testing.echo} called through TVM. */
    private static final List<String> ECHOES = List.of("testing.echo", "axe4j.testing.echo");

    @BeforeAll
    static void load() {
        TestSupport.loadWithCppTestingGlobals();
        Axe4jGlobals.install();
    }

    private static Object echo(String via, Object value) {
        return Tvm.call(via, value);
    }

    @Test
    void scalars() {
        for (String via : ECHOES) {
            assertNull(echo(via, null));
            for (long v : new long[] {0, 1, -1, 42, Long.MAX_VALUE, Long.MIN_VALUE}) {
                assertEquals(v, echo(via, v), via);
            }
            assertEquals(7L, echo(via, 7), via);
            assertEquals(true, echo(via, true));
            assertEquals(false, echo(via, false));
            for (double v : new double[] {0.0, -0.0, 1.5, Math.PI, Double.MAX_VALUE, Double.MIN_VALUE,
                    Double.POSITIVE_INFINITY}) {
                assertEquals(Double.doubleToRawLongBits(v), Double.doubleToRawLongBits((Double) echo(via, v)), via);
            }
            assertTrue(Double.isNaN((Double) echo(via, Double.NaN)));
            assertEquals(2.5, echo(via, 2.5f));
        }
    }

    @Test
    void stringsOfEveryLengthAndContent() {
        List<String> samples = new ArrayList<>(List.of("", "a", "1234567", "12345678", "héllo", "日本語のテキスト",
                "emoji \uD83D\uDE00 ok", "nul\0inside", "\0", "x".repeat(5000)));
        Random random = new Random(7);
        for (int i = 0; i < 200; i++) {
            StringBuilder s = new StringBuilder();
            int length = random.nextInt(40);
            for (int j = 0; j < length; j++) {
                s.appendCodePoint(random.nextInt(4) == 0 ? 0x4e00 + random.nextInt(2000) : random.nextInt(128));
            }
            samples.add(s.toString());
        }
        for (String via : ECHOES) {
            for (String s : samples) {
                assertEquals(s, echo(via, s), via + " " + s.length());
            }
        }
        // C++ sees the same bytes: ffi.String builds a Str object and returns it
        for (String s : samples) {
            assertEquals(s, Tvm.call("ffi.String", s));
        }
    }

    @Test
    void bytesOfEveryLengthAndContent() {
        List<byte[]> samples = new ArrayList<>();
        samples.add(new byte[0]);
        samples.add(new byte[] {0});
        samples.add(new byte[] {0, 0, 0, 0, 0, 0, 0});
        samples.add(new byte[] {1, 0, 2, 0, 3, 0, 4, 0});
        byte[] all = new byte[256];
        for (int i = 0; i < 256; i++) {
            all[i] = (byte) i;
        }
        samples.add(all);
        Random random = new Random(11);
        for (int i = 0; i < 100; i++) {
            byte[] b = new byte[random.nextInt(30)];
            random.nextBytes(b);
            samples.add(b);
        }
        for (String via : ECHOES) {
            for (byte[] b : samples) {
                assertArrayEquals(b, (byte[]) echo(via, b), via + " " + b.length);
            }
        }
        for (byte[] b : samples) {
            assertArrayEquals(b, (byte[]) Tvm.call("ffi.Bytes", b));
        }
    }

    @Test
    void dataTypesAndDevices() {
        for (String via : ECHOES) {
            for (String text : List.of("float32", "float16", "int8", "uint8", "int64", "bool", "float32x4",
                    "bfloat16", "handle")) {
                DataType t = DataType.parse(text);
                assertEquals(t, echo(via, t), via + " " + text);
            }
            assertEquals(Device.cpu(), echo(via, Device.cpu()));
            assertEquals(Device.cuda(3), echo(via, Device.cuda(3)));
        }
    }

    @Test
    void dataTypeTextAgreesWithTvm() {
        for (String text : List.of("float32", "float64", "float16", "int8", "int16", "int32", "int64", "uint8",
                "uint1", "bool", "float32x4", "int8x16", "bfloat16", "handle")) {
            DataType java = DataType.parse(text);
            assertEquals(Tvm.parseDataType(text), java, text);
            assertEquals(text, java.toString());
            assertEquals(text, Tvm.formatDataType(java), text);
        }
        assertThrows(IllegalArgumentException.class, () -> DataType.parse("floaty"));
        assertThrows(TvmException.class, () -> Tvm.parseDataType("floaty"));
    }

    @Test
    void arraysBothWays() {
        List<Object> mixed = List.of(1L, "two", 3.0, true, List.of(4L, "five"), Map.of("k", 6L));
        for (String via : ECHOES) {
            assertEquals(mixed, echo(via, mixed), via);
            assertEquals(List.of(), echo(via, List.of()), via);
        }
        assertEquals(List.of(1L, "b", 2.5, false), Tvm.call("ffi.Array", 1L, "b", 2.5, false));
        List<Long> big = new ArrayList<>();
        for (long i = 0; i < 1000; i++) {
            big.add(i * i);
        }
        assertEquals(1000L, Tvm.call("ffi.ArraySize", big));
        assertEquals(999L * 999L, Tvm.call("ffi.ArrayGetItem", big, 999L));
        assertEquals(true, Tvm.call("ffi.ArrayContains", List.of("x", "y"), "y"));
        assertEquals(false, Tvm.call("ffi.ArrayContains", List.of("x", "y"), "z"));
        assertEquals(List.of(1L, 2L), Tvm.call("ffi.List", 1L, 2L));
    }

    @Test
    void mapsBothWays() {
        Map<Object, Object> map = new LinkedHashMap<>();
        map.put("alpha", 1L);
        map.put("beta", List.of(2L, 3L));
        map.put(4L, "four");
        map.put("a-much-longer-key-than-seven", 2.5);
        for (String via : ECHOES) {
            assertEquals(map, echo(via, map), via);
        }
        assertEquals(4L, Tvm.call("ffi.MapSize", map));
        assertEquals("four", Tvm.call("ffi.MapGetItem", map, 4L));
        assertEquals(List.of(2L, 3L), Tvm.call("ffi.MapGetItem", map, "beta"));
        assertEquals(1L, Tvm.call("ffi.MapCount", map, "alpha"));
        assertEquals(0L, Tvm.call("ffi.MapCount", map, "gamma"));
        Map<Object, Object> fromTvm = Tvm.cast(Tvm.call("ffi.Map", "x", 1L, "y", 2L));
        assertEquals(Map.of("x", 1L, "y", 2L), fromTvm);
        assertEquals(Map.of("d", 1L), Tvm.call("ffi.Dict", "d", 1L));
    }

    @Test
    void shapes() {
        for (String via : ECHOES) {
            try (TvmShape shape = (TvmShape) echo(via, new long[] {2, 3, 4})) {
                assertArrayEquals(new long[] {2, 3, 4}, shape.dims());
                assertEquals("ffi.Shape", shape.typeKey());
                assertEquals(TypeIndex.SHAPE, shape.typeIndex());
            }
        }
        try (TvmShape shape = TvmShape.of(); TvmShape five = (TvmShape) Tvm.call("ffi.Shape", 5L, 6L)) {
            assertArrayEquals(new long[0], shape.dims());
            assertArrayEquals(new long[] {5, 6}, five.dims());
        }
    }

    @Test
    void objectsKeepTheirIdentity() {
        for (String via : ECHOES) {
            try (TvmObject range = (TvmObject) Tvm.call("ir.Range", 0L, 8L, null);
                 TvmObject back = (TvmObject) echo(via, range)) {
                assertTrue(range.sameObject(back));
                assertEquals("ir.Range", back.typeKey());
            }
        }
    }

    @Test
    void functionsBothWays() {
        for (String via : ECHOES) {
            PackedFunction twice = args -> (Long) args[0] * 2;
            try (TvmFunction f = (TvmFunction) echo(via, twice)) {
                assertEquals(42L, f.call(21L));
            }
        }
        try (TvmFunction nop = Tvm.function("testing.nop")) {
            assertEquals("ffi.Function", nop.typeKey());
            assertNull(nop.call(1L, "x"));
        }
        // C++ calls a Java function: testing.apply(f, *args) returns f(*args)
        assertEquals("ab", Tvm.call("testing.apply", (PackedFunction) args -> "" + args[0] + args[1], "a", "b"));
    }

    @Test
    void unsupportedJavaValuesAreRejectedClearly() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Tvm.call("testing.echo", new StringBuilder("x")));
        assertTrue(e.getMessage().contains("java.lang.StringBuilder"), e.getMessage());
    }

    @Test
    void typeKeysSeenByJava() {
        Object kinds = Tvm.call("axe4j.testing.type_keys", null, 1L, true, 1.5, "s", "long string value",
                new byte[] {1}, DataType.FLOAT32, Device.cpu(), List.of(1L), Map.of("a", 1L), new long[] {1});
        assertEquals(List.of("None", "Int", "Bool", "Float", "String", "String", "Bytes", "DataType", "Device",
                "Array", "Map", "ffi.Shape"), kinds);
        assertInstanceOf(List.class, Tvm.call("axe4j.testing.echo_all", 1L, "a"));
        assertEquals(List.of(1L, "a"), Tvm.call("axe4j.testing.echo_all", 1L, "a"));
        assertEquals(Axe4jGlobals.VERSION, Tvm.call("axe4j.version"));
        assertEquals("héllo wörld", new String(((String) Tvm.call("axe4j.testing.call_global", "ffi.String",
                "héllo wörld")).getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8));
    }
}
