package org.axe4j.layout;

import java.util.List;
import java.util.TreeSet;

/**
 * Tile and tile-of with a swizzled inner layout, the way TIRx tiles its 128B/64B swizzle atoms.
 *
 * <p><b>Tile.</b> With {@code span(swz o B) = span(B)} (TIRx's span of a {@code ComposeLayout}), the Kronecker
 * product of {@link Tile} is {@code (A (x) (swz o B))(z) = { a * s + swz(b) : a in A(x), b in B(y) }},
 * {@code s = span_m(B)}. The swizzle reads and writes no bit at or above its period {@code P}, so
 * {@code swz(c + b) = c + swz(b)} whenever {@code P} divides {@code c}; hence
 *
 * <pre>
 *   A (x) (swz o B) = swz o (A (x) B)     when P divides a * s for every a in A's image on m
 * </pre>
 *
 * which is TIRx's answer ({@code ComposeLayoutNode::Tile}). Where {@code P} does not divide the tile steps but
 * {@code B}'s image lies in {@code [0, 2^k)}, the swizzle restricted to that range ({@link #restrict}) has a smaller
 * period and may divide them; the answer is then {@code restrict(swz, B) o (A (x) B)}. TIRx answers
 * {@code swz o (A (x) B)} in every case, which swizzles across tiles where {@code P} does not divide the steps (a
 * different map; docs/divergences.md). Otherwise, or when {@code A} uses an axis other than {@code m} (a swizzle acts
 * on memory addresses), the product is {@code swz o (A (x) B)} if that is its map point by point (up to
 * {@link Equivalence#RUN_LIMIT} elements), else refused (NOT_REPRESENTABLE, naming the layouts and the reason).
 *
 * <p><b>Tile-of.</b> The missing factor of the unswizzled layouts ({@link TileOf}) with the swizzle carried over,
 * kept only when tiling it back gives the same map as the tiled layout (checked: equal swizzles on equivalent
 * layouts, else by enumeration). This is TIRx's rule (same swizzle, the tile layouts factor); it is sufficient, not
 * complete: a factorisation whose unswizzled parts do not factor is not searched for.
 *
 * <p>A bare swizzle ({@link SwizzledLayout#isBare}) is read as the identity over the shape it is given.
 */
public final class SwizzledTile {
    private SwizzledTile() {}

    /** {@code outer (x) inner} as a swizzled layout; see the class comment. */
    public static SwizzledLayout tile(Layout outer, Shape outerShape, SwizzledLayout inner, Shape innerShape) {
        SwizzledLayout b = inner.over(innerShape);
        for (Axis a : outer.axes()) {
            if (!a.equals(Axis.M)) {
                throw AxeException.notRepresentable("tile: outer layout %s uses axis %s, and the inner layout %s is"
                        + " swizzled; a swizzle acts on memory addresses (axis m) only, so the tiled layout is not a"
                        + " swizzled layout", outer, a, inner);
            }
        }
        Layout product = Tile.tile(outer, outerShape, b.layout(), innerShape);
        long step = b.layout().spanOn(Axis.M);
        for (Swizzle swz : List.of(b.swizzle(), restrict(b.swizzle(), b.layout()))) {
            if (stepsAligned(outer, step, swz)) {
                return new SwizzledLayout(swz, product);
            }
        }
        SwizzledLayout tirx = new SwizzledLayout(b.swizzle(), product);
        if (product.size() <= Equivalence.RUN_LIMIT && isProduct(tirx, outer, outerShape, b, innerShape)) {
            return tirx; // the steps miss the period, yet the tiles' swizzles agree (checked point by point)
        }
        throw AxeException.notRepresentable("tile: outer layout %s steps by multiples of the inner span %d, and the"
                + " swizzle %s of inner layout %s has period %d (%d restricted to the inner image), which does not"
                + " divide every step: the swizzle would differ from tile to tile, so %s (x) (%s) is no swizzle of a"
                + " tile layout", outer, step, b.swizzle(), inner, b.swizzle().period(),
                restrict(b.swizzle(), b.layout()).period(), outer, inner);
    }

    /**
     * TIRx's {@code tile_to} of a swizzled layout: {@code tile(compact(toShape / shape), l)}, the outer a row-major
     * compact layout of the tile counts (INVALID where a dimension does not divide).
     */
    public static SwizzledLayout tileTo(SwizzledLayout l, Shape toShape, Shape shape) {
        if (toShape.rank() != shape.rank()) {
            throw AxeException.invalid("tile_to(%s): shape %s and the layout's shape %s differ in rank", l, toShape, shape);
        }
        Shape counts = quotient(toShape, shape);
        List<Iter> iters = new java.util.ArrayList<>();
        long stride = 1;
        for (int d = counts.rank() - 1; d >= 0; d--) {
            iters.add(0, new Iter(counts.dim(d), stride, Axis.M));
            stride = Checks.mul("outer strides of tile_to " + toShape, stride, counts.dim(d));
        }
        return tile(Layout.of(iters, List.of(), java.util.Map.of()), counts, l, shape);
    }

    /** The outer {@code A} with {@code tiled == A (x) inner} as maps (TIRx's {@code is_tile_inner}), or why not. */
    public static Result<Layout> outer(SwizzledLayout tiled, Shape shape, SwizzledLayout inner, Shape innerShape) {
        SwizzledLayout t = tiled.over(shape);
        SwizzledLayout b = inner.over(innerShape);
        Result<Layout> a = TileOf.outer(t.layout(), shape, b.layout(), innerShape);
        if (a.isEmpty()) {
            return Result.absent("the unswizzled layouts do not factor: " + a.reason());
        }
        Shape outerShape = quotient(shape, innerShape);
        return checked(t, () -> tile(a.get(), outerShape, b, innerShape)).map(x -> a.get());
    }

    /** The inner {@code B} with {@code tiled == outer (x) B} as maps (TIRx's {@code is_tile_outer}), or why not. */
    public static Result<SwizzledLayout> inner(SwizzledLayout tiled, Shape shape, Layout outer, Shape outerShape) {
        SwizzledLayout t = tiled.over(shape);
        Result<Layout> b = TileOf.inner(t.layout(), shape, outer, outerShape);
        if (b.isEmpty()) {
            return Result.absent("the unswizzled layouts do not factor: " + b.reason());
        }
        SwizzledLayout candidate = new SwizzledLayout(t.swizzle(), b.get());
        Shape innerShape = quotient(shape, outerShape);
        return checked(t, () -> tile(outer, outerShape, candidate, innerShape)).map(x -> candidate);
    }

    /**
     * The swizzle as it acts on {@code l}'s image: where the image lies in {@code [0, 2^k)}, source bits at or above
     * {@code k} are 0, so only the source field's bits below {@code k} count ({@code Swizzle<B',M,S>},
     * {@code B' = clamp(k - first source bit, 0, B)}). Returns {@code swz} itself when nothing is cut.
     */
    public static Swizzle restrict(Swizzle swz, Layout l) {
        if (swz.isIdentity()) {
            return swz;
        }
        long low = l.offsetOn(Axis.M);
        long high = low;
        for (List<Iter> part : List.of(l.shard(), l.replica())) {
            for (Iter it : part) {
                long reach = Checks.mul("reach of " + it, it.extent() - 1, it.stride());
                low += Math.min(0, reach);
                high += Math.max(0, reach);
            }
        }
        if (low < 0) {
            return swz;
        }
        int k = 64 - Long.numberOfLeadingZeros(high); // high < 2^k
        int firstSource = swz.inner() ? swz.base() + swz.shift() : swz.base();
        int bits = Math.max(0, Math.min(swz.bits(), k - firstSource));
        if (bits == swz.bits()) {
            return swz;
        }
        return bits == 0 ? Swizzle.IDENTITY : new Swizzle(bits, swz.base(), swz.shift());
    }

    /** Do two swizzled layouts induce the same map (equal swizzles on equivalent layouts, else enumeration)? */
    public static boolean sameMap(SwizzledLayout a, SwizzledLayout b) {
        if (a.size() != b.size()) {
            return false;
        }
        if (restrict(a.swizzle(), a.layout()).equals(restrict(b.swizzle(), b.layout()))
                && Equivalence.equivalent(a.layout(), b.layout())) {
            return true;
        }
        if (a.size() > Equivalence.RUN_LIMIT) {
            throw AxeException.notRepresentable("%s and %s have different swizzles and %d elements, more than the %d"
                    + " axe4j enumerates to compare them", a, b, a.size(), Equivalence.RUN_LIMIT);
        }
        for (long x = 0; x < a.size(); x++) {
            if (!new TreeSet<>(a.apply(x)).equals(new TreeSet<>(b.apply(x)))) {
                return false;
            }
        }
        return true;
    }

    /** Is {@code candidate}'s map {@code z -> { a * s + swz(b) : a in A(x), b in B(y) }}, enumerated? */
    private static boolean isProduct(SwizzledLayout candidate, Layout outer, Shape outerShape, SwizzledLayout inner,
                                     Shape innerShape) {
        Shape tiled = Tile.tiledShape(outerShape, innerShape);
        long s = inner.layout().spanOn(Axis.M);
        for (long z = 0; z < tiled.size(); z++) {
            long[] c = tiled.unflatten(z);
            long[] x = new long[c.length];
            long[] y = new long[c.length];
            for (int k = 0; k < c.length; k++) {
                x[k] = c[k] / innerShape.dim(k);
                y[k] = c[k] % innerShape.dim(k);
            }
            TreeSet<Long> expected = new TreeSet<>();
            for (Point a : outer.apply(outerShape.flatten(x))) {
                for (Point b : inner.apply(innerShape.flatten(y))) {
                    expected.add(a.get(Axis.M) * s + b.get(Axis.M));
                }
            }
            TreeSet<Long> got = new TreeSet<>();
            candidate.apply(z).forEach(p -> got.add(p.get(Axis.M)));
            if (!got.equals(expected)) {
                return false;
            }
        }
        return true;
    }

    /** P divides {@code a * step} for every stride and the offset of {@code outer} on m (powers of two: count zeros). */
    private static boolean stepsAligned(Layout outer, long step, Swizzle swz) {
        int periodBits = Long.numberOfTrailingZeros(swz.period());
        List<Long> values = new java.util.ArrayList<>(List.of(outer.offsetOn(Axis.M)));
        outer.shard().forEach(it -> values.add(it.stride()));
        outer.replica().forEach(it -> values.add(it.stride()));
        for (long v : values) {
            if (v != 0 && Long.numberOfTrailingZeros(v) + Long.numberOfTrailingZeros(step) < periodBits) {
                return false;
            }
        }
        return true;
    }

    private static Result<SwizzledLayout> checked(SwizzledLayout tiled, java.util.function.Supplier<SwizzledLayout> rebuild) {
        SwizzledLayout rebuilt;
        try {
            rebuilt = rebuild.get();
        } catch (AxeException e) {
            return Result.absent("the factor found does not tile back: " + e.getMessage());
        }
        return sameMap(rebuilt, tiled) ? Result.of(rebuilt)
                : Result.absent("tiling the factor back gives " + rebuilt + ", whose map differs from " + tiled);
    }

    private static Shape quotient(Shape shape, Shape part) {
        if (shape.rank() != part.rank()) {
            throw AxeException.invalid("tile-of: shape %s and part shape %s have different ranks", shape, part);
        }
        long[] dims = new long[shape.rank()];
        for (int k = 0; k < dims.length; k++) {
            if (part.dim(k) == 0 || shape.dim(k) % part.dim(k) != 0) {
                throw AxeException.invalid("tile-of: part shape %s does not divide shape %s in dimension %d", part,
                        shape, k);
            }
            dims[k] = shape.dim(k) / part.dim(k);
        }
        return Shape.of(dims);
    }
}
