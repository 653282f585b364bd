package org.axe4j.passes;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
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
        List<TreeSet<Point>> tableA = Oracle.table(a);
        List<TreeSet<Point>> tableB = Oracle.table(b);
        long[] t = new long[ta.rank()];
        for (int k = 0; k < t.length; k++) {
            t[k] = ta.dim(k) * tb.dim(k);
        }
        long[] ya = ta.toArray();
        long[] yb = tb.toArray();
        long size = ta.size() * tb.size();
        List<TreeSet<Point>> out = new ArrayList<>();
        long[] z = new long[t.length];
        for (long flat = 0; flat < size; flat++) {
            long[] x = new long[t.length];
            long[] y = new long[t.length];
            for (int k = 0; k < t.length; k++) {
                x[k] = z[k] / tb.dim(k);
                y[k] = z[k] % tb.dim(k);
            }
            TreeSet<Point> set = new TreeSet<>();
            for (Point p : tableA.get((int) Oracle.flat(ya, x))) {
                for (Point q : tableB.get((int) Oracle.flat(yb, y))) {
                    set.add(scaled(p, scale).plus(q));
                }
            }
            out.add(set);
            for (int k = t.length - 1; k >= 0; k--) { // row-major odometer over T
                if (++z[k] < t[k]) {
                    break;
                }
                z[k] = 0;
            }
        }
        return out;
    }

    static Point scaled(Point p, Map<Axis, Long> scale) {
        TreeMap<Axis, Long> m = new TreeMap<>();
        p.coords().forEach((a, v) -> m.put(a, v * scale.getOrDefault(a, 1L)));
        return new Point(m);
    }

    /**
     * The map TIRx's tile is observed to build: the outer shard and replicas scaled by TIRx's span of the inner
     * layout ({@code 1 + sum (e-1)*s + O_a}, strides with their sign, offset counted), the outer offset added
     * unscaled. Used to name the cause of a wrong tile answer, never as the required map.
     */
    static List<TreeSet<Point>> tirxTileModel(Layout a, Shape ta, Layout b, Shape tb) {
        Map<Axis, Long> scale = new TreeMap<>();
        for (Axis axis : b.axes()) {
            scale.put(axis, signedSpan(b, axis));
        }
        TreeMap<Axis, Long> offset = new TreeMap<>(b.offset());
        a.offset().forEach((axis, v) -> offset.merge(axis, v, Long::sum));
        return interleavedMap(a.withOffset(Map.of()), ta, b.withOffset(offset), tb, scale);
    }

    /** {@code 1 + sum (e-1)*s + O_a} over the shard and replica iters on {@code a}, with the sign of each stride. */
    static long signedSpan(Layout l, Axis a) {
        long span = 1 + l.offsetOn(a);
        for (List<Iter> part : List.of(l.shard(), l.replica())) {
            for (Iter it : part) {
                if (it.axis().equals(a)) {
                    span += (it.extent() - 1) * it.stride();
                }
            }
        }
        return span;
    }

    /** The features of tile operands that TIRx's tile convention treats differently, in words. */
    static String tileFeatures(Layout outer, Layout inner) {
        List<String> f = new ArrayList<>();
        if (inner.shard().stream().anyMatch(it -> it.stride() < 0 && it.extent() > 1)
                || inner.replica().stream().anyMatch(it -> it.stride() < 0 && it.extent() > 1)) {
            f.add("inner has a negative stride");
        }
        if (!inner.offset().isEmpty()) {
            f.add("inner has an offset");
        }
        if (!outer.offset().isEmpty()) {
            f.add("outer has an offset");
        }
        return f.isEmpty() ? "no offset, no negative inner stride" : String.join(", ", f);
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

    /** The layout without its extent-1 iters (shard and replica), which change nothing in the map. */
    static Layout withoutUnitIters(Layout l) {
        return new Layout(l.shard().stream().filter(it -> it.extent() != 1).toList(),
                l.replica().stream().filter(it -> it.extent() != 1).toList(), l.offset());
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
