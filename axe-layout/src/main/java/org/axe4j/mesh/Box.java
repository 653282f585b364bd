package org.axe4j.mesh;

import java.util.Arrays;

/**
 * A strided box of buffer offsets: {@code base + sum_k i_k * strides[k]} for {@code 0 <= i_k < extents[k]}, listed
 * in row-major order of i (last index fastest). Plans describe every transfer and copy by boxes, so a plan's size
 * does not grow with the tensor.
 */
public record Box(long base, long[] extents, long[] strides) {
    public Box {
        if (extents.length != strides.length) {
            throw new IllegalArgumentException("box: " + extents.length + " extents, " + strides.length + " strides");
        }
        extents = extents.clone();
        strides = strides.clone();
    }

    /** A contiguous run {@code [base, base + length)}. */
    static Box run(long base, long length) {
        return new Box(base, new long[] {length}, new long[] {1});
    }

    /** The compact row-major box of {@code extents} starting at {@code base}. */
    static Box compact(long base, long[] extents) {
        long[] s = new long[extents.length];
        long w = 1;
        for (int k = extents.length - 1; k >= 0; k--) {
            s[k] = w;
            w *= extents[k];
        }
        return new Box(base, extents, s);
    }

    public long size() {
        long n = 1;
        for (long e : extents) {
            n *= e;
        }
        return n;
    }

    /** The smallest and largest offset (an empty box has none: callers skip it). */
    long min() {
        long v = base;
        for (int k = 0; k < extents.length; k++) {
            v += Math.min(0, (extents[k] - 1) * strides[k]);
        }
        return v;
    }

    long max() {
        long v = base;
        for (int k = 0; k < extents.length; k++) {
            v += Math.max(0, (extents[k] - 1) * strides[k]);
        }
        return v;
    }

    /** Every offset, in order (tests and small fallbacks only). */
    long[] offsets() {
        long[] out = new long[Math.toIntExact(size())];
        long[] i = new long[extents.length];
        for (int n = 0; n < out.length; n++) {
            long v = base;
            for (int k = 0; k < i.length; k++) {
                v += i[k] * strides[k];
            }
            out[n] = v;
            for (int k = i.length - 1; k >= 0; k--) {
                if (++i[k] < extents[k]) {
                    break;
                }
                i[k] = 0;
            }
        }
        return out;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Box b && base == b.base && Arrays.equals(extents, b.extents) && Arrays.equals(strides, b.strides);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(base) * 31 + Arrays.hashCode(extents) * 17 + Arrays.hashCode(strides);
    }

    @Override
    public String toString() {
        return base + "+" + Arrays.toString(extents) + ":" + Arrays.toString(strides);
    }
}
