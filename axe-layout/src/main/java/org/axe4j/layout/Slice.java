package org.axe4j.layout;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Slice (paper Appendix E): for {@code L} admitting {@code S} and a box {@code [b_k, b_k + w_k)}, a layout
 * {@code L'} admitting {@code w} with
 *
 * <pre>
 *   L'(y) = L(b + y)                      for every y with 0 <= y_k < w_k   (as sets, replicas included)
 *   L'    = ( concat_k slice_k ,  R ,  O + D(b) )
 *   slice_k : y_k -> f_k(b_k + y_k) - f_k(b_k)     f_k = the map of block k of group(L, S)
 * </pre>
 *
 * Grouping makes {@code D(c) = sum_k f_k(c_k)}, so the box restricts each block on its own and the
 * replicas pass through. Conversely any slice has {@code D'(y) = D(b+y) - D(b)} (compare the least
 * points of both sets), so a slice exists iff every restricted block is the map of some iters.
 *
 * <p>Per block (iters outermost first, {@code c} a mixed-radix number, range {@code [lo, lo + W)}):
 * <ul>
 *   <li><b>peel</b>: with pivot {@code (e, s)} the fastest remaining iter, {@code beta = lo mod e} and
 *       {@code q = gcd(e, beta, W)}: the range is a union of whole cycles of the fastest {@code q} values,
 *       so {@code (q, s)} is an iter of the slice; split {@code (e, s) = (e/q, q*s), (q, s)} (Lemma B.1),
 *       keep {@code (q, s)}, and go on with {@code lo/q, W/q}. When {@code q = e} the whole iter is peeled and
 *       the next iter becomes the pivot.</li>
 *   <li><b>no wrap</b>: {@code beta + W <= e}: the slower digits stay put, the block is {@code (W, s)}.</li>
 *   <li><b>one wrap</b>: {@code W = 2n} with {@code n = e - beta}: two runs of {@code n} values, before
 *       and after one carry: {@code (2, f(lo+n) - f(lo)), (n, s)}. The jump is read from the block itself,
 *       so carries that ripple through several digits are exact too; it must move a single axis.</li>
 *   <li><b>repeated wrap</b>: {@code e = 2*beta}, {@code W = A*e}, and the next iter {@code (e', s')} counts
 *       {@code beta' .. beta'+A} without a carry: {@code (A, s'), (2, s' - beta*s), (beta, s)}.</li>
 *   <li>otherwise, for widths up to {@link #SEARCH_LIMIT}, the restricted block is read value by value and
 *       factored exactly (see {@link #factor}), which also catches representations that only exist because
 *       strides coincide (zero strides, carries that land on the same point).</li>
 * </ul>
 * A layout that cannot be grouped by {@code S} may still have a slice; then the whole box, up to
 * {@link #SEARCH_LIMIT} elements, is read in row-major order and factored.
 *
 * <p>Examples: {@code S[(8,8):(8,1)]} on {@code [2:6, 0:8]} is {@code S[(4,8):(8,1)] + 16};
 * {@code S[(8,8):(1,8)]} with shape {@code (64)} on {@code [4:12]} is {@code S[(2,4):(-31,8)] + 32} (one wrap);
 * {@code S[(4,4,4):(1,100,10)]} with shape {@code (64)} on {@code [30:34]} is {@code S[(2,2):(-319,10)] + 321}
 * (the carry ripples through two digits).
 */
public final class Slice {
    /** Largest number of values read one by one when no construction applies. */
    public static final long SEARCH_LIMIT = 1L << 16;

    private Slice() {}

    /**
     * The slice of {@code l} (admitting {@code shape}) on {@code region}. INVALID for bad operands,
     * NOT_REPRESENTABLE with the dimension, iter and reason when no layout reproduces the box.
     */
    public static Layout slice(Layout l, Shape shape, Region region) {
        return slice(l, shape, region, true).orElseThrow();
    }

    /** {@link #slice}, or the reason the slice is not representable (bad operands still throw). */
    public static Result<Layout> trySlice(Layout l, Shape shape, Region region) {
        return slice(l, shape, region, true);
    }

    /** The constructions alone (peel, no wrap, one wrap, repeated wrap), without reading values. */
    static Result<Layout> trySliceByConstruction(Layout l, Shape shape, Region region) {
        return slice(l, shape, region, false);
    }

    private static Result<Layout> slice(Layout l, Shape shape, Region region, boolean search) {
        if (!l.admits(shape)) {
            throw AxeException.invalid("slice of layout %s: shape %s (size %d) is not admitted by the layout (size %d)",
                    l, shape, shape.size(), l.size());
        }
        Optional<String> outside = region.outside(shape);
        if (outside.isPresent()) {
            throw AxeException.invalid("slice of layout %s by shape %s: %s", l, shape, outside.get());
        }
        // The subject of a refusal, built only when there is one (formatting the layout costs more than a slice).
        java.util.function.Supplier<String> subject =
                () -> String.format("slice of layout %s by shape %s on region %s", l, shape, region);
        Point origin = l.shardImage(shape.flatten(region.beginArray())); // D(b)
        Result<Grouped> grouped = Group.tryGroup(l, shape);
        List<Iter> shard = new ArrayList<>();
        if (grouped.isPresent()) {
            for (int k = 0; k < shape.rank(); k++) {
                Result<List<Iter>> block = sliceBlock(grouped.get().block(k), region.begin(k), region.width(k),
                        search);
                if (block.isEmpty()) {
                    return Result.absent("%s is not representable: dimension %d: %s", subject.get(), k, block.reason());
                }
                shard.addAll(Group.fuse(block.get()));
            }
        } else {
            String why = grouped.reason();
            long boxSize = region.extents().size();
            if (!search) {
                return Result.absent("%s is not representable by the constructions: %s", subject.get(), why);
            }
            if (boxSize > SEARCH_LIMIT) {
                return Result.absent("%s is not representable: %s, and the box has %d elements,"
                        + " more than the %d read one by one", subject.get(), why, boxSize, SEARCH_LIMIT);
            }
            Result<List<Iter>> box = factor(boxValues(l, shape, region, origin));
            if (box.isEmpty()) {
                return Result.absent("%s is not representable: %s, and the box read in row-major"
                        + " order is not the map of any iters: %s", subject.get(), why, box.reason());
            }
            shard.addAll(box.get());
        }
        TreeMap<Axis, Long> offset = new TreeMap<>(l.offset());
        for (Map.Entry<Axis, Long> e : origin.coords().entrySet()) {
            offset.merge(e.getKey(), e.getValue(), (x, y) -> Checks.add(() -> "slice offset on " + e.getKey(), x, y));
        }
        return Result.of(new Layout(shard, l.replica(), offset));
    }

    /** Iters reproducing {@code y -> f(lo + y) - f(lo)} on {@code [0, width)} for a block (outermost first). */
    private static Result<List<Iter>> sliceBlock(List<Iter> block, long lo, long width, boolean search) {
        Result<List<Iter>> built = construct(block, lo, width);
        if (built.isPresent()) {
            return built;
        }
        String where = String.format("range [%d, %d) of block %s", lo, lo + width, block);
        if (!search) {
            return Result.absent("%s: %s", where, built.reason());
        }
        if (width > SEARCH_LIMIT) {
            return Result.absent("%s: %s; widths above %d are not read one by one", where, built.reason(), SEARCH_LIMIT);
        }
        Layout blockLayout = Layout.of(block, List.of(), Map.of());
        Point start = blockLayout.shardImage(lo);
        Point[] values = new Point[(int) width];
        for (int y = 0; y < width; y++) {
            values[y] = blockLayout.shardImage(lo + y).minus(start);
        }
        Result<List<Iter>> found = factor(values);
        if (found.isPresent()) {
            return found;
        }
        return Result.absent("%s: %s; reading its %d values: %s", where, built.reason(), width, found.reason());
    }

    /** Peeling, then the no-wrap, one-wrap or repeated-wrap form; a reason naming the pivot otherwise. */
    private static Result<List<Iter>> construct(List<Iter> block, long lo, long width) {
        List<Iter> upper = new ArrayList<>(block);
        Deque<Iter> peeled = new ArrayDeque<>(); // slowest first
        while (width > 1) {
            Iter pivot = upper.get(upper.size() - 1); // width > 1 leaves a digit to count
            long e = pivot.extent();
            long beta = lo % e;
            long q = Checks.gcd(Checks.gcd(e, beta), width);
            if (q == e) { // beta = 0 and e | width: whole cycles of this digit
                peeled.addFirst(pivot);
                upper.remove(upper.size() - 1);
                lo /= e;
                width /= e;
                continue;
            }
            if (q > 1) { // (e, s) = (e/q, q*s), (q, s); the fast part runs whole cycles
                peeled.addFirst(pivot.withExtent(q));
                upper.set(upper.size() - 1, new Iter(e / q, Checks.mul("split stride", pivot.stride(), q), pivot.axis()));
                lo /= q;
                width /= q;
            }
            break;
        }
        List<Iter> out = new ArrayList<>();
        if (width > 1) {
            Iter pivot = upper.get(upper.size() - 1);
            long e = pivot.extent();
            long beta = lo % e;
            if (width <= e - beta) {
                out.add(pivot.withExtent(width)); // no wrap: the slower digits stay at their start
            } else if (width % 2 == 0 && width / 2 == e - beta) {
                long n = e - beta;
                Layout up = Layout.of(upper, List.of(), Map.of());
                Point jump = up.shardImage(lo + n).minus(up.shardImage(lo)); // start of run 2 minus start of run 1
                Optional<Iter> outer = iterAlong(2, jump, pivot.axis());
                if (outer.isEmpty()) {
                    return Result.absent("pivot iter %s (after peeling %s) wraps once from digit %d, and the jump %s"
                            + " across its carry moves more than one axis", pivot, List.copyOf(peeled), beta, jump);
                }
                out.add(outer.get());
                out.add(pivot.withExtent(n));
            } else if (e % 2 == 0 && beta == e / 2 && width % e == 0 && upper.size() >= 2) {
                long repeats = width / e;
                Iter next = upper.get(upper.size() - 2);
                long nextBeta = (lo / e) % next.extent();
                if (repeats >= next.extent() - nextBeta) {
                    return Result.absent("pivot iter %s (after peeling %s) wraps %d times from digit %d, and iter %s"
                            + " would carry from digit %d", pivot, List.copyOf(peeled), repeats, beta, next, nextBeta);
                }
                Point jump = Point.single(next.axis(), next.stride()).minus(Point.single(pivot.axis(),
                        Checks.mul("wrap jump", beta, pivot.stride())));
                Optional<Iter> middle = iterAlong(2, jump, pivot.axis());
                if (middle.isEmpty()) {
                    return Result.absent("pivot iter %s (after peeling %s) wraps %d times from digit %d, and the jump %s"
                            + " across each carry moves more than one axis", pivot, List.copyOf(peeled), repeats, beta, jump);
                }
                out.add(next.withExtent(repeats));
                out.add(middle.get());
                out.add(pivot.withExtent(beta));
            } else {
                return Result.absent("pivot iter %s (after peeling %s) counts %d values from digit %d: they neither stay"
                        + " within one cycle (%d + %d > %d) nor split into two runs of %d around one carry",
                        pivot, List.copyOf(peeled), width, beta, beta, width, e, e - beta);
            }
        }
        out.addAll(peeled);
        return Result.of(List.copyOf(out));
    }

    /** An iter of {@code extent} whose step is {@code step}; empty if the step moves two axes. */
    private static Optional<Iter> iterAlong(long extent, Point step, Axis zeroAxis) {
        Map<Axis, Long> c = step.coords();
        if (c.size() > 1) {
            return Optional.empty();
        }
        if (c.isEmpty()) {
            return Optional.of(new Iter(extent, 0, zeroAxis));
        }
        Map.Entry<Axis, Long> only = c.entrySet().iterator().next();
        return Optional.of(new Iter(extent, only.getValue(), only.getKey()));
    }

    /** {@code D(flat_S(b + y)) - D(b)} for every {@code y} of the box, in row-major order of {@code y}. */
    private static Point[] boxValues(Layout l, Shape shape, Region region, Point origin) {
        Shape widths = region.extents();
        long[] b = region.beginArray();
        Point[] values = new Point[(int) widths.size()];
        for (int z = 0; z < values.length; z++) {
            long[] c = widths.unflatten(z);
            for (int k = 0; k < c.length; k++) {
                c[k] += b[k];
            }
            values[z] = l.shardImage(shape.flatten(c)).minus(origin);
        }
        return values;
    }

    /**
     * Factors a sequence {@code g(0) = 0, g(1), ..., g(n-1)} into fused iters whose map it is, or says why
     * none exist. In a fused representation the fastest iter is {@code (r, g(1))} where {@code r} is the
     * first index at which the step {@code g(i) - g(i-1)} differs from {@code g(1)} (its successor's stride
     * would otherwise fuse with it); so {@code r} must divide {@code n}, every step inside a run of
     * {@code r} must be {@code g(1)}, and the run starts {@code g(0), g(r), g(2r), ...} must in turn be
     * the map of the slower iters. This decides representability exactly.
     */
    private static Result<List<Iter>> factor(Point[] values) {
        Deque<Iter> iters = new ArrayDeque<>();
        Point[] g = values;
        while (g.length > 1) {
            int n = g.length;
            Point step = g[1].minus(g[0]);
            int run = n;
            for (int i = 2; i < n; i++) {
                if (!g[i].minus(g[i - 1]).equals(step)) {
                    run = i;
                    break;
                }
            }
            if (n % run != 0) {
                return Result.absent("the values advance by %s for %d steps, and %d does not divide %d", step, run, run, n);
            }
            for (int i = run + 1; i < n; i++) {
                if (i % run != 0 && !g[i].minus(g[i - 1]).equals(step)) {
                    return Result.absent("the values advance by %s in runs of %d, but value %d advances by %s",
                            step, run, i, g[i].minus(g[i - 1]));
                }
            }
            Optional<Iter> it = iterAlong(run, step, Axis.M);
            if (it.isEmpty()) {
                return Result.absent("the step %s moves more than one axis", step);
            }
            iters.addFirst(it.get());
            Point[] starts = new Point[n / run];
            for (int a = 0; a < starts.length; a++) {
                starts[a] = g[a * run];
            }
            g = starts;
        }
        return Result.of(List.copyOf(iters));
    }
}
