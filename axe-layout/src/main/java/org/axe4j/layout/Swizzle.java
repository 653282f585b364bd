package org.axe4j.layout;

/**
 * An XOR swizzle of a memory address, CuTe's {@code Swizzle<B,M,S>}:
 *
 * <pre>
 *   S &gt; 0:  swz(a) = a ^ ((a &gt;&gt; S) &amp; (2^B - 1) &lt;&lt; M)       bits [M+S, M+S+B) flip bits [M, M+B)
 *   S &lt; 0:  swz(a) = a ^ ((a &amp; (2^B - 1) &lt;&lt; M) &lt;&lt; |S|)     bits [M, M+B) flip bits [M+|S|, M+|S|+B)
 * </pre>
 *
 * B is the number of bits swizzled, M the bits of one unswizzled unit (log2 of the elements that move
 * together), |S| the distance between the source and target bit fields. With {@code |S| >= B} the fields
 * do not overlap, so swz is an involution: {@code swz(swz(a)) = a}. TIRx's {@code ComposeLayout} writes
 * the same swizzle as {@code (per_element=M, swizzle_len=B, atom_len=|S|, swizzle_inner=S>0)}.
 */
public record Swizzle(int bits, int base, int shift) {
    /** The widest bit position a swizzle may touch; addresses stay non-negative longs. */
    static final int MAX_BIT = 62;

    public Swizzle {
        if (bits < 0 || base < 0) {
            throw new AxeException(AxeException.Kind.INVALID, "swizzle " + text(bits, base, shift)
                    + ": bits B and base M must be >= 0");
        }
        if (bits > 0 && Math.abs(shift) < bits) {
            throw new AxeException(AxeException.Kind.INVALID, "swizzle " + text(bits, base, shift)
                    + ": |S| must be >= B so that the source and target bit fields do not overlap");
        }
        if (base + Math.abs(shift) + bits > MAX_BIT) {
            throw new AxeException(AxeException.Kind.INVALID, "swizzle " + text(bits, base, shift)
                    + ": M + |S| + B must be <= " + MAX_BIT);
        }
    }

    /** The identity swizzle {@code Swizzle<0,0,0>}. */
    public static final Swizzle IDENTITY = new Swizzle(0, 0, 0);

    /** The swizzled address; see the class comment for the formula. */
    public long apply(long address) {
        long mask = ((1L << bits) - 1) << base;
        return shift >= 0 ? address ^ ((address >> shift) & mask) : address ^ ((address & mask) << -shift);
    }

    /** True when every address maps to itself (no bits swizzled). */
    /**
     * The span the swizzle repeats over: it reads and changes no bit at or above {@code M + |S| + B}, so for an offset
     * {@code o} that is a multiple of the period, {@code swz(o + x) = o + swz(x)}.
     */
    public long period() {
        return isIdentity() ? 1 : 1L << (base + Math.abs(shift) + bits);
    }

    public boolean isIdentity() {
        return bits == 0;
    }

    /** True when the high field flips the low one (TIRx's {@code swizzle_inner}). */
    public boolean inner() {
        return shift >= 0;
    }

    /** {@code Swizzle<B,M,S>}. */
    @Override
    public String toString() {
        return text(bits, base, shift);
    }

    private static String text(int bits, int base, int shift) {
        return "Swizzle<" + bits + "," + base + "," + shift + ">";
    }
}
