package org.axe4j.schedules;

/**
 * What is known of an integer fixed only at run time: it is {@code coeff * n + residue} for some integer n.
 *
 * <p>TVM's modular-set analysis answers this for a region start such as {@code bx * 32} ({@code 32 n + 0}),
 * {@code kt * 64 + 16} ({@code 64 n + 16}) or {@code by * 128 + (wg - 1) * 64} ({@code 64 n + 0}); a loop variable
 * alone is {@code 1 n + 0} ({@link #ANY}). {@code coeff} 0 is the constant {@code residue}. Sums and multiples of
 * such values are again such values: {@code (c1 n + b1) + (c2 m + b2)} is {@code gcd(c1, c2) k + (b1 + b2)} and
 * {@code k (c n + b)} is {@code (k c) n + k b}, which is how an address built from run-time starts gets its
 * alignment: {@code 4 + (32 n) * 1} elements is a multiple of 4 for every n, {@code 4 + (n) * 1} is not.
 *
 * <p>Values are normalized: {@code coeff >= 0}, and {@code 0 <= residue < coeff} when {@code coeff > 0}.
 */
public record Modular(long coeff, long residue) {

    /** Any integer: nothing is known. */
    public static final Modular ANY = new Modular(1, 0);

    /** The constant 0. */
    public static final Modular ZERO = new Modular(0, 0);

    public Modular {
        coeff = Math.abs(coeff);
        if (coeff > 0) {
            residue = Math.floorMod(residue, coeff);
        }
    }

    public static Modular constant(long value) {
        return new Modular(0, value);
    }

    public boolean isConstant() {
        return coeff == 0;
    }

    /** {@code this + other}: every sum of a value of each. */
    public Modular plus(Modular other) {
        return new Modular(gcd(coeff, other.coeff), Math.addExact(residue, other.residue));
    }

    public Modular plus(long constant) {
        return plus(constant(constant));
    }

    /** {@code k * this}. */
    public Modular times(long k) {
        return new Modular(Math.multiplyExact(coeff, k), Math.multiplyExact(residue, k));
    }

    /** True when {@code v} is one of the values. */
    public boolean contains(long v) {
        return coeff == 0 ? v == residue : Math.floorMod(v - residue, coeff) == 0;
    }

    /** True when every value is a multiple of {@code k} ({@code k > 0}). */
    public boolean divisibleBy(long k) {
        if (k <= 0) {
            throw new IllegalArgumentException("divisor (" + k + ") must be > 0");
        }
        return coeff % k == 0 && Math.floorMod(residue, k) == 0;
    }

    /** The largest k dividing every value; 0 for the constant 0 (which every k divides). */
    public long alignment() {
        return gcd(coeff, Math.abs(residue));
    }

    /** The values in {@code [lo, hi)}, in increasing order (the constant: itself when inside). */
    public java.util.List<Long> valuesIn(long lo, long hi) {
        java.util.List<Long> out = new java.util.ArrayList<>();
        if (coeff == 0) {
            if (residue >= lo && residue < hi) {
                out.add(residue);
            }
            return out;
        }
        for (long v = lo + Math.floorMod(residue - lo, coeff); v < hi; v += coeff) {
            out.add(v);
        }
        return out;
    }

    static long gcd(long a, long b) {
        a = Math.abs(a);
        b = Math.abs(b);
        while (b != 0) {
            long t = a % b;
            a = b;
            b = t;
        }
        return a;
    }

    @Override
    public String toString() {
        return coeff == 0 ? Long.toString(residue) : coeff + "n" + (residue == 0 ? "" : " + " + residue);
    }
}
