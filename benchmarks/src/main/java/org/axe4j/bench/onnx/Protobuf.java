package org.axe4j.bench.onnx;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * Protocol-buffers wire format, the part an ONNX model needs: each field is a key {@code (number << 3) | wire type}
 * as a varint, then a varint (type 0), 4 little-endian bytes (type 5: a float) or a varint length and that many bytes
 * (type 2: strings, bytes and nested messages). Varints are 7 bits a byte, low bits first, the top bit set on every
 * byte but the last; negative int64 values take 10 bytes (two's complement).
 */
final class Protobuf {
    static final int VARINT = 0;
    static final int LENGTH_DELIMITED = 2;
    static final int FIXED32 = 5;

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();

    Protobuf varint(int field, long value) {
        key(field, VARINT);
        rawVarint(value);
        return this;
    }

    Protobuf float32(int field, float value) {
        key(field, FIXED32);
        int bits = Float.floatToRawIntBits(value);
        for (int i = 0; i < 4; i++) {
            out.write(bits >>> (8 * i));
        }
        return this;
    }

    Protobuf bytes(int field, byte[] value) {
        key(field, LENGTH_DELIMITED);
        rawVarint(value.length);
        out.writeBytes(value);
        return this;
    }

    Protobuf string(int field, String value) {
        return bytes(field, value.getBytes(StandardCharsets.UTF_8));
    }

    Protobuf message(int field, Protobuf value) {
        return bytes(field, value.toBytes());
    }

    byte[] toBytes() {
        return out.toByteArray();
    }

    private void key(int field, int wireType) {
        if (field < 1) {
            throw new IllegalArgumentException("protobuf field number " + field + " must be positive");
        }
        rawVarint(((long) field << 3) | wireType);
    }

    private void rawVarint(long value) {
        while ((value & ~0x7fL) != 0) {
            out.write((int) ((value & 0x7f) | 0x80));
            value >>>= 7;
        }
        out.write((int) value);
    }
}
