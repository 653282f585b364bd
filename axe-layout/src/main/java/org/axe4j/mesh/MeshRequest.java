package org.axe4j.mesh;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.util.ArrayList;
import java.util.List;
import org.axe4j.layout.AxeException;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Shape;
import org.axe4j.layout.interop.DeviceMesh;
import org.axe4j.layout.interop.Placement;
import org.axe4j.layout.interop.ShardingSpec;

/**
 * Reads the JSON requests of the {@code axe4j.mesh.*} globals:
 * <pre>
 *   {"mesh": {"shape": [2, 2], "axes": ["dp", "tp"]},       (axes optional: every dimension on gpuid)
 *    "global_shape": [64, 128], "element_bytes": 4,
 *    "src": {"layout": "S[(2,32,128):(1@dp,128,1)] + R[2:1@tp]", "partial_dims": [1]},
 *    "dst": {"placements": "[Shard(1), Replicate()]"}}
 * </pre>
 * A tensor is given by an Axe layout, or by DTensor placements where {@code Partial()} marks a partial mesh
 * dimension (it is laid out as {@code Replicate()} and listed in the partial dims). With placements,
 * {@code "local_order": [1, 0]} stores the local buffer with tensor dimension 1 outermost (column-major), and
 * {@code "held_at": [[j, c]]} keeps a {@code Replicate()} mesh dimension j's copy only at coordinate c.
 * Placements that split a dimension unevenly pad it like {@code torch.chunk} (see {@link DistTensor#fromSpec}); a
 * layout over a padded shape names it: {@code {"layout": "S[(4,3):(1@gpuid,1)]", "padded_shape": [12]}} for 10
 * elements (positions past the global shape are padding: never moved, never needed).
 */
public final class MeshRequest {
    private MeshRequest() {}

    public static JsonObject parse(String json) {
        try {
            return JsonParser.parseString(json).getAsJsonObject();
        } catch (RuntimeException e) {
            throw new AxeException(AxeException.Kind.PARSE, "mesh request is not a JSON object: " + e.getMessage());
        }
    }

    public static DeviceMesh mesh(JsonObject req) {
        JsonObject m = field(req, "mesh").getAsJsonObject();
        List<Long> shape = new ArrayList<>();
        field(m, "shape").getAsJsonArray().forEach(e -> shape.add(longOf(e, "mesh shape")));
        if (!m.has("axes")) {
            return DeviceMesh.of(shape.stream().mapToLong(Long::longValue).toArray());
        }
        List<String> axes = new ArrayList<>();
        m.getAsJsonArray("axes").forEach(e -> axes.add(e.getAsString()));
        return DeviceMesh.named(shape, axes.toArray(new String[0]));
    }

    public static Shape globalShape(JsonObject req) {
        List<Long> dims = new ArrayList<>();
        field(req, "global_shape").getAsJsonArray().forEach(e -> dims.add(longOf(e, "global_shape")));
        return new Shape(dims);
    }

    /** {@code element_bytes}: 4 when absent, else an exact integer in {@code [1, 2^31)}. */
    public static int elementBytes(JsonObject req) {
        return req.has("element_bytes") ? intOf(req.get("element_bytes"), "element_bytes") : 4;
    }

    /** An exact 64-bit integer ({@code 8}, {@code 8.0}); INVALID for anything else, never a rounded or wrapped value. */
    static long longOf(JsonElement e, String what) {
        if (e != null && e.isJsonPrimitive() && e.getAsJsonPrimitive().isNumber() && e.getAsString().length() <= 64) {
            try {
                return new java.math.BigDecimal(e.getAsString()).longValueExact();
            } catch (ArithmeticException | NumberFormatException notExact) {
                // reported below
            }
        }
        throw new AxeException(AxeException.Kind.INVALID, "mesh request: " + what + " must be a 64-bit integer, got " + e);
    }

    /** {@link #longOf} within {@code [0, 2^31)}. */
    static int intOf(JsonElement e, String what) {
        long v = longOf(e, what);
        if (v < 0 || v > Integer.MAX_VALUE) {
            throw new AxeException(AxeException.Kind.INVALID, "mesh request: " + what + " (" + v
                    + ") must lie in [0, 2^31)");
        }
        return (int) v;
    }

    /** The tensor under {@code key} ("src", "dst" or "tensor"). */
    public static DistTensor tensor(JsonObject req, String key) {
        DeviceMesh mesh = mesh(req);
        Shape shape = globalShape(req);
        JsonObject t = field(req, key).getAsJsonObject();
        List<Integer> partial = new ArrayList<>();
        if (t.has("partial_dims")) {
            t.getAsJsonArray("partial_dims").forEach(e -> partial.add(intOf(e, "partial_dims")));
        }
        if (t.has("layout")) {
            Shape padded = shape;
            if (t.has("padded_shape")) {
                List<Long> dims = new ArrayList<>();
                t.getAsJsonArray("padded_shape").forEach(e -> dims.add(longOf(e, "padded_shape")));
                padded = new Shape(dims);
            }
            return new DistTensor(mesh, shape, Layout.parse(t.get("layout").getAsString()), partial, padded);
        }
        if (t.has("placements")) {
            String text = t.get("placements").getAsString();
            String body = text.strip();
            if (body.startsWith("[") && body.endsWith("]")) {
                body = body.substring(1, body.length() - 1);
            }
            String[] parts = body.split(",", -1);
            StringBuilder plain = new StringBuilder("[");
            for (int j = 0; j < parts.length; j++) {
                String p = parts[j].strip();
                boolean isPartial = p.matches("(Partial|partial)\\(\\s*\\)|partial_sum");
                if (isPartial) {
                    partial.add(j);
                }
                plain.append(j > 0 ? ", " : "").append(isPartial ? "Replicate()" : p);
            }
            ShardingSpec spec = new ShardingSpec(mesh, Placement.parseList(plain.append(']').toString()));
            DistTensor placed = DistTensor.fromSpec(spec, shape, partial);
            Layout l = placed.layout();
            if (t.has("local_order")) {
                List<Integer> order = new ArrayList<>();
                t.getAsJsonArray("local_order").forEach(e -> order.add(intOf(e, "local_order")));
                l = Variants.localOrder(l, order);
            }
            if (t.has("held_at")) {
                for (JsonElement e : t.getAsJsonArray("held_at")) {
                    JsonArray pair = e.getAsJsonArray();
                    l = Variants.heldAt(l, spec, intOf(pair.get(0), "held_at"), longOf(pair.get(1), "held_at"));
                }
            }
            return new DistTensor(mesh, shape, l, partial, placed.paddedShape());
        }
        throw new AxeException(AxeException.Kind.INVALID, "mesh request: '" + key + "' needs a \"layout\" or"
                + " \"placements\" field, got " + t);
    }

    public static Plan plan(String json) {
        JsonObject req = parse(json);
        return Planner.plan(tensor(req, "src"), tensor(req, "dst"), elementBytes(req));
    }

    /** Every rank's local shard of {@code "tensor"}: local shape, local layout, buffer size, region. */
    public static String localShards(String json) {
        JsonObject req = parse(json);
        DistTensor t = tensor(req, "tensor");
        JsonArray out = new JsonArray();
        for (LocalShard s : localShards(t)) {
            JsonObject o = new JsonObject();
            o.addProperty("rank", s.rank());
            JsonArray coord = new JsonArray();
            for (int c : s.meshCoord()) {
                coord.add(c);
            }
            o.add("mesh_coord", coord);
            JsonArray shape = new JsonArray();
            s.localShape().dims().forEach(shape::add);
            o.add("local_shape", shape);
            o.addProperty("local_layout", s.localLayout().toString());
            o.addProperty("buffer_size", s.bufferSize());
            o.addProperty("elements", s.elements());
            JsonArray lo = new JsonArray();
            JsonArray hi = new JsonArray();
            for (int d = 0; d < s.lo().length; d++) {
                lo.add(s.lo()[d]);
                hi.add(s.hi()[d]);
            }
            o.add("lo", lo);
            o.add("hi", hi);
            o.addProperty("box", s.box());
            o.addProperty("region", s.regionText());
            out.add(o);
        }
        return out.toString();
    }

    /** Every rank's local shard, from the cells of the tensor against itself (element-wise when none exist). */
    static List<LocalShard> localShards(DistTensor t) {
        MeshRanks ranks = new MeshRanks(t.mesh());
        Refinement ref = Refinement.of(t, t, ranks);
        return ref == null ? LocalShard.of(t.holdings()) : LocalShard.of(t, new Cells(ref, t, t, ranks), 0, ranks);
    }

    /** The Axe layout text of a tensor given by placements or layout. */
    public static String layoutText(String json) {
        return tensor(parse(json), "tensor").layout().toString();
    }

    private static JsonElement field(JsonObject o, String name) {
        if (!o.has(name)) {
            throw new AxeException(AxeException.Kind.INVALID, "mesh request: missing field \"" + name + "\" in " + o);
        }
        return o.get(name);
    }
}
