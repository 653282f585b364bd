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
        int k = (int) Math.floor(Math.log10(v));
        long n = Math.round(v * POWERS_OF_TEN[60 + 8 - k]);
        if (n < NINE_DIGITS / 10) {  // log10 rounded up across a power of ten
            k--;
            n = Math.round(v * POWERS_OF_TEN[60 + 8 - k]);
        }
        if (n >= NINE_DIGITS) {      // rounded up to 10^9 (or log10 rounded down)
            k++;
            n = Math.round(v * POWERS_OF_TEN[60 + 8 - k]);
        }
        int digits = 9;
        while (n % 10 == 0) {
            n /= 10;
            digits--;
        }
        char[] d = new char[9];
        for (int i = digits - 1; i >= 0; i--, n /= 10) {
            d[i] = (char) ('0' + n % 10);
        }
        if (k >= -3 && k < 7) {
            plain(d, digits, k, out);
        } else {
            out.append(d[0]).append('.');
            if (digits == 1) {
                out.append('0');
            } else {
                out.append(d, 1, digits - 1);
            }
            out.append('E').append(k);
        }
    }

    /** {@code d[0..digits) * 10^(k + 1 - digits)} without an exponent: at least one digit each side of the point. */
    private static void plain(char[] d, int digits, int k, StringBuilder out) {
        if (k < 0) {
            out.append("0.");
            for (int i = -1; i > k; i--) {
                out.append('0');
            }
            out.append(d, 0, digits);
            return;
        }
        for (int i = 0; i <= k; i++) {
            out.append(i < digits ? d[i] : '0');
        }
        out.append('.');
        if (digits <= k + 1) {
            out.append('0');
        } else {
            out.append(d, k + 1, digits - k - 1);
        }
    }
}
