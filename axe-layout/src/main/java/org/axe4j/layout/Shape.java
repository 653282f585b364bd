package org.axe4j.layout;

import java.util.List;

/**
 * A logical shape {@code (S_0, ..., S_{m-1})}, every dimension {@code >= 1}. Coordinates flatten
 * row-major: {@code x = ((c_0 * S_1 + c_1) * S_2 + c_2) ...}.
 */
public record Shape(List<Long> dims) {
    public Shape {
        List<Long> d = List.copyOf(dims);
        long size = 1;
        for (int k = 0; k < d.size(); k++) {
            if (d.get(k) < 1) {
                Checks.positive("shape " + d + " dimension " + k, d.get(k));
            }
            size = Checks.mul(() -> "size of shape " + d, size, d.get(k));
        }
        dims = d;
    }

    public static Shape of(long... dims) {
        Long[] boxed = new Long[dims.length];
        for (int i = 0; i < dims.length; i++) {
            boxed[i] = dims[i];
        }
        return new Shape(List.of(boxed));
    }

    public int rank() {
        return dims.size();
    }

    public long dim(int k) {
        return dims.get(k);
    }

    /** The product of the dimensions (1 for rank 0). */
    public long size() {
        long size = 1;
        for (long d : dims) {
            size *= d; // cannot overflow: checked in the constructor
        }
        return size;
    }

    public long[] toArray() {
        return dims.stream().mapToLong(Long::longValue).toArray();
    }

    /** Row-major flat index of {@code coord}; every component must be in {@code [0, S_k)}. */
    public long flatten(long... coord) {
        if (coord.length != dims.size()) {
            throw AxeException.invalid("coordinate %s has rank %d but shape %s has rank %d",
                    java.util.Arrays.toString(coord), coord.length, this, dims.size());
        }
        long x = 0;
        for (int k = 0; k < coord.length; k++) {
            if (coord[k] < 0 || coord[k] >= dims.get(k)) {
                throw AxeException.invalid("coordinate %s is outside shape %s (dimension %d)",
                        java.util.Arrays.toString(coord), this, k);
            }
            x = x * dims.get(k) + coord[k];
        }
        return x;
    }

    /** Inverse of {@link #flatten}. */
    public long[] unflatten(long x) {
        if (x < 0 || x >= size()) {
            throw AxeException.invalid("flat index %d is outside shape %s of size %d", x, this, size());
        }
        long[] c = new long[dims.size()];
        for (int k = dims.size() - 1; k >= 0; k--) {
            c[k] = x % dims.get(k);
            x /= dims.get(k);
        }
        return c;
    }

    /** {@code (8,16)}; rank 1 prints as {@code (8)}. */
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("(");
        for (int i = 0; i < dims.size(); i++) {
            if (i > 0) {
                sb.append(',');
            }
            sb.append(dims.get(i));
        }
        return sb.append(')').toString();
    }
}
