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
