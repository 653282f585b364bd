package org.axe4j.benchmarks.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The bundle runner's readers and checks against their references: the binary16 conversions over all
 * 65,536 bit patterns (IEEE 754's definition: sign, 5-bit exponent biased by 15, 10-bit fraction),
 * a {@code .npy} header as numpy writes it, and the allclose rule's cases.
 */
class NpyAndElementsTest {
    /** binary16 by its definition, in double arithmetic. */
    private static double halfByDefinition(int bits) {
        int sign = (bits >> 15) & 1;
        int exponent = (bits >> 10) & 0x1f;
        int fraction = bits & 0x3ff;
        double magnitude;
        if (exponent == 0x1f) {
            magnitude = fraction == 0 ? Double.POSITIVE_INFINITY : Double.NaN;
        } else if (exponent == 0) {
            magnitude = fraction * Math.pow(2, -24);
        } else {
            magnitude = (1 + fraction / 1024.0) * Math.pow(2, exponent - 15);
        }
        return sign == 1 ? -magnitude : magnitude;
    }

    @Test
    void everyHalfConvertsToItsValueAndBack() {
        for (int bits = 0; bits < 0x10000; bits++) {
            double want = halfByDefinition(bits);
            float got = Elements.halfToFloat((short) bits);
            if (Double.isNaN(want)) {
                assertTrue(Float.isNaN(got), "bits " + bits);
                continue;
            }
            assertEquals(want, got, 0.0, "bits 0x" + Integer.toHexString(bits));
            assertEquals(bits, Elements.floatToHalf(got) & 0xffff, "round trip of 0x" + Integer.toHexString(bits));
        }
    }

    @Test
    void floatsBetweenHalvesRoundToNearestEven() {
        assertEquals(0x3c00, Elements.floatToHalf(1 + 0x1p-11f) & 0xffff, "halfway to 1+2^-10 rounds to even 1");
        assertEquals(0x3c02, Elements.floatToHalf(1 + 3 * 0x1p-11f) & 0xffff, "halfway from odd rounds up");
        assertEquals(0x7c00, Elements.floatToHalf(70000f) & 0xffff, "overflow is infinity");
        assertEquals(0x0001, Elements.floatToHalf(0x1p-24f) & 0xffff, "the smallest subnormal");
    }

    @Test
    void aNumpyHeaderGivesDtypeShapeAndData() {
        String header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
        int padded = 118 - header.length();
        ByteArrayOutputStream file = new ByteArrayOutputStream();
        file.writeBytes(new byte[] {(byte) 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 118, 0});
        file.writeBytes((header + " ".repeat(padded - 1) + "\n").getBytes(StandardCharsets.US_ASCII));
        ByteBuffer data = ByteBuffer.allocate(24).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < 6; i++) {
            data.putFloat(i * 1.5f);
        }
        file.writeBytes(data.array());
        Npy array = Npy.parse(file.toByteArray(), "test");
        assertEquals("<f4", array.descr());
        assertEquals(6, array.elements());
        assertEquals(7.5f, array.buffer().getFloat(20));
        byte[] truncated = java.util.Arrays.copyOf(file.toByteArray(), file.size() - 4);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Npy.parse(truncated, "t.npy"));
        assertTrue(e.getMessage().contains("20 bytes for <f4[2, 3]"), e.getMessage());
    }

    @Test
    void allcloseCountsWhatNumpyWouldAndNamesTheFirstMismatch() {
        ByteBuffer want = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN).putFloat(1f).putFloat(100f)
                .putFloat(Float.NaN).putFloat(0f).flip();
        ByteBuffer got = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN).putFloat(1.0005f).putFloat(100.05f)
                .putFloat(Float.NaN).putFloat(0.02f).flip();
        Map<String, Object> close = Elements.compare(got, want, "float32", 4, 1e-3, 0.01, false);
        assertEquals(1L, close.get("mismatches"), "only 0.02 vs 0 exceeds 0.01 + 1e-3 * 0");
        assertEquals(3L, ((Map<?, ?>) close.get("first_mismatch")).get("flat_index"));
        Map<String, Object> exact = Elements.compare(got, want, "float32", 4, 0, 0, true);
        assertEquals(3L, exact.get("mismatches"), "NaN equals NaN; the other three differ");
    }
}
