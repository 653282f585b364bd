package org.axe4j.cli;

import static org.axe4j.cli.Operations.run;

import com.google.gson.JsonArray;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;
import org.axe4j.layout.Axis;
import org.axe4j.layout.AxisScope;
import org.axe4j.layout.Broadcast;
import org.axe4j.layout.Layout;
import org.axe4j.layout.PermuteDims;
import org.axe4j.layout.ScopePair;
import org.axe4j.layout.Shape;
import org.axe4j.layout.SwizzledLayout;
import org.axe4j.layout.TrainiumLayout;
import org.axe4j.layout.Trivial;

/**
 * The batch operations for the rest of TIRx's public TileLayout / ComposeLayout methods (the same algebra as the
 * {@code axe4j.layout.*} globals of these names):
 *
 * <pre>
 *   broadcast    {layout, num[, position = -1][, axis = "m"]} -> {layout}   (num, 0@axis) inserted into the shard
 *   permute_dims {layout, perm}                   -> {layout}               shard iter k = iter perm[k]
 *   is_trivial   {layout}                         -> {is_trivial: bool}     identity onto one memory axis
 *   is_swizzle   {layout}                         -> {is_swizzle: bool}     a swizzle over a trivial tile
 *   is_trainium  {layout}                         -> {is_trainium: bool}    shard on no memory axis but P, F, Bank
 *   get_scope    {layout}                         -> {scope: [unit, scope]} or {scope: null}
 *   trainium     {annotation, shape[, is_psum]}   -> {layout, shape}        TIRx's TileLayout.trainium
 *   to_psum      {layout}                         -> {layout}               F cut into PSUM banks of 512
 * </pre>
 *
 * broadcast, permute_dims and the predicates take a swizzled layout ({@code Swizzle<B,M,S> o L}): broadcast (on m)
 * and permute_dims act on its tile and keep the swizzle.
 */
final class TirxMethodOperations {
    private TirxMethodOperations() {}

    /** The operations of this class, in the order help lists them. */
    static final List<String> OPS = List.of("broadcast", "permute_dims", "is_trivial", "is_swizzle", "is_trainium",
            "get_scope", "trainium", "to_psum");

    /** The answer to a request whose op is one of {@link #OPS}. */
    static JsonObject answer(Request r) {
        return switch (r.op()) {
            case "broadcast" -> broadcast(r);
            case "permute_dims" -> permuteDims(r);
            case "is_trivial", "is_swizzle", "is_trainium" -> predicate(r);
            case "get_scope" -> scope(r);
            case "trainium" -> trainium(r);
            case "to_psum" -> layout(r, () -> TrainiumLayout.toPsum(r.layout("layout")));
            default -> throw new IllegalStateException("not an operation of this class: " + r.op());
        };
    }

    private static JsonObject broadcast(Request r) {
        long num = r.integer("num");
        long position = r.has("position") ? r.integer("position") : -1;
        Axis axis = r.has("axis") ? run(r, () -> Axis.of(r.string("axis"))) : Axis.M;
        if (r.isSwizzled("layout")) {
            SwizzledLayout l = r.swizzled("layout");
            return text(run(r, () -> new SwizzledLayout(l.swizzle(), Broadcast.broadcast(l.layout(), num, position,
                    axis))));
        }
        return layout(r, () -> Broadcast.broadcast(r.layout("layout"), num, position, axis));
    }

    private static JsonObject permuteDims(Request r) {
        List<Integer> perm = new ArrayList<>();
        for (long v : r.longs("perm")) {
            if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) {
                throw r.invalid("field 'perm' entry " + v + " is out of range");
            }
            perm.add((int) v);
        }
        if (r.isSwizzled("layout")) {
            SwizzledLayout l = r.swizzled("layout");
            return text(run(r, () -> new SwizzledLayout(l.swizzle(), PermuteDims.permuteDims(l.layout(), perm))));
        }
        return layout(r, () -> PermuteDims.permuteDims(r.layout("layout"), perm));
    }

    private static JsonObject predicate(Request r) {
        boolean swizzled = r.isSwizzled("layout");
        Layout tile = swizzled ? r.swizzled("layout").layout() : r.layout("layout");
        boolean answer = run(r, () -> switch (r.op()) {
            case "is_trivial" -> !swizzled && Trivial.isTrivial(tile);
            case "is_swizzle" -> swizzled && Trivial.isTrivial(tile);
            default -> !swizzled && TrainiumLayout.isTrainium(tile);
        });
        JsonObject out = new JsonObject();
        out.addProperty(r.op(), answer);
        return out;
    }

    private static JsonObject scope(Request r) {
        Layout tile = r.isSwizzled("layout") ? r.swizzled("layout").layout() : r.layout("layout");
        Optional<AxisScope[]> pair = run(r, () -> ScopePair.of(tile));
        JsonObject out = new JsonObject();
        if (pair.isPresent()) {
            JsonArray names = new JsonArray();
            names.add(ScopePair.name(pair.get()[0]));
            names.add(ScopePair.name(pair.get()[1]));
            out.add("scope", names);
        } else {
            out.add("scope", JsonNull.INSTANCE);
        }
        return out;
    }

    private static JsonObject trainium(Request r) {
        String annotation = r.string("annotation");
        Shape shape = r.shape("shape");
        boolean psum = r.has("is_psum") && r.bool("is_psum");
        JsonObject out = layout(r, () -> TrainiumLayout.annotated(annotation, shape, psum));
        out.add("shape", Json.longs(shape.dims()));
        return out;
    }


    private static JsonObject layout(Request r, Supplier<Layout> body) {
        return text(run(r, body));
    }

    private static JsonObject text(Object layout) {
        JsonObject out = new JsonObject();
        out.addProperty("layout", layout.toString());
        return out;
    }
}
