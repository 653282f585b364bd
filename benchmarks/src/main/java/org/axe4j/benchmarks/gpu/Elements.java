package org.axe4j.benchmarks.gpu;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Element values as doubles and numpy's {@code assert_allclose} rule on them:
 * {@code |got - want| <= atol + rtol |want|}, NaN where NaN is expected; or equality.
 */
public final class Elements {
    private Elements() {}

    /** Element {@code i} of little-endian bytes of {@code dtype} (bfloat16 as its 16 bits). */
    public static double value(ByteBuffer bytes, String dtype, long i) {
        int at = Math.toIntExact(i);
        switch (dtype) {
            case "float16": return halfToFloat(bytes.getShort(2 * at));
            case "bfloat16": return Float.intBitsToFloat((bytes.getShort(2 * at) & 0xffff) << 16);
            case "float32": return bytes.getFloat(4 * at);
            case "float64": return bytes.getDouble(8 * at);
            case "int8": return bytes.get(at);
            case "uint8": case "bool": return bytes.get(at) & 0xff;
            case "int16": return bytes.getShort(2 * at);
            case "uint16": return bytes.getShort(2 * at) & 0xffff;
            case "int32": return bytes.getInt(4 * at);
            case "uint32": return bytes.getInt(4 * at) & 0xffffffffL;
            case "int64": return bytes.getLong(8 * at);
            default: throw new IllegalArgumentException("element type " + dtype + " is not compared");
        }
    }

    /** IEEE binary16 bits to float. */
    public static float halfToFloat(short bits) {
        int h = bits & 0xffff;
        int sign = (h & 0x8000) << 16;
        int exponent = (h >>> 10) & 0x1f;
        int mantissa = h & 0x3ff;
        if (exponent == 0x1f) {
            return Float.intBitsToFloat(sign | 0x7f800000 | (mantissa << 13));
        }
        if (exponent == 0) {
            float magnitude = mantissa * 0x1p-24f;
            return sign == 0 ? magnitude : -magnitude;
        }
        return Float.intBitsToFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
    }

    /** float to IEEE binary16 bits, rounding to nearest even (exact for values of few significant bits). */
    public static short floatToHalf(float value) {
        int f = Float.floatToRawIntBits(value);
        int sign = (f >>> 16) & 0x8000;
        int exponent = ((f >>> 23) & 0xff) - 127 + 15;
        int mantissa = f & 0x7fffff;
        if (((f >>> 23) & 0xff) == 0xff) {
            return (short) (sign | 0x7c00 | (mantissa != 0 ? 0x200 : 0));
        }
        if (exponent >= 0x1f) {
            return (short) (sign | 0x7c00);
        }
        if (exponent <= 0) {
            if (exponent < -10) {
                return (short) sign;
            }
            mantissa |= 0x800000;
            int shift = 14 - exponent;
            int half = mantissa >> shift;
            int rest = mantissa & ((1 << shift) - 1);
            int halfway = 1 << (shift - 1);
            if (rest > halfway || (rest == halfway && (half & 1) == 1)) {
                half++;
            }
            return (short) (sign | half);
        }
        int half = (exponent << 10) | (mantissa >> 13);
        int rest = mantissa & 0x1fff;
        if (rest > 0x1000 || (rest == 0x1000 && (half & 1) == 1)) {
            half++;
        }
        return (short) (sign | half);
    }

    /** numpy's allclose rule (or equality) over every element; a map for the summary. */
    public static Map<String, Object> compare(ByteBuffer got, ByteBuffer want, String dtype, long count, double rtol,
                                              double atol, boolean exact) {
        got = got.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        want = want.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        long mismatches = 0;
        long first = -1;
        double maxError = 0;
        for (long i = 0; i < count; i++) {
            double g = value(got, dtype, i);
            double w = value(want, dtype, i);
            boolean bothNan = Double.isNaN(g) && Double.isNaN(w);
            double error = bothNan ? 0 : (Double.isNaN(g) || Double.isNaN(w)) ? Double.POSITIVE_INFINITY : Math.abs(g - w);
            boolean ok = bothNan || (exact ? g == w : error <= atol + rtol * Math.abs(w));
            if (!ok) {
                mismatches++;
                if (first < 0) {
                    first = i;
                }
            }
            maxError = Math.max(maxError, error);
        }
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("mismatches", mismatches);
        result.put("elements", count);
        result.put("max_abs_error", maxError);
        if (first >= 0) {
            result.put("first_mismatch", Map.of("flat_index", first, "got", value(got, dtype, first),
                    "expected", value(want, dtype, first)));
        }
        return result;
    }
}
