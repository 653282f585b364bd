package org.axe4j.schedules;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Swizzle;

/**
 * What a rule sees of one tile call: the op name ({@code copy}, {@code add}, {@code sum}, ...), the target kind,
 * the execution scope, the tensor operands (destination first) and the op's parameters
 * ({@code axes}, {@code accum}, {@code trans_a}, {@code trans_b}, {@code bias_scale}, ...).
 */
public record Request(String op, String target, String scope, List<Operand> operands, JsonObject params,
        Map<String, Swizzle> swizzles) {

    public Request(String op, String target, String scope, List<Operand> operands, JsonObject params) {
        this(op, target, scope, operands, params, Map.of());
    }

    public Request {
        swizzles = Map.copyOf(swizzles);
    }

    /**
     * Reads the JSON with each operand's swizzle ({@code null} or the identity for none): a TIRx
     * {@code ComposeLayout} is its tile layout (in {@code layouts}) composed with a {@link Swizzle} of the memory
     * address.
     */
    public static Request fromJson(String json, List<Layout> layouts, List<Swizzle> swizzles) {
        Request plain = fromJson(json, layouts);
        Map<String, Swizzle> byRole = new java.util.LinkedHashMap<>();
        for (int i = 0; i < swizzles.size(); i++) {
            Swizzle s = swizzles.get(i);
            if (s != null && !s.isIdentity()) {
                byRole.put(plain.operands().get(i).role(), s);
            }
        }
        return new Request(plain.op(), plain.target(), plain.scope(), plain.operands(), plain.params(), byRole);
    }

    /**
     * The storage scope of operand {@code role} ({@code global}, {@code shared...}, {@code local}, {@code tmem},
     * {@code trn.sbuf}, ...): {@code global} unless {@code params.storage} names another.
     */
    public String storage(String role) {
        JsonObject storage = params.has("storage") ? params.getAsJsonObject("storage") : new JsonObject();
        return storage.has(role) ? storage.get(role).getAsString() : "global";
    }

    /** The swizzle of {@code role}'s layout, identity when it has none. */
    public Swizzle swizzle(String role) {
        return swizzles.getOrDefault(role, Swizzle.IDENTITY);
    }

    /** Reads the JSON the Python side sends; {@code layouts} are the operands' layouts, in order. */
    public static Request fromJson(String json, List<Layout> layouts) {
        JsonObject o = JsonParser.parseString(json).getAsJsonObject();
        JsonArray ops = o.getAsJsonArray("operands");
        if (ops.size() != layouts.size()) {
            throw new IllegalArgumentException("request names " + ops.size() + " operands but " + layouts.size()
                    + " layouts came with it");
        }
        JsonObject params = o.has("params") ? o.getAsJsonObject("params") : new JsonObject();
        List<Operand> operands = new ArrayList<>();
        for (int i = 0; i < ops.size(); i++) {
            JsonObject p = ops.get(i).getAsJsonObject();
            String role = p.get("role").getAsString();
            JsonArray starts = p.getAsJsonArray("start");
            long[] shape = longs(p.getAsJsonArray("shape"));
            long[] extent = longs(p.getAsJsonArray("extent"));
            long[] start = new long[starts.size()];
            Modular[] runTime = new Modular[starts.size()];
            for (int d = 0; d < start.length; d++) {
                // null: a run-time start (a CTA index, a loop variable); params.start_modulus says what is known of it
                runTime[d] = starts.get(d).isJsonNull() ? startModulus(params, role, d) : null;
                Long only = runTime[d] == null || d >= shape.length ? null
                        : onlyValueInside(runTime[d], shape[d] - extent[d]);
                if (only != null) {
                    runTime[d] = null;  // the one start that keeps the region inside the buffer
                    start[d] = only;
                } else {
                    start[d] = runTime[d] != null ? 0 : starts.get(d).getAsLong();
                }
            }
            operands.add(new Operand(role, p.get("name").getAsString(), p.get("dtype").getAsString(), shape, start,
                    extent, layouts.get(i), p.has("elem_offset") ? p.get("elem_offset").getAsLong() : 0, runTime));
        }
        return new Request(o.get("op").getAsString(), o.get("target").getAsString(), o.get("scope").getAsString(),
                List.copyOf(operands), params);
    }

    public Operand operand(String role) {
        return find(role).orElseThrow(() -> Declined.of("%s: no operand %s", op, role));
    }

    public Optional<Operand> find(String role) {
        return operands.stream().filter(x -> x.role().equals(role)).findFirst();
    }

    /**
     * The start value when exactly one of {@code m}'s values lies in [0, room] (a region of a 64-column tensor at
     * {@code bx * 64} can only start at 0); null otherwise.
     */
    static Long onlyValueInside(Modular m, long room) {
        if (m.isConstant()) {
            return m.residue() >= 0 && m.residue() <= room ? m.residue() : null;
        }
        long first = m.residue(); // normalized: 0 <= residue < coeff
        return first <= room && first + m.coeff() > room ? first : null;
    }

    /**
     * The run-time start of {@code role}'s dim {@code dim} as the call wrote it ({@code params.start_modulus}), where
     * parsing fixed it to the one value that keeps the region inside the buffer; empty for a constant start. A rule
     * that clips at the buffer's end (TMA) reads it back: {@code kt * 64} over 72 columns also starts at 64, an edge
     * tile that runs past the end.
     */
    public Optional<Modular> writtenRunTimeStart(String role, int dim) {
        JsonElement all = params.get("start_modulus");
        if (all == null || !all.isJsonObject() || !all.getAsJsonObject().has(role)) {
            return Optional.empty();
        }
        JsonArray dims = all.getAsJsonObject().getAsJsonArray(role);
        if (dim >= dims.size() || !dims.get(dim).isJsonArray()) {
            return Optional.empty();
        }
        return Optional.of(startModulus(params, role, dim));
    }

    /**
     * What is known of the run-time start of {@code role}'s dim {@code dim}: {@code c n + b} from
     * {@code params.start_modulus[role][dim] = [c, b]} (TVM's modular-set analysis); {@link Modular#ANY} when absent.
     */
    private static Modular startModulus(JsonObject params, String role, int dim) {
        JsonElement all = params.get("start_modulus");
        if (all == null || !all.isJsonObject() || !all.getAsJsonObject().has(role)) {
            return Modular.ANY;
        }
        JsonArray dims = all.getAsJsonObject().getAsJsonArray(role);
        if (dim >= dims.size() || dims.get(dim).isJsonNull()) {
            return Modular.ANY;
        }
        JsonArray cb = dims.get(dim).getAsJsonArray();
        return new Modular(cb.get(0).getAsLong(), cb.get(1).getAsLong());
    }

    /**
     * The dims of {@code role}'s region whose extent is known only at run time (a ragged group of rows), in order;
     * their {@link Operand#extent()} is the largest value the run-time extent takes. From
     * {@code params.run_time_extent[role] = [d, ...]}; empty when the request has none for the role.
     */
    public int[] runTimeExtentDims(String role) {
        JsonElement all = params.get("run_time_extent");
        if (all == null || !all.isJsonObject() || !all.getAsJsonObject().has(role)) {
            return new int[0];
        }
        JsonArray dims = all.getAsJsonObject().getAsJsonArray(role);
        int[] out = new int[dims.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = dims.get(i).getAsInt();
        }
        return out;
    }

    /** The first operand with a run-time extent and that dim, or empty when every extent is a constant. */
    public Optional<Map.Entry<Operand, Integer>> firstRunTimeExtent() {
        for (Operand o : operands) {
            int[] dims = runTimeExtentDims(o.role());
            if (dims.length > 0) {
                return Optional.of(Map.entry(o, dims[0]));
            }
        }
        return Optional.empty();
    }

    public boolean flag(String name) {
        JsonElement e = params.get(name);
        return e != null && !e.isJsonNull() && e.getAsBoolean();
    }

    public long[] longsParam(String name) {
        JsonElement e = params.get(name);
        return e == null || e.isJsonNull() ? new long[0] : longs(e.getAsJsonArray());
    }

    private static long[] longs(JsonArray a) {
        long[] out = new long[a.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = a.get(i).getAsLong();
        }
        return out;
    }
}
