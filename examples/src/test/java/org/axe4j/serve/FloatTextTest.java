package org.axe4j.serve;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Random;
import org.junit.jupiter.api.Test;

/** The JSON answer's float32 text reads back to the same float, directly and through a double (Python's way). */
class FloatTextTest {
    private static void assertReadsBack(float f) {
        StringBuilder s = new StringBuilder();
        FloatText.append(f, s);
        String text = s.toString();
        if (Float.floatToRawIntBits(Float.parseFloat(text)) != Float.floatToRawIntBits(f)
                || Float.floatToRawIntBits((float) Double.parseDouble(text)) != Float.floatToRawIntBits(f)) {
            throw new AssertionError(Float.toString(f) + " written as " + text + ", which reads back as "
                    + Float.parseFloat(text) + " (through a double: " + (float) Double.parseDouble(text) + ")");
        }
    }

    @Test
    void everyFloatSampledReadsBackBitForBit() {
        Random r = new Random(52);
        for (int i = 0; i < 200_000; i++) {
            float f = Float.intBitsToFloat(r.nextInt());
            if (Float.isFinite(f)) {
                assertReadsBack(f);
            }
        }
        for (int bits = 0; bits < 1 << 16; bits++) {  // subnormals, and the floats about powers of two
            assertReadsBack(Float.intBitsToFloat(bits));
            assertReadsBack(Float.intBitsToFloat(0x3F80_0000 + bits - (1 << 15)));
        }
        for (int e = -149; e <= 127; e++) {
            float p = Math.scalb(1f, e);
            assertReadsBack(p);
            assertReadsBack(Math.nextDown(p));
            assertReadsBack(-Math.nextUp(p));
        }
        assertReadsBack(Float.MAX_VALUE);
        assertReadsBack(Float.MIN_VALUE);
        assertReadsBack(Float.MIN_NORMAL);
    }

    @Test
    void shortValuesAreLaidOutAsFloatToStringLaysThemOut() {
        for (float f : new float[] {1f, 0.5f, 100f, 0.25f, -2.5f, 1e7f, 1.5e10f, -0f, 0f, 0.125f,
                6_000_000f, 0.0009765625f, 1024f * 1024 * 1024}) {
            StringBuilder s = new StringBuilder();
            FloatText.append(f, s);
            assertEquals(Float.toString(f), s.toString());
        }
    }
}
