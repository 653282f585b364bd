package org.axe4j.cli;

import static org.axe4j.cli.Operations.run;

import com.google.gson.JsonArray;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.axe4j.layout.AxeException;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Checks;
import org.axe4j.layout.DirectSum;
import org.axe4j.layout.Equivalence;
import org.axe4j.layout.GroupMany;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Result;
import org.axe4j.layout.Shape;
import org.axe4j.layout.SwizzledLayout;
import org.axe4j.layout.SwizzledTile;
import org.axe4j.layout.Tile;
import org.axe4j.layout.TileOf;

/**
 * The batch operations for TIRx's TileLayout sizes, sums and factorings (the same algebra as the
 * {@code axe4j.layout.*} globals of these names):
 *
 * <pre>
 *   size          {layout[, axis]}                      -> {size: N}          elements, or the shard's size on axis
 *   span          {layout[, axis]}                      -> {span: N}          TIRx's: largest coordinate + 1
 *   image_span    {layout[, axis]}                      -> {image_span: N} or {image_span: {axis: N}}  max - min + 1
 *   count         {layout, x} or {layout, shape, coord} -> {count: N}         |L(x)|, nothing enumerated
 *   direct_sum    {layout: B, left: A, left_shape, right_shape}
 *                                                       -> {layout: A (+) B, shape, interleaved_shape}
 *   group_many    {layout, shapes: [[..], ..]}          -> {layout, seps: [[0, .., n], ..]}  one seps per shape
 *   is_tile_inner {layout: B, tiled, tiled_shape, shape: B's} -> {layout: A, shape: A's} or {layout: null, reason}
 *   is_tile_outer {layout: A, tiled, tiled_shape, shape: A's} -> {layout: B, shape: B's} or {layout: null, reason}
 * </pre>
 *
 * TIRx's argument conventions: {@code direct_sum} is {@code B.direct_sum(A, ...)} = {@code A (+) B} over the shape
 * {@code T_A ⊙ T_B}; {@code is_tile_inner} is {@code B.is_tile_inner(tiled, ...)}, the outer A with
 * {@code tiled == A (x) B}. A swizzled layout ({@code Swizzle<B,M,S> o L}) is taken by size (its tile's), span (the
 * swizzled image enumerated on m), image_span (its tile's, what tile scales by), count, and by is_tile_inner (both
 * layouts) and is_tile_outer (the tiled layout; the outer one is a plain layout), through {@link SwizzledTile};
 * direct_sum and group_many refuse it by name. Unlike the TVM global, tile-of fuses no CUDA thread axes (no target).
 */
final class TileLayoutOperations {
    private TileLayoutOperations() {}

    /** The operations of this class, in the order help lists them. */
    static final List<String> OPS = List.of("size", "span", "image_span", "count", "direct_sum", "group_many",
            "is_tile_inner", "is_tile_outer");

    /** TIRx's memory axes ({@code tirx.AxisIsMemoryAxis} over {@code tvm.tirx.layout._AXIS_NAMES}). */
    static final Set<Axis> TIRX_MEMORY_AXES = Set.of(Axis.M, Axis.of("P"), Axis.of("F"), Axis.of("Bank"),
            Axis.of("TCol"), Axis.of("TLane"));

    /** The answer to a request whose op is one of {@link #OPS}. */
    static JsonObject answer(Request r) {
        return switch (r.op()) {
            case "size" -> size(r);
            case "span" -> span(r);
            case "image_span" -> imageSpan(r);
            case "count" -> count(r);
            case "direct_sum" -> directSum(r);
            case "group_many" -> groupMany(r);
            case "is_tile_inner", "is_tile_outer" -> tileOf(r);
            default -> throw new IllegalStateException("not an operation of this class: " + r.op());
        };
    }

    /** The layout's tile: a swizzled layout's unswizzled layout, else the layout. */
    private static Layout tile(Request r, String name) {
        return r.isSwizzled(name) ? r.swizzled(name).layout() : r.layout(name);
    }

    private static Axis axis(Request r) {
        String name = r.string("axis");
        return run(r, () -> Axis.of(name));
    }

    private static JsonObject size(Request r) {
        Layout l = tile(r, "layout");
        JsonObject out = new JsonObject();
        out.addProperty("size", r.has("axis") ? l.sizeOn(axis(r)) : l.size());
        return out;
    }

    /**
     * TIRx's span: {@code 1 + max_a} with {@code max_a = O_a + sum (e-1) * max(s, 0)} over the shard and replica iters
     * on the axis; without an axis summed over TIRx's memory axes of the layout (one address). A swizzled layout's
     * largest m is found by enumerating its image (up to {@link Equivalence#RUN_LIMIT} elements).
     */
    private static JsonObject span(Request r) {
        boolean swizzled = r.isSwizzled("layout");
        SwizzledLayout s = swizzled ? r.swizzled("layout") : null;
        Layout l = swizzled ? s.layout() : r.layout("layout");
        List<Axis> axes = new ArrayList<>();
        if (r.has("axis")) {
            axes.add(axis(r));
        } else {
            for (Axis a : new TreeSet<>(l.axes())) {
                if (TIRX_MEMORY_AXES.contains(a)) {
                    axes.add(a);
                }
            }
        }
        long top = run(r, () -> {
            long sum = 1;
            for (Axis a : axes) {
                long max = swizzled && a.equals(Axis.M) ? s.largestAddress() : l.largestOn(a);
                sum = Checks.add(() -> "span of " + l + " (largest coordinate + 1)", sum, max);
            }
            return sum;
        });
        JsonObject out = new JsonObject();
        out.addProperty("span", top);
        return out;
    }

    private static JsonObject imageSpan(Request r) {
        Layout l = tile(r, "layout");
        JsonObject out = new JsonObject();
        if (r.has("axis")) {
            Axis a = axis(r);
            out.addProperty("image_span", run(r, () -> l.spanOn(a)));
        } else {
            JsonObject spans = new JsonObject();
            run(r, l::spans).forEach((a, v) -> spans.addProperty(a.name(), v));
            out.add("image_span", spans);
        }
        return out;
    }

    /**
     * {@code |L(x)|} at a flat index {@code x} or a coordinate of {@code shape}, from the replica count; a swizzle is
     * a bijection, so a swizzled layout counts its tile's points (a bare swizzle: one at any x >= 0).
     */
    private static JsonObject count(Request r) {
        boolean swizzled = r.isSwizzled("layout");
        SwizzledLayout s = swizzled ? r.swizzled("layout") : null;
        Layout l = swizzled ? s.layout() : r.layout("layout");
        long n;
        if (r.has("shape") || r.has("coord")) {
            Shape shape = r.shape("shape");
            long[] coord = r.longs("coord");
            n = run(r, () -> {
                Layout over = swizzled ? s.over(shape).layout() : l;
                over.requireAdmits(shape);
                return over.pointCount(shape.flatten(coord));
            });
        } else {
            long x = r.integer("x");
            n = run(r, () -> swizzled && s.isBare() ? s.applyAny(x).size() : l.pointCount(x));
        }
        JsonObject out = new JsonObject();
        out.addProperty("count", n);
        return out;
    }

    private static JsonObject directSum(Request r) {
        Layout right = r.layout("layout");
        Layout left = r.layout("left");
        Shape leftShape = r.shape("left_shape");
        Shape rightShape = r.shape("right_shape");
        Layout sum = run(r, () -> DirectSum.directSum(left, leftShape, right, rightShape));
        JsonObject out = new JsonObject();
        out.addProperty("layout", sum.toString());
        out.add("shape", Json.longs(run(r, () -> Tile.tiledShape(leftShape, rightShape)).dims()));
        out.add("interleaved_shape", Json.longs(run(r, () -> Tile.interleavedShape(leftShape, rightShape)).dims()));
        return out;
    }

    private static JsonObject groupMany(Request r) {
        Layout l = r.layout("layout");
        List<Shape> shapes = r.shapes("shapes");
        GroupMany.Result g = run(r, () -> GroupMany.groupMany(l, shapes));
        JsonObject out = new JsonObject();
        out.addProperty("layout", g.layout().toString());
        JsonArray seps = new JsonArray();
        for (List<Integer> one : g.seps()) {
            JsonArray a = new JsonArray();
            one.forEach(a::add);
            seps.add(a);
        }
        out.add("seps", seps);
        return out;
    }

    /**
     * is_tile_inner: the outer A with {@code tiled == A (x) layout}; is_tile_outer: the inner B with
     * {@code tiled == layout (x) B}. A swizzled operand goes through {@link SwizzledTile} (a plain one then counts as
     * the identity swizzle), as the TVM global {@code tile_of} does.
     */
    private static JsonObject tileOf(Request r) {
        boolean inner = r.op().equals("is_tile_inner");
        Shape tiledShape = r.shape("tiled_shape");
        Shape partShape = r.shape("shape");
        Result<?> other;
        if (r.isSwizzled("layout") || r.isSwizzled("tiled")) {
            SwizzledLayout tiled = swizzledOrIdentity(r, "tiled");
            other = inner ? run(r, () -> SwizzledTile.outer(tiled, tiledShape, swizzledOrIdentity(r, "layout"),
                    partShape)) : run(r, () -> SwizzledTile.inner(tiled, tiledShape, r.layout("layout"), partShape));
        } else {
            Layout part = r.layout("layout");
            Layout tiled = r.layout("tiled");
            other = inner ? run(r, () -> TileOf.outer(tiled, tiledShape, part, partShape))
                    : run(r, () -> TileOf.inner(tiled, tiledShape, part, partShape));
        }
        JsonObject out = new JsonObject();
        if (other.isPresent()) {
            out.addProperty("layout", other.get().toString());
            out.add("shape", Json.longs(quotient(tiledShape, partShape)));
        } else {
            out.add("layout", JsonNull.INSTANCE);
            out.addProperty("reason", other.reason());
        }
        return out;
    }

    /** A swizzled layout, or a plain one under the identity swizzle (memory axis m only, else INVALID naming it). */
    private static SwizzledLayout swizzledOrIdentity(Request r, String name) {
        if (r.isSwizzled(name)) {
            return r.swizzled(name);
        }
        Layout l = r.layout(name);
        try {
            return new SwizzledLayout(org.axe4j.layout.Swizzle.IDENTITY, l);
        } catch (AxeException e) {
            throw new AxeException(e.kind(), r.op() + ": field '" + name + "': " + e.getMessage(), e);
        }
    }

    /** {@code T / T_part}, dimension by dimension (the factor's shape; tile-of checked that it divides). */
    private static long[] quotient(Shape whole, Shape part) {
        long[] q = new long[whole.rank()];
        for (int k = 0; k < q.length; k++) {
            q[k] = whole.dim(k) / part.dim(k);
        }
        return q;
    }
}
