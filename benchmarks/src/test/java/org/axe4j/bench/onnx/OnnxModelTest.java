package org.axe4j.bench.onnx;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The ONNX writer against the wire format: the encodings protobuf's documentation works by hand (150 as a varint
 * field 1 is {@code 08 96 01}, "testing" as field 2 is {@code 12 07 74 65 73 74 69 6e 67}), and each model read back
 * by an independent reader of the wire format and checked field by field against onnx.proto's numbering.
 */
class OnnxModelTest {
    private static byte[] bytes(int... values) {
        byte[] b = new byte[values.length];
        for (int i = 0; i < values.length; i++) {
            b[i] = (byte) values[i];
        }
        return b;
    }

    @Test
    void primitivesEncodeAsProtobufsDocumentationWorksThem() {
        assertArrayEquals(bytes(0x08, 0x96, 0x01), new Protobuf().varint(1, 150).toBytes());
        assertArrayEquals(bytes(0x12, 0x07, 0x74, 0x65, 0x73, 0x74, 0x69, 0x6e, 0x67),
                new Protobuf().string(2, "testing").toBytes());
        // a nested message: field 3 holding the first example
        assertArrayEquals(bytes(0x1a, 0x03, 0x08, 0x96, 0x01),
                new Protobuf().message(3, new Protobuf().varint(1, 150)).toBytes());
        // int64 -1: two's complement, ten bytes; 1.0f: 0x3f800000 little-endian under wire type 5
        assertArrayEquals(bytes(0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01),
                new Protobuf().varint(3, -1).toBytes());
        assertArrayEquals(bytes(0x15, 0x00, 0x00, 0x80, 0x3f), new Protobuf().float32(2, 1.0f).toBytes());
        // field 20 needs a two-byte key: (20 << 3) | 0 = 160
        assertArrayEquals(bytes(0xa0, 0x01, 0x02), new Protobuf().varint(20, 2).toBytes());
        assertThrows(IllegalArgumentException.class, () -> new Protobuf().varint(0, 1));
    }

    /** One field read back: number, wire type, and a varint, the 4 raw bytes, or the delimited bytes. */
    private record Field(int number, int type, long varint, byte[] data) {
        List<Field> message() {
            return parse(data);
        }

        String text() {
            return new String(data, StandardCharsets.UTF_8);
        }
    }

    private static long[] readVarint(byte[] b, int at) {
        long value = 0;
        int shift = 0;
        while (true) {
            int x = b[at++] & 0xff;
            value |= (long) (x & 0x7f) << shift;
            shift += 7;
            if ((x & 0x80) == 0) {
                return new long[] {value, at};
            }
        }
    }

    private static List<Field> parse(byte[] b) {
        List<Field> fields = new ArrayList<>();
        int at = 0;
        while (at < b.length) {
            long[] key = readVarint(b, at);
            at = (int) key[1];
            int number = (int) (key[0] >>> 3);
            int type = (int) (key[0] & 7);
            if (type == 0) {
                long[] v = readVarint(b, at);
                at = (int) v[1];
                fields.add(new Field(number, type, v[0], null));
            } else if (type == 5) {
                fields.add(new Field(number, type, 0, java.util.Arrays.copyOfRange(b, at, at + 4)));
                at += 4;
            } else if (type == 2) {
                long[] n = readVarint(b, at);
                at = (int) n[1];
                fields.add(new Field(number, type, 0, java.util.Arrays.copyOfRange(b, at, at + (int) n[0])));
                at += (int) n[0];
            } else {
                throw new AssertionError("unexpected wire type " + type);
            }
        }
        assertEquals(b.length, at, "a field ran past the end of its message");
        return fields;
    }

    private static List<Field> all(List<Field> fields, int number) {
        return fields.stream().filter(f -> f.number() == number).toList();
    }

    private static Field one(List<Field> fields, int number) {
        List<Field> found = all(fields, number);
        assertEquals(1, found.size(), "field " + number);
        return found.get(0);
    }

    /** A ValueInfoProto's name and dims (type.tensor_type.shape.dim[].dim_value), elem_type checked FLOAT. */
    private static String valueInfo(Field f) {
        List<Field> v = f.message();
        List<Field> tensorType = one(one(v, 2).message(), 1).message();
        assertEquals(1, one(tensorType, 1).varint(), "elem_type FLOAT");
        List<Long> dims = all(one(tensorType, 2).message(), 1).stream()
                .map(d -> one(d.message(), 1).varint()).toList();
        return one(v, 1).text() + dims;
    }

    @Test
    void layerNormModelReadsBackFieldByField() {
        List<Field> model = parse(OnnxModel.layerNorm(64, 1000, 1e-5f).toBytes());
        assertEquals(9, one(model, 1).varint(), "ir_version");
        List<Field> opset = one(model, 8).message();
        assertEquals("", one(opset, 1).text());
        assertEquals(20, one(opset, 2).varint());
        List<Field> graph = one(model, 7).message();
        assertEquals("layernorm", one(graph, 2).text());
        assertEquals(List.of("X[64, 1000]", "gamma[1000]", "beta[1000]"),
                all(graph, 11).stream().map(OnnxModelTest::valueInfo).toList());
        assertEquals(List.of("Y[64, 1000]"), all(graph, 12).stream().map(OnnxModelTest::valueInfo).toList());
        List<Field> node = one(graph, 1).message();
        assertEquals(List.of("X", "gamma", "beta"), all(node, 1).stream().map(Field::text).toList());
        assertEquals("Y", one(node, 2).text());
        assertEquals("LayerNormalization", one(node, 4).text());
        List<Field> attributes = all(node, 5);
        assertEquals(2, attributes.size());
        for (Field a : attributes) {
            List<Field> attr = a.message();
            String name = one(attr, 1).text();
            if (name.equals("axis")) {
                assertEquals(-1L, one(attr, 3).varint());
                assertEquals(2, one(attr, 20).varint(), "type INT");
            } else {
                assertEquals("epsilon", name);
                int bits = java.nio.ByteBuffer.wrap(one(attr, 2).data()).order(java.nio.ByteOrder.LITTLE_ENDIAN)
                        .getInt();
                assertEquals(1e-5f, Float.intBitsToFloat(bits));
                assertEquals(1, one(attr, 20).varint(), "type FLOAT");
            }
        }
    }

    @Test
    void geluModelChainsItsNodesWithAStringAttribute() {
        List<Field> graph = one(parse(OnnxModel.matMulBiasGelu(512).toBytes()), 7).message();
        List<Field> nodes = all(graph, 1);
        assertEquals(List.of("MatMul", "Add", "Gelu"),
                nodes.stream().map(n -> one(n.message(), 4).text()).toList());
        assertEquals(List.of("AB", "bias"), all(nodes.get(1).message(), 1).stream().map(Field::text).toList());
        List<Field> approximate = one(nodes.get(2).message(), 5).message();
        assertEquals("approximate", one(approximate, 1).text());
        assertEquals("tanh", one(approximate, 4).text());
        assertEquals(3, one(approximate, 20).varint(), "type STRING");
        assertEquals(List.of("A[512, 512]", "B[512, 512]", "bias[512]"),
                all(graph, 11).stream().map(OnnxModelTest::valueInfo).toList());
    }

    @Test
    void weightsBecomeInitializersWithTheirFloatsLittleEndian() {
        float[] b = new float[] {1.0f, -2.0f, 0.5f, 3.0f};
        OnnxModel model = OnnxModel.matMul(2).withConstants(Map.of("B", b));
        List<Field> graph = one(parse(model.toBytes()), 7).message();
        assertEquals(List.of("A[2, 2]"), all(graph, 11).stream().map(OnnxModelTest::valueInfo).toList());
        List<Field> tensor = one(graph, 5).message();
        assertEquals(List.of(2L, 2L), all(tensor, 1).stream().map(Field::varint).toList());
        assertEquals(1, one(tensor, 2).varint(), "data_type FLOAT");
        assertEquals("B", one(tensor, 8).text());
        // 1.0f = 0x3f800000, -2.0f = 0xc0000000, 0.5f = 0x3f000000, 3.0f = 0x40400000, each low byte first
        assertArrayEquals(bytes(0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0, 0, 0, 0, 0x3f, 0, 0, 0x40, 0x40), one(tensor, 9).data());
        b[0] = 9f;   // the model keeps its own copy
        assertEquals(1.0f, model.graph().constants().get(0).values()[0]);

        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> OnnxModel.matMul(2).withConstants(Map.of("W", b)));
        assertTrue(e.getMessage().contains("has no input W"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> OnnxModel.matMul(2).withConstants(Map.of("B", new float[3])));
        assertTrue(e.getMessage().contains("constant B: 3 values for dims [2, 2] (4)"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> new OnnxModel.Graph("g", List.of(),
                List.of(new OnnxModel.Value("X", 1)), List.of(new OnnxModel.Value("X", 1)),
                List.of(new OnnxModel.Constant("X", new long[] {1}, new float[1]))));
        assertTrue(e.getMessage().contains("X is defined twice"), e.getMessage());
    }

    @Test
    void aGraphThatReadsAnUndefinedValueIsRefusedByName() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new OnnxModel.Graph("g",
                List.of(new OnnxModel.Node("Relu", List.of("Z"), "Y")), List.of(new OnnxModel.Value("X", 2)),
                List.of(new OnnxModel.Value("Y", 2))));
        assertTrue(e.getMessage().contains("node Relu reads Z"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> new OnnxModel.Graph("g", List.of(),
                List.of(new OnnxModel.Value("X", 2)), List.of(new OnnxModel.Value("Y", 2))));
        assertTrue(e.getMessage().contains("output Y"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> new OnnxModel.Value("X", 4, 0));
        assertTrue(e.getMessage().contains("X: dimension 0 of [4, 0]"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> new OnnxModel.Node("Foo", List.of(), List.of("Y"),
                Map.of("k", 1)));
        assertTrue(e.getMessage().contains("attribute k = 1"), e.getMessage());
    }
}
