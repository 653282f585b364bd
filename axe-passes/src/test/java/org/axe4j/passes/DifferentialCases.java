package org.axe4j.passes;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Iter;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Oracle;
import org.axe4j.layout.Point;
import org.axe4j.layout.RandomLayouts;
import org.axe4j.layout.Region;
import org.axe4j.layout.Shape;

/**
 * Operands for the differential test and the maps its answers must induce, by enumeration.
 *
 * <p>Layouts come from {@link RandomLayouts} with its axes renamed to axes TIRx registers (it refuses
 * to canonicalize over an axis it has no thread attribute for): {@code m}, {@code TLane} and {@code TCol}
 * are memory axes, {@code laneid} and {@code warpid} thread axes. Thread axes are kept to these two, which
 * always form a connected scope chain (thread in warp, warp in CTA): TIRx rejects a layout whose thread
 * axes do not (e.g. {@code laneid} with {@code wgid}: "Ill-formed tile layout: disconnected scope chain"),
 * a well-formedness rule outside the algebra compared here.
 *
 * <p>Required maps, with {@code z_k = x_k * T_B[k] + y_k}:
 * <pre>
 *   tile        L(z) = { a ⊙ span(B) + b : a in A(x), b in B(y) }   span_a(B) = max - min + 1 of B's image on a
 *   direct sum  L(z) = { a + b : a in A(x), b in B(y) }
 *   slice       L'(y) = L(begin + y)
 *   span_a(L)   = max - min + 1 over every point of L's image on axis a
 * </pre>
 */
final class DifferentialCases {
    private DifferentialCases() {}

    static final Map<Axis, Axis> TIRX_AXES = Map.of(Axis.of("gpuid"), Axis.of("TLane"), Axis.of("reg"), Axis.of("TCol"));

    static Axis tirxAxis(Axis a) {
        return TIRX_AXES.getOrDefault(a, a);
    }

    static Layout onTirxAxes(Layout l) {
        TreeMap<Axis, Long> offset = new TreeMap<>();
        l.offset().forEach((a, v) -> offset.merge(tirxAxis(a), v, Long::sum));
        return new Layout(renamed(l.shard()), renamed(l.replica()), offset);
    }

    private static List<Iter> renamed(List<Iter> iters) {
        return iters.stream().map(it -> new Iter(it.extent(), it.stride(), tirxAxis(it.axis()))).toList();
    }

    /** A general layout: up to 5 shard iters, sometimes replicas and an offset. */
    static Layout layout(Random r) {
        return onTirxAxes(RandomLayouts.layout(r));
    }

    /** A shape of the given rank, dimensions from {1, 2, 3, 4, 6, 8}, size at most {@code maxSize}. */
    static Shape shape(Random r, int rank, long maxSize) {
        long[] choices = {1, 2, 2, 3, 4, 4, 6, 8};
        long[] dims = new long[rank];
        long size = 1;
        for (int k = 0; k < rank; k++) {
            long d = choices[r.nextInt(choices.length)];
            while (size * d > maxSize) {
                d = Math.max(1, d / 2);
            }
            dims[k] = d;
            size *= d;
        }
        return Shape.of(dims);
    }

    /**
     * A layout grouped by {@code shape} by construction: each dimension an ordered factorisation into one or
     * two iters, strides compact, arbitrary, zero or negative, on random axes; replicas and offset as
     * {@link RandomLayouts} draws them.
     */
    static Layout grouped(Random r, Shape shape) {
        List<Iter> shard = new ArrayList<>();
        long compact = 1;
        for (int k = shape.rank() - 1; k >= 0; k--) {
            long d = shape.dim(k);
            List<Long> extents = new ArrayList<>();
            long f = smallestFactor(d);
            if (f < d && r.nextBoolean()) {
                extents.add(d / f);
                extents.add(f);
            } else {
                extents.add(d);
            }
            List<Iter> block = new ArrayList<>();
            for (int i = extents.size() - 1; i >= 0; i--) {
                long e = extents.get(i);
                long s = switch (r.nextInt(6)) {
                    case 0, 1 -> compact;
                    case 2 -> r.nextInt(7);
                    case 3 -> -1 - r.nextInt(3);
                    case 4 -> compact * (1 + r.nextInt(3));
                    default -> 1L << r.nextInt(4);
                };
                block.add(0, new Iter(e, s, RandomLayouts.axis(r)));
                compact *= e;
            }
            shard.addAll(0, block);
        }
        return onTirxAxes(new Layout(shard, RandomLayouts.replica(r), RandomLayouts.offset(r)));
    }

    private static long smallestFactor(long n) {
        for (long p = 2; p * p <= n; p++) {
            if (n % p == 0) {
                return p;
            }
        }
        return n;
    }

    /** A box inside {@code shape}: per dimension a random begin and a width that fits. */
    static Region region(Random r, Shape shape) {
        long[] begin = new long[shape.rank()];
        long[] widths = new long[shape.rank()];
        for (int k = 0; k < shape.rank(); k++) {
            long d = shape.dim(k);
            begin[k] = r.nextInt(4) == 0 ? 0 : r.nextInt((int) d);
            long room = d - begin[k];
            widths[k] = r.nextInt(3) == 0 ? room : 1 + r.nextInt((int) room);
        }
        return Region.at(begin, widths);
    }

    /**
     * A box of a one-dimensional shape that wraps the fastest digit once: it starts {@code beta} into a run of
     * the fastest iter (extent {@code e}) and is {@code 2(e - beta)} wide, so the carry between its two halves
     * may ripple through several slower digits. Empty when the layout has no iter of extent above 2.
     */
    static Optional<Region> oneWrapRegion(Random r, Layout l) {
        List<Iter> shard = l.shard().stream().filter(it -> it.extent() > 1).toList();
        if (shard.isEmpty() || shard.get(shard.size() - 1).extent() < 3) {
            return Optional.empty();
        }
        long e = shard.get(shard.size() - 1).extent();
        long beta = 1 + r.nextInt((int) e - 1);
        long width = 2 * (e - beta);
        long runs = l.size() / e;
        if (runs < 2) {
            return Optional.empty();
        }
        long begin = r.nextInt((int) runs - 1) * e + beta;
        return Optional.of(Region.at(new long[] {begin}, new long[] {width}));
    }

    // ---- required maps ---------------------------------------------------------------------------------

    /** {@code max - min + 1} of the image on every axis that occurs in it or in the layout's iters. */
    static Map<Axis, Long> enumeratedSpan(Layout l) {
        TreeSet<Axis> axes = new TreeSet<>(l.axes());
        List<TreeSet<Point>> table = Oracle.table(l);
        table.forEach(set -> set.forEach(p -> axes.addAll(p.coords().keySet())));
        TreeMap<Axis, Long> span = new TreeMap<>();
        for (Axis a : axes) {
            long lo = Long.MAX_VALUE;
            long hi = Long.MIN_VALUE;
            for (TreeSet<Point> set : table) {
                for (Point p : set) {
                    lo = Math.min(lo, p.get(a));
                    hi = Math.max(hi, p.get(a));
                }
            }
            span.put(a, hi - lo + 1);
        }
        return span;
    }

    /** The tile map with the outer images scaled by {@code scale} per axis (1 where absent); no scale is a direct sum. */
    static List<TreeSet<Point>> interleavedMap(Layout a, Shape ta, Layout b, Shape tb, Map<Axis, Long> scale) {
        List<TreeSet<Point>> out = new ArrayList<>();
        interleaved(a, ta, b, tb, scale, (z, set) -> out.add(set));
        return out;
    }

    /** Whether the interleaved map equals {@code target}, stopping at the first index where it does not. */
    static boolean interleavedMatches(Layout a, Shape ta, Layout b, Shape tb, Map<Axis, Long> scale,
                                      List<TreeSet<Point>> target) {
        return target.size() == ta.size() * tb.size()
                && interleaved(a, ta, b, tb, scale, (z, set) -> set.equals(target.get((int) z)));
    }

    /** Receives the set at each flat index in turn; returning false stops the enumeration. */
    @FunctionalInterface
    interface SetVisitor {
        boolean visit(long z, TreeSet<Point> set);
    }

    /**
     * Enumerates {@code L(z) = { a ⊙ scale + b : a in A(x), b in B(y) }} over {@code T = T_A * T_B} in row-major
     * order, {@code z_k = x_k * T_B[k] + y_k}; true iff the visitor accepted every set.
     */
    static boolean interleaved(Layout a, Shape ta, Layout b, Shape tb, Map<Axis, Long> scale, SetVisitor visitor) {
        List<TreeSet<Point>> tableA = Oracle.table(a);
        List<TreeSet<Point>> tableB = Oracle.table(b);
        List<List<Point>> scaledA = new ArrayList<>();
        for (TreeSet<Point> set : tableA) {
            scaledA.add(set.stream().map(p -> scaled(p, scale)).toList());
        }
        long[] t = new long[ta.rank()];
        for (int k = 0; k < t.length; k++) {
            t[k] = ta.dim(k) * tb.dim(k);
        }
        long[] ya = ta.toArray();
        long[] yb = tb.toArray();
        long size = ta.size() * tb.size();
        long[] z = new long[t.length];
        for (long flat = 0; flat < size; flat++) {
            long[] x = new long[t.length];
            long[] y = new long[t.length];
            for (int k = 0; k < t.length; k++) {
                x[k] = z[k] / tb.dim(k);
                y[k] = z[k] % tb.dim(k);
            }
            TreeSet<Point> set = new TreeSet<>();
            for (Point p : scaledA.get((int) Oracle.flat(ya, x))) {
                for (Point q : tableB.get((int) Oracle.flat(yb, y))) {
                    set.add(p.plus(q));
                }
            }
            if (!visitor.visit(flat, set)) {
                return false;
            }
            for (int k = t.length - 1; k >= 0; k--) { // row-major odometer over T
                if (++z[k] < t[k]) {
                    break;
                }
                z[k] = 0;
            }
        }
        return true;
    }

    static Point scaled(Point p, Map<Axis, Long> scale) {
        TreeMap<Axis, Long> m = new TreeMap<>();
        p.coords().forEach((a, v) -> m.put(a, v * scale.getOrDefault(a, 1L)));
        return new Point(m);
    }

    /** The ways TIRx's tile departs from {@code A (x) B}, each observed on TIRx and named here. */
    enum TileDeviation {
        SIGNED_SPAN("strides counted with their sign in the span"),
        OFFSET_IN_SPAN("inner offset counted in the span"),
        SHARD_AXES_ONLY("axes without an inner shard iter not scaled"),
        OUTER_REPLICAS_UNSCALED("outer replicas not scaled"),
        OUTER_OFFSET_UNSCALED("outer offset not scaled");

        final String words;

        TileDeviation(String words) {
            this.words = words;
        }
    }

    /**
     * Whether {@code tiled} is the tile map with some of TIRx's deviations: with none it is {@code A (x) B}; with all it is what TIRx's
     * {@code LayoutTile} is observed to build: the outer shard scaled, only on the axes of inner shard iters of extent above 1, by TIRx's span
     * of the inner layout {@code 1 + sum (e-1)*s + O_a} (signed strides, offset counted), the outer replicas and
     * offset added unscaled. Used to name the cause of a wrong answer, never as the required map.
     */
    static boolean tileModelMatches(Layout a, Shape ta, Layout b, Shape tb, Set<TileDeviation> on,
                                    List<TreeSet<Point>> tiled) {
        TreeSet<Axis> axes = new TreeSet<>(a.axes());
        axes.addAll(b.axes());
        Set<Axis> innerShardAxes = new TreeSet<>();
        b.shard().stream().filter(it -> it.extent() > 1).forEach(it -> innerShardAxes.add(it.axis()));
        Map<Axis, Long> scale = new TreeMap<>();
        for (Axis axis : axes) {
            long span = 1 + (on.contains(TileDeviation.OFFSET_IN_SPAN) ? b.offsetOn(axis) : 0);
            for (List<Iter> part : List.of(b.shard(), b.replica())) {
                for (Iter it : part) {
                    if (it.axis().equals(axis)) {
                        span += (it.extent() - 1)
                                * (on.contains(TileDeviation.SIGNED_SPAN) ? it.stride() : Math.abs(it.stride()));
                    }
                }
            }
            boolean scaled = !on.contains(TileDeviation.SHARD_AXES_ONLY) || innerShardAxes.contains(axis);
            scale.put(axis, scaled ? span : 1);
        }
        boolean replicasAside = on.contains(TileDeviation.OUTER_REPLICAS_UNSCALED);
        boolean offsetAside = on.contains(TileDeviation.OUTER_OFFSET_UNSCALED);
        Layout outer = new Layout(a.shard(), replicasAside ? List.of() : a.replica(),
                offsetAside ? new TreeMap<>() : a.offset());
        List<Iter> innerReplica = new ArrayList<>(b.replica());
        if (replicasAside) {
            innerReplica.addAll(a.replica());
        }
        TreeMap<Axis, Long> innerOffset = new TreeMap<>(b.offset());
        if (offsetAside) {
            a.offset().forEach((axis, v) -> innerOffset.merge(axis, v, Long::sum));
        }
        return interleavedMatches(outer, ta, new Layout(b.shard(), innerReplica, innerOffset), tb, scale, tiled);
    }

    /**
     * The fewest deviations ({@link #tileModelMatches}) that turn {@code A (x) B} into {@code tiled}: one, or two; an
     * empty list when only three or more do; empty (no list) when not even all of them explain it.
     */
    static Optional<List<TileDeviation>> tirxTileDeviations(Layout a, Shape ta, Layout b, Shape tb,
                                                            List<TreeSet<Point>> tiled) {
        if (a.size() != ta.size() || b.size() != tb.size()) {
            return Optional.empty();
        }
        if (!tileModelMatches(a, ta, b, tb, EnumSet.allOf(TileDeviation.class), tiled)) {
            return Optional.empty();
        }
        TileDeviation[] all = TileDeviation.values();
        for (TileDeviation d : all) {
            if (tileModelMatches(a, ta, b, tb, EnumSet.of(d), tiled)) {
                return Optional.of(List.of(d));
            }
        }
        for (int i = 0; i < all.length; i++) {
            for (int j = i + 1; j < all.length; j++) {
                if (tileModelMatches(a, ta, b, tb, EnumSet.of(all[i], all[j]), tiled)) {
                    return Optional.of(List.of(all[i], all[j]));
                }
            }
        }
        return Optional.of(List.of());
    }

    /** {@code L'(y) = L(begin + y)} over the widths of the region, row-major. */
    static List<TreeSet<Point>> sliceMap(Layout l, Shape shape, Region region) {
        List<TreeSet<Point>> table = Oracle.table(l);
        Shape widths = region.extents();
        long[] dims = shape.toArray();
        List<TreeSet<Point>> out = new ArrayList<>();
        for (long y = 0; y < widths.size(); y++) {
            long[] c = widths.unflatten(y);
            for (int k = 0; k < c.length; k++) {
                c[k] += region.begin(k);
            }
            out.add(table.get((int) Oracle.flat(dims, c)));
        }
        return out;
    }

    /** True iff {@code l} has the size of {@code table} and induces it. */
    static boolean induces(Layout l, List<TreeSet<Point>> table) {
        return l.size() == table.size() && Oracle.table(l).equals(table);
    }

    /** The first index where {@code l} leaves the required map, shown as {@code x: got ..., required ...}. */
    static String firstDifference(Layout l, List<TreeSet<Point>> table) {
        if (l.size() != table.size()) {
            return "size " + l.size() + ", required " + table.size();
        }
        List<TreeSet<Point>> got = Oracle.table(l);
        for (int x = 0; x < table.size(); x++) {
            if (!got.get(x).equals(table.get(x))) {
                return "at " + x + " gives " + got.get(x) + ", required " + table.get(x);
            }
        }
        return "no difference";
    }

    /** Weight of an example: iters first, then domain size, summed over the operands. */
    static long weight(Layout... layouts) {
        long w = 0;
        for (Layout l : layouts) {
            w += 10_000L * (l.shard().size() + l.replica().size() + l.offset().size()) + l.size();
        }
        return w;
    }
}
