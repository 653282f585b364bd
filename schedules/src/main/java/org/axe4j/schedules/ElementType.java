package org.axe4j.schedules;

import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A TVM element type name as requests carry it: {@code int8}..{@code int64}, {@code uint8}..{@code uint64},
 * {@code float16}/{@code float32}/{@code float64}, {@code bfloat16}, {@code bool}, the FP8/FP6/FP4 formats
 * ({@code float8_e4m3fn}, {@code float8_e5m2}, {@code float8_e8m0fnu}, {@code float6_e2m3fn}, {@code float4_e2m1fn},
 * ...), each with an optional lane count ({@code float16x2}). Bits are per lane, as TVM's {@code DataType} has them:
 * {@code float8_e4m3fn} is 8, {@code float4_e2m1fn} 4.
 */
public record ElementType(String name, Family family, int bits, int lanes) {
    /** What arithmetic an element type has. */
    public enum Family { INT, UINT, FLOAT, BOOL }

    private static final Pattern NAME = Pattern.compile(
            "(int|uint|float|bfloat|bool)(\\d*)(_e\\dm\\d\\w*)?(?:x(\\d+))?");

    /** The FP8, FP6 and FP4 formats TVM names (after {@code floatN}), with their N. */
    static final Map<String, Integer> SMALL_FLOAT_FORMATS = Map.ofEntries(Map.entry("_e3m4", 8),
            Map.entry("_e4m3", 8), Map.entry("_e4m3b11fnuz", 8), Map.entry("_e4m3fn", 8), Map.entry("_e4m3fnuz", 8),
            Map.entry("_e5m2", 8), Map.entry("_e5m2fnuz", 8), Map.entry("_e8m0fnu", 8), Map.entry("_e2m3fn", 6),
            Map.entry("_e3m2fn", 6), Map.entry("_e2m1fn", 4));

    /**
     * Parses a TVM element type name.
     *
     * @throws Declined naming the type when it is not one of the names above, so a rule declines a call on it
     *     instead of failing inside
     */
    public static ElementType parse(String name) {
        Matcher m = NAME.matcher(name == null ? "" : name);
        if (!m.matches()) {
            throw unknown(name);
        }
        String kind = m.group(1);
        String format = m.group(3);
        int lanes = m.group(4) == null ? 1 : Integer.parseInt(m.group(4));
        if (kind.equals("bool")) {
            if (!m.group(2).isEmpty() || format != null) {
                throw unknown(name);
            }
            return new ElementType(name, Family.BOOL, 8, lanes);
        }
        if (m.group(2).isEmpty()) {
            throw unknown(name);
        }
        int bits = Integer.parseInt(m.group(2));
        if (format != null && (!kind.equals("float") || SMALL_FLOAT_FORMATS.get(format) == null
                || SMALL_FLOAT_FORMATS.get(format) != bits)) {
            throw unknown(name);
        }
        boolean known = switch (kind) {
            case "int", "uint" -> bits == 8 || bits == 16 || bits == 32 || bits == 64 || bits == 1 || bits == 4;
            case "float" -> format != null ? true : bits == 16 || bits == 32 || bits == 64;
            case "bfloat" -> bits == 16;
            default -> false;
        };
        if (!known) {
            throw unknown(name);
        }
        Family family = switch (kind) {
            case "int" -> Family.INT;
            case "uint" -> Family.UINT;
            default -> Family.FLOAT;
        };
        return new ElementType(name, family, bits, lanes);
    }

    private static Declined unknown(String name) {
        return Declined.of("element type '%s' is not one axe4j's rules know (int/uint 8-64, float16/32/64, bfloat16,"
                + " bool, float8_e4m3fn/e5m2/..., float6_*, float4_e2m1fn)", name);
    }

    public boolean isFloat() {
        return family == Family.FLOAT;
    }

    /** Whether one element is a whole number of bytes (not FP4/FP6 or int4, which pack several in a byte). */
    public boolean wholeBytes() {
        return bits % 8 == 0;
    }

    /** Bytes of one element (all lanes), at least 1. */
    public int bytes() {
        return Math.max(1, bits * lanes / 8);
    }
}
