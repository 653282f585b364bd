package org.axe4j.layout;

/**
 * Argument checks and exact arithmetic in one place. Messages say role, value and rule,
 * e.g. "extent (-3) must be >= 1". Overflow is never silent.
 */
public final class Checks {
    private Checks() {}

    /** Requires {@code value >= 1}. */
    public static long positive(String role, long value) {
        if (value < 1) {
            throw AxeException.invalid("%s (%d) must be >= 1", role, value);
        }
        return value;
    }

    /** Requires {@code value >= 0}. */
    public static long nonNegative(String role, long value) {
        if (value < 0) {
            throw AxeException.invalid("%s (%d) must be >= 0", role, value);
        }
        return value;
    }

    /** {@code a * b}, or an INVALID error naming what overflowed. */
    public static long mul(String what, long a, long b) {
        try {
            return Math.multiplyExact(a, b);
        } catch (ArithmeticException e) {
            throw AxeException.invalid("%s overflows 64 bits (%d * %d)", what, a, b);
        }
    }

    /** {@code a + b}, or an INVALID error naming what overflowed. */
    public static long add(String what, long a, long b) {
        try {
            return Math.addExact(a, b);
        } catch (ArithmeticException e) {
            throw AxeException.invalid("%s overflows 64 bits (%d + %d)", what, a, b);
        }
    }

    /** {@code a - b}, or an INVALID error naming what overflowed. */
    public static long sub(String what, long a, long b) {
        try {
            return Math.subtractExact(a, b);
        } catch (ArithmeticException e) {
            throw AxeException.invalid("%s overflows 64 bits (%d - %d)", what, a, b);
        }
    }

    /** {@link #mul(String, long, long)} with the description built only on overflow (hot paths). */
    public static long mul(java.util.function.Supplier<String> what, long a, long b) {
        try {
            return Math.multiplyExact(a, b);
        } catch (ArithmeticException e) {
            throw AxeException.invalid("%s overflows 64 bits (%d * %d)", what.get(), a, b);
        }
    }

    /** {@link #add(String, long, long)} with the description built only on overflow (hot paths). */
    public static long add(java.util.function.Supplier<String> what, long a, long b) {
        try {
            return Math.addExact(a, b);
        } catch (ArithmeticException e) {
            throw AxeException.invalid("%s overflows 64 bits (%d + %d)", what.get(), a, b);
        }
    }

    /**
     * {@code a * b} for non-negative operands, or {@code Long.MAX_VALUE} when it does not fit: for comparing a
     * derived size with a limit, where "more than 2^63 - 1" is as good an answer as the exact value.
     */
    public static long mulSaturating(long a, long b) {
        long high = Math.multiplyHigh(a, b);
        long low = a * b;
        return high != 0 || low < 0 ? Long.MAX_VALUE : low;
    }

    /** {@code a + b} for non-negative operands, or {@code Long.MAX_VALUE} when it does not fit (see {@link #mulSaturating}). */
    public static long addSaturating(long a, long b) {
        long sum = a + b;
        return sum < 0 ? Long.MAX_VALUE : sum;
    }

    /** {@code ceil(a / b)} for {@code a >= 0}, {@code b >= 1}, without the overflow of {@code (a + b - 1) / b}. */
    public static long ceilDiv(long a, long b) {
        return a / b + (a % b == 0 ? 0 : 1);
    }

    /** Greatest common divisor of |a| and |b| (gcd(0, 0) = 0). */
    public static long gcd(long a, long b) {
        a = Math.abs(a);
        b = Math.abs(b);
        while (b != 0) {
            long t = a % b;
            a = b;
            b = t;
        }
        return a;
    }
}
