package org.axe4j.layout;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Tile, the Kronecker product of layouts (paper Appendix C): outer {@code A} admitting {@code T_A},
 * inner {@code B} admitting {@code T_B}, same rank {@code r}. The result admits
 * {@code T = (T_A[k] * T_B[k])_k}; the coordinate {@code z_k = x_k * T_B[k] + y_k} maps to
 *
 * <pre>
 *   f_{A(x)B}(z) = f_A(x) ⊙ span(B) + f_B(y)
 *   as sets:  L(z) = { a ⊙ span(B) + b : a in L_A(x), b in L_B(y) }
 * </pre>
 *
 * where {@code ⊙} multiplies axis by axis by {@code span_a(B)} ({@link Layout#spanOn}; 1 on an axis
 * {@code B} does not use). The inner layout supplies the position inside a tile, the outer one the
 * placement of tiles, stretched by the inner span so that tiles do not overlap.
 *
 * <p>Construction: group {@code A} by {@code T_A} and {@code B} by {@code T_B} ({@link Group}); scale
 * every iter of {@code A} on axis {@code a} by {@code span_a(B)}; emit the blocks
 * {@code [A_0 scaled, B_0, A_1 scaled, B_1, ...]}; replicas are the scaled {@code R_A} followed by
 * {@code R_B}; the offset is {@code O_A ⊙ span(B) + O_B}. The result is grouped by the interleaved shape
 * {@code (T_A[0], T_B[0], T_A[1], T_B[1], ...)} ({@link #interleavedShape}).
 *
 * <p>Example: a 2x2 grid of row-major 3x4 tiles, {@code A = S[(2,2):(2,1)]} by (2,2) and
 * {@code B = S[(3,4):(4,1)]} by (3,4): {@code span(B) = 1 + 2*4 + 3*1 = 12}, so
 * {@code A (x) B = S[(2,3,2,4):(24,4,12,1)]} by (6,8): each tile is a contiguous run of 12 elements.
 */
public final class Tile {
    private Tile() {}

    /** {@code A (x) B}; INVALID for ranks that differ or shapes not admitted, NOT_REPRESENTABLE where a grouping fails. */
    public static Layout tile(Layout outer, Shape outerShape, Layout inner, Shape innerShape) {
        return interleave("tile", outer, outerShape, inner, innerShape, true);
    }

    /** {@code T = (T_A[k] * T_B[k])_k}, the shape a tile (or direct sum) admits. */
    public static Shape tiledShape(Shape outerShape, Shape innerShape) {
        requireSameRank("tiledShape", outerShape, innerShape);
        List<Long> dims = new ArrayList<>();
        for (int k = 0; k < outerShape.rank(); k++) {
            int dim = k;
            dims.add(Checks.mul(() -> "dimension " + dim + " of the tiled shape", outerShape.dim(k), innerShape.dim(k)));
        }
        return new Shape(dims);
    }

    /** {@code (T_A[0], T_B[0], T_A[1], T_B[1], ...)}: the grouping of a tile into outer and inner digits. */
    public static Shape interleavedShape(Shape outerShape, Shape innerShape) {
        requireSameRank("interleavedShape", outerShape, innerShape);
        List<Long> dims = new ArrayList<>();
        for (int k = 0; k < outerShape.rank(); k++) {
            dims.add(outerShape.dim(k));
            dims.add(innerShape.dim(k));
        }
        return new Shape(dims);
    }

    /** {@code v ⊙ span(B)}: multiplies each stride of {@code iters} by the span of its axis (1 when absent). */
    static List<Iter> scale(List<Iter> iters, Map<Axis, Long> span) {
        List<Iter> out = new ArrayList<>();
        for (Iter it : iters) {
            long s = span.getOrDefault(it.axis(), 1L);
            out.add(it.withStride(Checks.mul(() -> "stride of " + it + " scaled by span " + s, it.stride(), s)));
        }
        return out;
    }

    /** {@code O ⊙ span}, axis by axis. */
    static TreeMap<Axis, Long> scale(Map<Axis, Long> offset, Map<Axis, Long> span) {
        TreeMap<Axis, Long> out = new TreeMap<>();
        offset.forEach((a, v) -> out.put(a, Checks.mul(() -> "offset on " + a + " scaled by span", v, span.getOrDefault(a, 1L))));
        return out;
    }

    /**
     * The blockwise interleaving shared by tile and direct sum: {@code [A_k scaled, B_k]} per dimension,
     * replicas {@code scaled R_A ++ R_B}, offset {@code scaled O_A + O_B}; the scale is {@code span(B)}
     * when {@code scaleBySpan}, 1 otherwise.
     */
    static Layout interleave(String op, Layout outer, Shape outerShape, Layout inner, Shape innerShape,
                             boolean scaleBySpan) {
        if (outerShape.rank() != innerShape.rank()) {
            throw AxeException.invalid("%s: outer shape %s has rank %d but inner shape %s has rank %d"
                            + " (outer %s, inner %s); the ranks must be equal",
                    op, outerShape, outerShape.rank(), innerShape, innerShape.rank(), outer, inner);
        }
        requireAdmitted(op, "outer", outer, outerShape);
        requireAdmitted(op, "inner", inner, innerShape);
        Grouped a = groupFor(op, "outer", outer, outerShape);
        Grouped b = groupFor(op, "inner", inner, innerShape);
        Map<Axis, Long> span = scaleBySpan ? inner.spans() : Map.of();
        List<Iter> shard = new ArrayList<>();
        for (int k = 0; k < outerShape.rank(); k++) {
            shard.addAll(scale(a.block(k), span));
            shard.addAll(b.block(k));
        }
        List<Iter> replica = new ArrayList<>(scale(outer.replica(), span));
        replica.addAll(inner.replica());
        TreeMap<Axis, Long> offset = scale(outer.offset(), span);
        inner.offset().forEach((ax, v) -> offset.merge(ax, v, (x, y) -> Checks.add(op + " offset on " + ax, x, y)));
        return new Layout(shard, replica, offset);
    }

    static void requireSameRank(String op, Shape outerShape, Shape innerShape) {
        if (outerShape.rank() != innerShape.rank()) {
            throw AxeException.invalid("%s: outer shape %s has rank %d but inner shape %s has rank %d; the ranks must be equal",
                    op, outerShape, outerShape.rank(), innerShape, innerShape.rank());
        }
    }

    static void requireAdmitted(String op, String role, Layout l, Shape shape) {
        if (!l.admits(shape)) {
            throw AxeException.invalid("%s: %s layout %s (size %d) does not admit shape %s (size %d)",
                    op, role, l, l.size(), shape, shape.size());
        }
    }

    private static Grouped groupFor(String op, String role, Layout l, Shape shape) {
        return Group.tryGroup(l, shape).orElseThrow(reason -> new AxeException(AxeException.Kind.NOT_REPRESENTABLE,
                op + ": " + role + " layout cannot be grouped: " + reason));
    }
}
