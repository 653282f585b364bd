package org.axe4j.layout;

/**
 * Direct sum on the tiling domain (paper Appendix F): outer {@code A} admitting {@code T_A}, inner
 * {@code B} admitting {@code T_B}, same rank. The result admits {@code T = (T_A[k] * T_B[k])_k} and
 * for {@code z_k = x_k * T_B[k] + y_k}
 *
 * <pre>
 *   f_{A(+)B}(z) = f_A(x) + f_B(y)          as sets: { a + b : a in L_A(x), b in L_B(y) }
 * </pre>
 *
 * Construction: the interleaving of {@link Tile} without the span scaling: blocks
 * {@code [A_0, B_0, A_1, B_1, ...]}, replicas {@code R_A ++ R_B}, offset {@code O_A + O_B}. A tile is a
 * direct sum whose outer layout was first scaled by {@code span(B)}.
 *
 * <p>Example (Appendix F.4), one axis: {@code A = S[(2,2):(8,2)]} (the origins 0, 2, 8, 10 of the four
 * 2x2 quadrants of a row-major 4x4 matrix) and {@code B = S[(2,2):(4,1)]} (a 2x2 block of it), both by
 * (2,2): {@code A (+) B = S[(2,2,2,2):(8,4,2,1)] = S[16:1]} by (4,4), the contiguous matrix. No outer
 * layout tiles {@code B} into it: a tile scales the outer part by {@code span(B) = 6}, so every image of
 * {@code A' (x) B} is congruent mod 6 to one of {0, 1, 4, 5}, while the contiguous layout reaches 2 and 3.
 */
public final class DirectSum {
    private DirectSum() {}

    /** {@code A (+) B}; INVALID for ranks that differ or shapes not admitted, NOT_REPRESENTABLE where a grouping fails. */
    public static Layout directSum(Layout a, Shape aShape, Layout b, Shape bShape) {
        return Tile.interleave("directSum", a, aShape, b, bShape, false);
    }
}
