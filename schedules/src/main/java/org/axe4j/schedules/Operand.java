package org.axe4j.schedules;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.axe4j.layout.Layout;

/**
 * One tensor operand of a tile call: the region {@code [start_d, start_d + extent_d)} of a buffer of
 * {@code shape} whose element {@code x} (row-major flat index of the coordinate) lives at the points
 * {@code elemOffset + layout(x)} of its data. A dim with a non-null {@code runTimeStarts[d]} starts at an index known
 * only at run time (a CTA index, a loop variable): what is known of it is that {@link Modular} value (TVM's
 * modular-set analysis, e.g. {@code 32 n} for {@code bx * 32}); its {@code start[d]} is 0 and only
 * {@code extent_d <= shape_d} is checked.
 */
public record Operand(String role, String name, String dtype, long[] shape, long[] start, long[] extent, Layout layout,
        long elemOffset, Modular[] runTimeStarts) {
    public Operand(String role, String name, String dtype, long[] shape, long[] start, long[] extent, Layout layout) {
        this(role, name, dtype, shape, start, extent, layout, 0, new Modular[shape.length]);
    }

    /** Run-time starts marked by {@code symbolic[d]}, nothing known of them ({@link Modular#ANY}). */
    public Operand(String role, String name, String dtype, long[] shape, long[] start, long[] extent, Layout layout,
            long elemOffset, boolean[] symbolic) {
        this(role, name, dtype, shape, start, extent, layout, elemOffset, unknown(symbolic));
    }

    private static Modular[] unknown(boolean[] symbolic) {
        Modular[] out = new Modular[symbolic.length];
        for (int d = 0; d < symbolic.length; d++) {
            out[d] = symbolic[d] ? Modular.ANY : null;
        }
        return out;
    }

    /** True for each dim whose start is known only at run time. */
    public boolean[] symbolic() {
        boolean[] out = new boolean[runTimeStarts.length];
        for (int d = 0; d < out.length; d++) {
            out[d] = runTimeStarts[d] != null;
        }
        return out;
    }

    /** What is known of dim d's start: its run-time {@link Modular} value, or the constant start. */
    public Modular startValues(int d) {
        return runTimeStarts[d] != null ? runTimeStarts[d] : Modular.constant(start[d]);
    }

    /** A copy whose dim {@code d} starts at run time at one of {@code values}. */
    public Operand withRunTimeStart(int d, Modular values) {
        Modular[] starts = runTimeStarts.clone();
        starts[d] = values;
        long[] s = start.clone();
        s[d] = 0;
        return new Operand(role, name, dtype, shape, s, extent, layout, elemOffset, starts);
    }

    public Operand {
        if (runTimeStarts == null) {
            throw new IllegalArgumentException(role + " (" + name + "): runTimeStarts must not be null");
        }
        boolean[] symbolic = new boolean[runTimeStarts.length];
        for (int d = 0; d < symbolic.length; d++) {
            symbolic[d] = runTimeStarts[d] != null;
        }
        org.axe4j.layout.Shape admitted = org.axe4j.layout.Shape.of(shape);
        if (layout != null && !layout.admits(admitted)) {
            throw Declined.of("%s (%s): layout %s (size %d) does not admit the buffer shape %s (size %d): declare %s "
                    + "with the layout's shape %s, or give it a layout of %d elements over %s", role, name, layout,
                    layout.size(), admitted, admitted.size(), name, layoutShape(layout), admitted.size(), admitted);
        }
        if (shape.length != start.length || shape.length != extent.length || shape.length != runTimeStarts.length) {
            throw Declined.of("%s (%s): region rank %d/%d differs from buffer rank %d", role, name, start.length,
                    extent.length, shape.length);
        }
        for (int d = 0; d < shape.length; d++) {
            // a run-time start may be an edge tile whose region runs past the end, even a region wider than the dim
            // (a 64-row TMA box over a 16-row tensor): only rules that clip there take it (Rule#acceptsPastEnd)
            if (symbolic[d] && (start[d] != 0 || extent[d] < 1)) {
                throw Declined.of("%s (%s): region of extent %d in dim %d of size %d", role, name, extent[d], d,
                        shape[d]);
            }
            if (!symbolic[d] && (start[d] < 0 || extent[d] < 1 || start[d] + extent[d] > shape[d])) {
                throw Declined.of("%s (%s): region [%d, %d) of dim %d is outside [0, %d)", role, name, start[d],
                        start[d] + extent[d], d, shape[d]);
            }
        }
    }

    /** The extents of the layout's shard iters, as a shape: {@code (4,4)} for {@code S[(4,4):(4,1)]}. */
    private static String layoutShape(Layout layout) {
        return "(" + String.join(",", layout.shard().stream().map(it -> Long.toString(it.extent())).toList()) + ")";
    }

    /** The first dim whose region is wider than the buffer's dim (so it runs past the end wherever it starts). */
    public java.util.OptionalInt firstDimPastEnd() {
        for (int d = 0; d < shape.length; d++) {
            if (extent[d] > shape[d]) {
                return java.util.OptionalInt.of(d);
            }
        }
        return java.util.OptionalInt.empty();
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

    /**
     * Bytes per element of {@link #dtype()} ({@code float32} -> 4, {@code int8} -> 1, {@code bool} -> 1,
     * {@code float8_e4m3fn} -> 1).
     *
     * @throws Declined naming the type when it is not a TVM element type the rules know
     */
    public int elementBytes() {
        return ElementType.parse(dtype).bytes();
    }

    /** {@link #dtype()} parsed ({@link ElementType#parse}). */
    public ElementType elementType() {
        return ElementType.parse(dtype);
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder(role).append('=').append(name).append('[');
        for (int d = 0; d < shape.length; d++) {
            sb.append(d == 0 ? "" : ", ");
            if (runTimeStarts[d] != null) {
                // s1:s1+64 for a start nothing is known of; s1=64n:s1+64 for one known to be a multiple of 64
                Modular m = runTimeStarts[d];
                sb.append("s").append(d).append(m.equals(Modular.ANY) ? "" : "=" + m).append(':').append("s").append(d)
                        .append('+').append(extent[d]);
            } else {
                sb.append(start[d]).append(':').append(start[d] + extent[d]);
            }
        }
        return sb.append("] ").append(dtype).append(' ').append(layout).toString();
    }
}
