package org.axe4j.cli;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.axe4j.layout.ApplyToShape;
import org.axe4j.layout.AxeException;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Canonicalize;
import org.axe4j.layout.DirectSumOf;
import org.axe4j.layout.Equivalence;
import org.axe4j.layout.Group;
import org.axe4j.layout.Grouped;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Packing;
import org.axe4j.layout.PermuteByGroups;
import org.axe4j.layout.Point;
import org.axe4j.layout.Region;
import org.axe4j.layout.Result;
import org.axe4j.layout.Shape;
import org.axe4j.layout.Slice;
import org.axe4j.layout.SwizzledLayout;
import org.axe4j.layout.SwizzledTile;
import org.axe4j.layout.Tile;
import org.axe4j.layout.WellFormed;

/**
 * The operations of the tool as JSON request to JSON answer, shared by {@code axe layout batch} and the
 * single commands' {@code --json}:
 *
 * <pre>
 *   apply   {layout, shape, coord}                       -> {points: [{axis: v, ...}, ...]}
 *           {.., mode: "count"}                          -> {count: N}            (nothing enumerated)
 *           {.., mode: "stream"}                         -> {points: [..], more: true} per chunk of
 *                                                           STREAM_CHUNK points, then {points: [..], more: false, count: N}
 *   inverse {layout, shape, point: {axis: v}}            -> {coord: [..]} or {coord: null}
 *   iters   {layout}                                     -> {shard: [[e,s,axis]..], replica: [..], offset: {axis: v}}
 *   group   {layout, shape}                              -> {layout, seps: [0, .., n]}
 *   canon   {layout}                                     -> {layout}
 *   equiv   {a, b}                                       -> {equivalent: true|false}
 *   tile    {outer, outer_shape, inner, inner_shape}     -> {layout, shape}   (shape = T_A ⊙ T_B)
 *   slice   {layout, shape, region: [[b, e], ..]}        -> {layout, shape}   (shape = e - b)
 *   storage {layout}                                     -> {layout}          (thread axes removed)
 *   pack    {layout, num}                                -> {layout}          (num contiguous elements as one)
 *   unpack  {layout, num}                                -> {layout}          (each element as num)
 *   tile_to {layout, shape, to_shape}                    -> {layout, shape}   (shape = to_shape)
 *   is_direct_sum_right {layout: B, sum, interleaved_shape, shape: B's} -> {layout: A} or {layout: null, reason}
 *   is_direct_sum_left  {layout: A, sum, interleaved_shape, shape: A's} -> {layout: B} or {layout: null, reason}
 *   permute_by_groups {layout, seps, perm}               -> {layout}
 *   apply_to_shape {layout, shape, coord}                -> {values, layout}  (layout: the shard they index)
 *   verify_well_formed {layout}                          -> {well_formed[, reason]}
 *   broadcast {layout, num[, position][, axis]}          -> {layout}          (num, 0@axis) inserted, position -1
 *   permute_dims {layout, perm}                          -> {layout}          shard iters in the order perm
 *   is_trivial / is_swizzle / is_trainium {layout}       -> {is_trivial: bool} / {is_swizzle} / {is_trainium}
 *   get_scope {layout}                                   -> {scope: ["thread", "cta"]} or {scope: null}
 *   trainium {annotation, shape[, is_psum]}              -> {layout, shape}   (TIRx's TileLayout.trainium)
 *   to_psum {layout}                                     -> {layout}          (F cut into PSUM banks of 512)
 *   size {layout[, axis]}                                -> {size: N}         (elements, or the shard's size on axis)
 *   span {layout[, axis]}                                -> {span: N}         (TIRx's: largest coordinate + 1)
 *   image_span {layout[, axis]}                          -> {image_span: N} or {image_span: {axis: N}}  (max - min + 1)
 *   count {layout, x} or {layout, shape, coord}          -> {count: N}        (|L(x)|, nothing enumerated)
 *   direct_sum {layout: B, left: A, left_shape, right_shape} -> {layout: A (+) B, shape, interleaved_shape}
 *   group_many {layout, shapes: [[..], ..]}              -> {layout, seps: [[0, .., n], ..]}  (one seps per shape)
 *   is_tile_inner {layout: B, tiled, tiled_shape, shape: B's} -> {layout: A, shape: A's} or {layout: null, reason}
 *   is_tile_outer {layout: A, tiled, tiled_shape, shape: A's} -> {layout: B, shape: B's} or {layout: null, reason}
 * </pre>
 *
 * broadcast .. to_psum are TIRx's remaining TileLayout / ComposeLayout methods ({@link TirxMethodOperations}); broadcast,
 * permute_dims and the three predicates take a swizzled layout too. size .. is_tile_outer are TIRx's sizes, direct
 * sum, group_many and tile-of ({@link TileLayoutOperations}, which says which of them take a swizzled layout).
 *
 * A swizzled layout ({@code "Swizzle<3,3,3> o S[(8,64):(64,1)]"}, TIRx's {@code ComposeLayout}) is taken by apply
 * (list and count), group, slice, storage, pack, unpack, tile_to, as the inner operand of tile, by size, span,
 * image_span and count, and by is_tile_inner / is_tile_outer (see {@link TileLayoutOperations}); its answers are
 * swizzled layouts in the same text form. The other operations refuse it by name.
 *
 * <p>Failures are AxeExceptions whose message starts with the operation and shows the request (cut to
 * {@link Json#ECHO_LIMIT} characters). Every operation runs under the caller's {@link org.axe4j.layout.Budget}.
 */
final class Operations {
    /** The operations this build answers, in the order help lists them. */
    static final List<String> OPS = List.of("apply", "inverse", "iters", "canon", "group", "tile", "slice", "equiv",
            "storage", "pack", "unpack", "tile_to", "is_direct_sum_right", "is_direct_sum_left", "permute_by_groups",
            "apply_to_shape", "verify_well_formed", "broadcast", "permute_dims", "is_trivial", "is_swizzle",
            "is_trainium", "get_scope", "trainium", "to_psum", "size", "span", "image_span", "count", "direct_sum",
            "group_many", "is_tile_inner", "is_tile_outer");

    /** Points per answer line of a streamed apply. */
    static final int STREAM_CHUNK = 1024;

    /** The answer to a request; a streamed apply hands its chunk lines to {@code partial} and returns its last line. */
    static JsonObject answer(JsonObject json, Consumer<JsonObject> partial) {
        JsonElement opField = json.get("op");
        if (opField != null && opField.isJsonPrimitive() && "apply".equals(opField.getAsString())) {
            return apply(new Request(json, "apply"), partial);
        }
        return answer(json);
    }

    private Operations() {}

    static JsonObject answer(JsonObject json) {
        JsonElement opField = json.get("op");
        if (opField == null || !opField.isJsonPrimitive() || !opField.getAsJsonPrimitive().isString()) {
            throw new AxeException(AxeException.Kind.INVALID,
                    "request needs a string field 'op' (one of " + String.join(", ", OPS) + "): " + Json.abbreviate(json));
        }
        Request r = new Request(json, opField.getAsString());
        return switch (r.op()) {
            case "apply" -> apply(r, chunk -> {
                throw r.invalid("a streamed apply needs a caller that takes several answer lines");
            });
            case "inverse" -> inverse(r);
            case "iters" -> iters(r);
            case "group" -> group(r);
            case "canon" -> canon(r);
            case "equiv" -> equiv(r);
            case "tile" -> tile(r);
            case "slice" -> slice(r);
            case "storage" -> r.isSwizzled("layout") ? swizzledAnswer(r, () -> r.swizzled("layout"))
                    : layoutAnswer(r, () -> Packing.storage(r.layout("layout")));
            case "pack" -> r.isSwizzled("layout")
                    ? swizzledAnswer(r, () -> Packing.pack(r.swizzled("layout"), r.integer("num")))
                    : layoutAnswer(r, () -> Packing.pack(r.layout("layout"), r.integer("num")));
            case "unpack" -> r.isSwizzled("layout")
                    ? swizzledAnswer(r, () -> Packing.unpack(r.swizzled("layout"), r.integer("num")))
                    : layoutAnswer(r, () -> Packing.unpack(r.layout("layout"), r.integer("num")));
            case "tile_to" -> tileTo(r);
            case "is_direct_sum_right", "is_direct_sum_left" -> directSumOf(r);
            case "permute_by_groups" -> layoutAnswer(r, () -> PermuteByGroups.permuteByGroups(r.layout("layout"),
                    ints(r, "seps"), ints(r, "perm")));
            case "apply_to_shape" -> applyToShape(r);
            case "verify_well_formed" -> wellFormed(r);
            case "broadcast", "permute_dims", "is_trivial", "is_swizzle", "is_trainium", "get_scope", "trainium",
                    "to_psum" -> TirxMethodOperations.answer(r);
            case "size", "span", "image_span", "count", "direct_sum", "group_many", "is_tile_inner", "is_tile_outer" ->
                TileLayoutOperations.answer(r);
            default -> throw new AxeException(AxeException.Kind.INVALID, "unknown op '" + r.op() + "' (known: "
                    + String.join(", ", OPS) + ") in request " + Json.abbreviate(json));
        };
    }

    /** Runs an operation, prefixing any failure with the operation and its operands. */
    static <T> T run(Request r, Supplier<T> body) {
        try {
            return body.get();
        } catch (AxeException e) {
            JsonObject operands = r.json().deepCopy();
            operands.remove("op");
            throw new AxeException(e.kind(), r.op() + " " + Json.abbreviate(operands) + ": " + e.getMessage(), e);
        }
    }

    static JsonObject apply(Request r, Consumer<JsonObject> partial) {
        if (r.isSwizzled("layout")) {
            return applySwizzled(r);
        }
        Layout l = r.layout("layout");
        Shape s = r.shape("shape");
        long[] coord = r.longs("coord");
        String mode = r.mode("list", "count", "stream");
        long x = run(r, () -> {
            l.requireAdmits(s);
            return s.flatten(coord);
        });
        JsonObject out = new JsonObject();
        switch (mode) {
            case "count" -> out.addProperty("count", run(r, () -> l.pointCount(x)));
            case "stream" -> {
                java.util.Iterator<Point> it = run(r, () -> l.points(x));
                long count = 0;
                JsonArray chunk = new JsonArray();
                while (run(r, it::hasNext)) {
                    chunk.add(Json.point(run(r, it::next)));
                    count++;
                    if (chunk.size() == STREAM_CHUNK && run(r, it::hasNext)) {
                        JsonObject line = new JsonObject();
                        line.add("points", chunk);
                        line.addProperty("more", true);
                        partial.accept(line);
                        chunk = new JsonArray();
                    }
                }
                out.add("points", chunk);
                out.addProperty("more", false);
                out.addProperty("count", count);
            }
            default -> out.add("points", Json.points(run(r, () -> l.apply(x))));
        }
        return out;
    }

    /** swz(L(x)) at a coordinate of {@code shape}; a bare swizzle admits any shape (TIRx's identity tile). */
    private static JsonObject applySwizzled(Request r) {
        SwizzledLayout l = r.swizzled("layout");
        Shape s = r.shape("shape");
        long[] coord = r.longs("coord");
        String mode = r.mode("list", "count");
        List<Point> points = run(r, () -> l.over(s).apply(s.flatten(coord)));
        JsonObject out = new JsonObject();
        if (mode.equals("count")) {
            out.addProperty("count", points.size());
        } else {
            out.add("points", Json.points(points));
        }
        return out;
    }

    static JsonObject inverse(Request r) {
        Layout l = r.layout("layout");
        Shape s = r.shape("shape");
        JsonElement pe = r.json().get("point");
        if (pe == null || !pe.isJsonObject()) {
            throw r.invalid("field 'point' must be an object of axis coordinates, e.g. {\"laneid\":8}");
        }
        TreeMap<Axis, Long> coords = new TreeMap<>();
        for (Map.Entry<String, JsonElement> e : pe.getAsJsonObject().entrySet()) {
            OptionalLong v = Json.integer(e.getValue());
            if (v.isEmpty()) {
                throw r.invalid("point coordinate '" + Json.abbreviate(e.getKey()) + "' must be an integer, got "
                        + Json.abbreviate(e.getValue()));
            }
            Axis a = run(r, () -> Axis.of(e.getKey()));
            coords.put(a, v.getAsLong());
        }
        Point p = new Point(coords);
        java.util.Optional<long[]> c = run(r, () -> l.inverse(s, p));
        JsonObject out = new JsonObject();
        out.add("coord", c.isPresent() ? Json.longs(c.get()) : com.google.gson.JsonNull.INSTANCE);
        return out;
    }

    static JsonObject iters(Request r) {
        Layout l = r.layout("layout");
        JsonObject out = new JsonObject();
        out.add("shard", Json.iters(l.shard()));
        out.add("replica", Json.iters(l.replica()));
        out.add("offset", Json.offset(l));
        return out;
    }

    static JsonObject group(Request r) {
        if (r.isSwizzled("layout")) {
            SwizzledLayout l = r.swizzled("layout");
            Shape s = r.shape("shape");
            Result<SwizzledLayout> g = run(r, () -> l.group(s));
            if (g.isEmpty()) {
                throw new AxeException(AxeException.Kind.NOT_REPRESENTABLE, "group: " + l + " by " + s + ": "
                        + g.reason());
            }
            return swizzledAnswer(r, g::get);
        }
        Layout l = r.layout("layout");
        Shape s = r.shape("shape");
        Grouped g = run(r, () -> Group.group(l, s));
        JsonObject out = new JsonObject();
        out.addProperty("layout", g.layout().toString());
        out.add("seps", Json.longs(g.seps()));
        return out;
    }

    static JsonObject canon(Request r) {
        Layout l = r.layout("layout");
        Layout c = run(r, () -> Canonicalize.canonicalize(l));
        JsonObject out = new JsonObject();
        out.addProperty("layout", c.toString());
        return out;
    }

    static JsonObject equiv(Request r) {
        Layout a = r.layout("a");
        Layout b = r.layout("b");
        boolean same = run(r, () -> Equivalence.equivalent(a, b));
        JsonObject out = new JsonObject();
        out.addProperty("equivalent", same);
        return out;
    }

    static JsonObject tile(Request r) {
        Layout outer = r.layout("outer");
        Shape outerShape = r.shape("outer_shape");
        Shape innerShape = r.shape("inner_shape");
        Object t = r.isSwizzled("inner")
                ? run(r, () -> SwizzledTile.tile(outer, outerShape, r.swizzled("inner"), innerShape))
                : run(r, () -> Tile.tile(outer, outerShape, r.layout("inner"), innerShape));
        JsonObject out = new JsonObject();
        out.addProperty("layout", t.toString());
        out.add("shape", Json.longs(run(r, () -> Tile.tiledShape(outerShape, innerShape)).dims()));
        return out;
    }

    private static JsonObject swizzledAnswer(Request r, Supplier<SwizzledLayout> body) {
        SwizzledLayout l = run(r, body);
        JsonObject out = new JsonObject();
        out.addProperty("layout", l.toString());
        return out;
    }

    private static JsonObject layoutAnswer(Request r, Supplier<Layout> body) {
        Layout l = run(r, body);
        JsonObject out = new JsonObject();
        out.addProperty("layout", l.toString());
        return out;
    }

    static JsonObject directSumOf(Request r) {
        Layout known = r.layout("layout");
        Layout sum = r.layout("sum");
        Shape interleaved = r.shape("interleaved_shape");
        Shape shape = r.shape("shape");
        Result<Layout> other = run(r, () -> r.op().equals("is_direct_sum_right")
                ? DirectSumOf.left(sum, interleaved, known, shape) : DirectSumOf.right(sum, interleaved, known, shape));
        JsonObject out = new JsonObject();
        if (other.isPresent()) {
            out.addProperty("layout", other.get().toString());
        } else {
            out.add("layout", com.google.gson.JsonNull.INSTANCE);
            out.addProperty("reason", other.reason());
        }
        return out;
    }

    private static List<Integer> ints(Request r, String name) {
        List<Integer> out = new ArrayList<>();
        for (long v : r.longs(name)) {
            if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) {
                throw r.invalid("field '" + name + "' entry " + v + " is out of range");
            }
            out.add((int) v);
        }
        return out;
    }

    static JsonObject applyToShape(Request r) {
        Layout l = r.layout("layout");
        Shape s = r.shape("shape");
        long[] coord = r.longs("coord");
        ApplyToShape.Values v = run(r, () -> ApplyToShape.applyToShape(l, s, coord));
        JsonObject out = new JsonObject();
        JsonArray values = new JsonArray();
        v.values().forEach(values::add);
        out.add("values", values);
        out.addProperty("layout", v.layout().toString());
        return out;
    }

    static JsonObject wellFormed(Request r) {
        Layout l = r.layout("layout");
        java.util.Optional<String> problem = run(r, () -> WellFormed.problem(l));
        JsonObject out = new JsonObject();
        out.addProperty("well_formed", problem.isEmpty());
        problem.ifPresent(p -> out.addProperty("reason", p));
        return out;
    }

    static JsonObject tileTo(Request r) {
        Shape s = r.shape("shape");
        Shape to = r.shape("to_shape");
        JsonObject out = r.isSwizzled("layout")
                ? swizzledAnswer(r, () -> SwizzledTile.tileTo(r.swizzled("layout"), to, s))
                : layoutAnswer(r, () -> Packing.tileTo(r.layout("layout"), to, s));
        out.add("shape", Json.longs(to.dims()));
        return out;
    }

    static JsonObject slice(Request r) {
        Shape s = r.shape("shape");
        List<long[]> intervals = r.intervals("region");
        Region region = run(r, () -> Region.of(intervals.toArray(new long[0][])));
        Object sliced = r.isSwizzled("layout") ? run(r, () -> swizzledSlice(r.swizzled("layout"), s, region))
                : run(r, () -> Slice.slice(r.layout("layout"), s, region));
        JsonObject out = new JsonObject();
        out.addProperty("layout", sliced.toString());
        out.add("shape", Json.longs(region.extents().dims()));
        return out;
    }

    private static SwizzledLayout swizzledSlice(SwizzledLayout l, Shape s, Region region) {
        Result<SwizzledLayout> sliced = l.slice(s, region);
        if (sliced.isEmpty()) {
            throw new AxeException(AxeException.Kind.NOT_REPRESENTABLE, "slice: " + l + " over " + s + " on " + region
                    + ": " + sliced.reason());
        }
        return sliced.get();
    }
}
