package org.axe4j.schedules;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.axe4j.layout.Layout;

/**
 * One tensor operand of a tile call: the region {@code [start_d, start_d + extent_d)} of a buffer of
 * {@code shape} whose element {@code x} (row-major flat index of the coordinate) lives at the points
 * {@code elemOffset + layout(x)} of its data. A dim with {@code symbolic[d]} starts at an index known only at run
 * time (a loop variable); its {@code start[d]} is 0 and only {@code extent_d <= shape_d} is checked.
 */
public record Operand(String role, String name, String dtype, long[] shape, long[] start, long[] extent, Layout layout,
        long elemOffset, boolean[] symbolic) {
    public Operand(String role, String name, String dtype, long[] shape, long[] start, long[] extent, Layout layout) {
        this(role, name, dtype, shape, start, extent, layout, 0, new boolean[shape.length]);
    }

    public Operand {
        org.axe4j.layout.Shape admitted = org.axe4j.layout.Shape.of(shape);
        if (layout != null && !layout.admits(admitted)) {
            throw Declined.of("%s (%s): layout %s (size %d) does not admit the buffer shape %s (size %d)", role, name,
                    layout, layout.size(), admitted, admitted.size());
        }
        if (shape.length != start.length || shape.length != extent.length || shape.length != symbolic.length) {
            throw Declined.of("%s (%s): region rank %d/%d differs from buffer rank %d", role, name, start.length,
                    extent.length, shape.length);
        }
        for (int d = 0; d < shape.length; d++) {
            if (symbolic[d] && (start[d] != 0 || extent[d] < 1 || extent[d] > shape[d])) {
                throw Declined.of("%s (%s): region of extent %d in dim %d of size %d", role, name, extent[d], d,
                        shape[d]);
            }
            if (!symbolic[d] && (start[d] < 0 || extent[d] < 1 || start[d] + extent[d] > shape[d])) {
                throw Declined.of("%s (%s): region [%d, %d) of dim %d is outside [0, %d)", role, name, start[d],
                        start[d] + extent[d], d, shape[d]);
            }
        }
    }

    /** The dims whose region extent is not 1, in order: the dims a loop runs over. */
    public int[] loopDims() {
        List<Integer> dims = new ArrayList<>();
        for (int d = 0; d < extent.length; d++) {
            if (extent[d] != 1) {
                dims.add(d);
            }
        }
        return dims.stream().mapToInt(Integer::intValue).toArray();
    }

    /** Region extents of {@link #loopDims()}. */
    public long[] loopExtents() {
        return Arrays.stream(loopDims()).mapToLong(d -> extent[d]).toArray();
    }

    public long elements() {
        long n = 1;
        for (long e : extent) {
            n *= e;
        }
        return n;
    }

    /** Bytes per element of {@link #dtype()} ({@code float32} -> 4, {@code int8} -> 1, {@code bool} -> 1). */
    public int elementBytes() {
        String digits = dtype.replaceAll("^[a-z]+", "");
        int bits = digits.isEmpty() ? 8 : Integer.parseInt(digits.replaceAll("x.*$", ""));
        return Math.max(1, bits / 8);
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder(role).append('=').append(name).append('[');
        for (int d = 0; d < shape.length; d++) {
            sb.append(d == 0 ? "" : ", ");
            if (symbolic[d]) {
                sb.append("s").append(d).append(':').append("s").append(d).append('+').append(extent[d]);
            } else {
                sb.append(start[d]).append(':').append(start[d] + extent[d]);
            }
        }
        return sb.append("] ").append(dtype).append(' ').append(layout).toString();
    }
}
