package org.axe4j.layout;

/**
 * An iter {@code (e, s@a)}: extent {@code e >= 1}, integer stride {@code s} (0 and negative allowed),
 * axis {@code a}. It induces {@code i -> s * unit(a)} for {@code i in [0, e)}.
 */
public record Iter(long extent, long stride, Axis axis) {
    public Iter {
        Checks.positive("extent", extent);
        if (axis == null) {
            throw AxeException.invalid("iter axis must not be null");
        }
        // (e-1)*|s| bounds every image coordinate of this iter: it must fit in 64 bits.
        if (stride == Long.MIN_VALUE) {
            throw AxeException.invalid("stride (%d) is out of range", stride);
        }
        if (Checks.mulSaturating(extent - 1, Math.abs(stride)) == Long.MAX_VALUE) {
            Checks.mul("iter (" + extent + "," + stride + "@" + axis + ") reach", extent - 1, Math.abs(stride));
        }
    }

    public static Iter of(long extent, long stride, Axis axis) {
        return new Iter(extent, stride, axis);
    }

    public static Iter of(long extent, long stride, String axis) {
        return new Iter(extent, stride, Axis.of(axis));
    }

    /** An iter on the default memory axis {@code m}. */
    public static Iter of(long extent, long stride) {
        return new Iter(extent, stride, Axis.M);
    }

    /** {@code (e-1)*|s|}: how far this iter reaches on its axis. */
    public long reach() {
        return (extent - 1) * Math.abs(stride);
    }

    public Iter withExtent(long e) {
        return new Iter(e, stride, axis);
    }

    public Iter withStride(long s) {
        return new Iter(extent, s, axis);
    }

    /** Text form {@code (e,s@a)}; {@code @m} is omitted. */
    @Override
    public String toString() {
        return "(" + extent + "," + LayoutText.strideText(stride, axis) + ")";
    }
}
