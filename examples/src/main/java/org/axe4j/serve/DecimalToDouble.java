package org.axe4j.serve;

import java.math.BigInteger;

/**
 * A decimal {@code w * 10^q} to the nearest double, bit-identical to {@link Double#parseDouble} (round half to even),
 * without building a string. Three steps, each exact where it answers:
 * <ol>
 *   <li>Clinger's fast path: {@code w <= 2^53} and {@code |q| <= 22}: {@code w} and {@code 10^|q|} are exact doubles,
 *       so one IEEE multiply or divide rounds the exact product once.</li>
 *   <li>Eisel–Lemire: {@code 5^q} as a 128-bit mantissa {@code T} (truncated) times {@code 2^e}; the 192-bit product
 *       {@code z = w' T} ({@code w'} is {@code w} shifted up to 64 bits) is within {@code w'} below the exact one, so
 *       the rounding is decided when no halfway point lies in {@code [z, z + w')}; when {@code T} is exact
 *       ({@code 0 <= q <= 55}) ties are resolved to even.</li>
 *   <li>Anything undecided (an interval touching a halfway point, exponents outside [-342, 308], overflow, more
 *       than 19 digits where {@code w} and {@code w + 1} round apart) returns {@link #UNDECIDED}: the caller then
 *       uses {@code Double.parseDouble}.</li>
 * </ol>
 */
final class DecimalToDouble {
    /** Returned as raw bits when this class cannot decide: a NaN pattern no decimal produces. */
    static final long UNDECIDED = 0x7FF8_0000_DEAD_BEEFL;
    static final int MIN_Q = -342;
    static final int MAX_Q = 308;
    private static final double[] EXACT_POWERS_OF_TEN = new double[23];
    /** {@code 5^q = (HIGH[i] * 2^64 + LOW[i]) * 2^EXPONENT[i]} (truncated), {@code i = q - MIN_Q}, top bit set. */
    private static final long[] HIGH = new long[MAX_Q - MIN_Q + 1];
    private static final long[] LOW = new long[MAX_Q - MIN_Q + 1];
    private static final int[] EXPONENT = new int[MAX_Q - MIN_Q + 1];

    static {
        double p = 1;
        for (int i = 0; i < EXACT_POWERS_OF_TEN.length; i++) {
            EXACT_POWERS_OF_TEN[i] = p;
            p *= 10;
        }
        BigInteger five = BigInteger.valueOf(5);
        BigInteger mask = BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE);
        for (int q = MIN_Q; q <= MAX_Q; q++) {
            BigInteger top;
            int exponent;
            if (q >= 0) {
                BigInteger power = five.pow(q);
                int shift = power.bitLength() - 128;  // 5^q = top * 2^shift, floor when shift > 0
                top = shift > 0 ? power.shiftRight(shift) : power.shiftLeft(-shift);
                exponent = shift;
            } else {
                BigInteger power = five.pow(-q);
                int k = 127 + power.bitLength();      // 2^k / 5^-q lies in (2^127, 2^128)
                top = BigInteger.ONE.shiftLeft(k).divide(power);
                exponent = -k;
            }
            HIGH[q - MIN_Q] = top.shiftRight(64).longValue();
            LOW[q - MIN_Q] = top.and(mask).longValue();
            EXPONENT[q - MIN_Q] = exponent;
        }
    }

    private DecimalToDouble() {}

    /**
     * The raw bits of the double nearest {@code (negative ? -1 : 1) * (w + fraction) * 10^q}, where {@code w} is an
     * unsigned 64-bit integer and {@code truncated} says digits were dropped after {@code w}'s last one (some nonzero:
     * the value lies strictly between {@code w} and {@code w + 1}); or {@link #UNDECIDED}.
     */
    static long bits(boolean negative, long w, int q, boolean truncated) {
        long sign = negative ? Long.MIN_VALUE : 0;
        if (w == 0) {
            return truncated ? UNDECIDED : sign;
        }
        if (!truncated && w >= 0 && w <= 1L << 53 && q >= -22 && q <= 22) {
            double d = (double) w;
            d = q < 0 ? d / EXACT_POWERS_OF_TEN[-q] : d * EXACT_POWERS_OF_TEN[q];
            return Double.doubleToRawLongBits(d) | sign;
        }
        long bits = eiselLemire(w, q);
        if (truncated && bits != UNDECIDED && eiselLemire(w + 1, q) != bits) {
            return UNDECIDED;  // w + 1 cannot wrap: w has at most 19 digits
        }
        return bits == UNDECIDED ? UNDECIDED : bits | sign;
    }

    /** The double nearest {@code w * 10^q} (w unsigned, nonzero), or {@link #UNDECIDED}. */
    static long eiselLemire(long w, int q) {
        if (q < MIN_Q || q > MAX_Q) {
            return UNDECIDED;
        }
        int lz = Long.numberOfLeadingZeros(w);
        long x = w << lz;
        int i = q - MIN_Q;
        // z = x * (HIGH:LOW) as hi:mid:lo, unsigned
        long aHigh = unsignedMultiplyHigh(x, HIGH[i]);
        long aLow = x * HIGH[i];
        long bHigh = unsignedMultiplyHigh(x, LOW[i]);
        long lo = x * LOW[i];
        long mid = aLow + bHigh;
        long hi = aHigh + (Long.compareUnsigned(mid, aLow) < 0 ? 1 : 0);
        // value = z * 2^(EXPONENT + q - lz); keep 53 bits of hi, the top one set: drop s = 11 or 10 bits
        int s = hi < 0 ? 11 : 10;
        int e = EXPONENT[i] + q - lz + 128 + s;   // value ~ (hi >>> s) * 2^e
        int biased = e + 52 + 1023;
        if (biased >= 2047) {
            return UNDECIDED;                     // at or past infinity: Double.parseDouble says which
        }
        if (biased <= 0) {                        // subnormal: round at a coarser bit, exponent field 0
            s += 1 - biased;
            biased = 1;
            if (s > 63) {
                return UNDECIDED;
            }
        }
        long half = 1L << (s - 1);
        long rest = hi & ((1L << s) - 1);
        long m = hi >>> s;
        boolean exact = q >= 0 && q <= 55;        // 5^q fits 128 bits: z is the exact product
        if (exact) {
            if (rest > half || rest == half && (mid != 0 || lo != 0 || (m & 1) == 1)) {
                m++;
            }
        } else if (rest >= half) {
            m++;                                  // exact value > z >= the halfway point
        } else if (rest == half - 1 && mid == -1L) {
            return UNDECIDED;                     // the exact value (< z + 2^64) may reach the halfway point
        }
        long bits = ((long) (biased - 1) << 52) + m;  // m = 2^53 after rounding carries into the exponent
        return bits >= 0x7FF0_0000_0000_0000L ? UNDECIDED : bits;
    }

    /** The high 64 bits of the unsigned 128-bit product (Math.multiplyHigh is signed). */
    private static long unsignedMultiplyHigh(long a, long b) {
        return Math.multiplyHigh(a, b) + ((a >> 63) & b) + ((b >> 63) & a);
    }
}
