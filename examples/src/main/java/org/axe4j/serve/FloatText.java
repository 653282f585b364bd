package org.axe4j.serve;

/**
 * A finite float32 as JSON text that reads back to the same float, written without building strings: its 9 significant
 * decimal digits, trailing zeros dropped, laid out as {@link Float#toString} lays them out (plain for
 * {@code 1e-3 <= |v| < 1e7}, else {@code d.dddE±k}).
 *
 * <p>Why 9 digits read back: the digits are {@code v * 10^(8-k)} rounded to an integer ({@code 10^k <= |v| <
 * 10^(k+1)}), computed in double, so they are within 0.5 + 10^-6 units of the 9th digit of {@code v}: a relative error
 * under {@code 5.1e-9}. The nearest other float is at least {@code |v| 2^-24} away (the gap below a power of two), so
 * half of it, {@code 2.98e-8 |v|}, is far wider: a reader rounding to the nearest float (directly, or through a
 * double as Python's json and numpy do) gets {@code v} back. Subnormals have an even wider margin.
 */
final class FloatText {
    private static final double[] POWERS_OF_TEN = new double[120];  // 10^(i - 60)
    private static final long NINE_DIGITS = 1_000_000_000L;
    private static final long[] TENS = {1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000};

    static {
        for (int i = 0; i < POWERS_OF_TEN.length; i++) {
            POWERS_OF_TEN[i] = Double.parseDouble("1e" + (i - 60));
        }
    }

    private FloatText() {}

    /** Appends finite {@code f}; -0.0 as "-0.0", like Float.toString. */
    static void append(float f, StringBuilder out) {
        if (f < 0 || f == 0 && 1 / f < 0) {
            out.append('-');
        }
        double v = Math.abs((double) f);
        if (v == 0) {
            out.append("0.0");
            return;
        }
        int k = (Math.getExponent(v) * 78913) >> 18;  // floor(e2 log10 2): 10^k <= v < 10^(k+2)
        long n = Math.round(v * POWERS_OF_TEN[60 + 8 - k]);
        if (n >= NINE_DIGITS) {
            k++;
            n = Math.round(v * POWERS_OF_TEN[60 + 8 - k]);
        }
        int digits = 9;
        while (n % 10 == 0) {
            n /= 10;
            digits--;
        }
        if (k >= -3 && k < 7) {
            plain(n, digits, k, out);
        } else {
            long unit = TENS[digits - 1];
            out.append((char) ('0' + n / unit)).append('.');
            if (digits == 1) {
                out.append('0');
            } else {
                appendDigits(n % unit, digits - 1, out);
            }
            out.append('E').append(k);
        }
    }

    /** {@code n}'s {@code digits} digits {@code * 10^(k + 1 - digits)} without an exponent, a digit each side of '.'. */
    private static void plain(long n, int digits, int k, StringBuilder out) {
        if (k < 0) {
            out.append("0.");
            for (int i = -1; i > k; i--) {
                out.append('0');
            }
            appendDigits(n, digits, out);
            return;
        }
        if (digits <= k + 1) {
            out.append(n * TENS[k + 1 - digits]).append(".0");
            return;
        }
        long unit = TENS[digits - k - 1];
        out.append(n / unit).append('.');
        appendDigits(n % unit, digits - k - 1, out);
    }

    /** {@code n} as exactly {@code digits} digits, leading zeros kept. */
    private static void appendDigits(long n, int digits, StringBuilder out) {
        for (int i = digits - 1; i >= 0; i--) {
            out.append((char) ('0' + n / TENS[i] % 10));
        }
    }
}
