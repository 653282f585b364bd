package org.axe4j.passes.transform;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.axe4j.tvm.DataType;
import org.axe4j.tvm.Tvm;
import org.axe4j.tvm.TvmObject;

/**
 * What the layout passes need from a TIRx PrimFunc, read through reflection on its fields: every buffer
 * (parameters, {@code alloc_buffer}, {@code decl_buffer}) with its type, every tile call with its operand
 * regions, and the thread extents the function launches ({@code T.warp_id([4])} and friends).
 *
 * <p>Statements are walked by their container fields ({@code seq}, {@code body}, {@code then_case},
 * {@code else_case}); expressions are not visited, since layouts live only on buffer types.
 */
public final class TirFunction {
    /** Where a buffer comes from. */
    public enum Origin { PARAM, ALLOC, DECL }

    /**
     * A buffer variable and its {@code tirx.BufferType}: shape entries are null where symbolic; layout is null
     * when the buffer was allocated without one; {@code aliasOf} is the buffer whose data a decl views.
     */
    public record Buffer(TvmObject var, TvmObject type, String name, String dtype, int elementBytes, Long[] shape,
                         String scope, TvmObject layout, Origin origin, Buffer aliasOf) {
        public boolean constantShape() {
            for (Long d : shape) {
                if (d == null) {
                    return false;
                }
            }
            return true;
        }

        public long elements() {
            long n = 1;
            for (Long d : shape) {
                n *= d;
            }
            return n;
        }

        public String shapeText() {
            List<String> parts = new ArrayList<>();
            for (Long d : shape) {
                parts.add(d == null ? "?" : d.toString());
            }
            return "(" + String.join(", ", parts) + (parts.size() == 1 ? ",)" : ")");
        }
    }

    /** One operand region of a tile call: begins (null where not constant) and extents (null where symbolic). */
    /** A region; {@code beginExprs}/{@code extentExprs} are the TIR expressions (for symbolic bounds). */
    public record Region(Buffer buffer, Long[] begins, Long[] extents, List<Object> beginExprs,
                         List<Object> extentExprs) {
        public Region(Buffer buffer, Long[] begins, Long[] extents) {
            this(buffer, begins, extents, List.of(), List.of());
        }

        public boolean constantExtents() {
            for (Long e : extents) {
                if (e == null) {
                    return false;
                }
            }
            return true;
        }

        /** The extents without the dimensions of extent 1 (the shape two operands must agree on). */
        public List<Long> squeezed() {
            List<Long> out = new ArrayList<>();
            for (Long e : extents) {
                if (e == null || e != 1) {
                    out.add(e);
                }
            }
            return out;
        }

        @Override
        public String toString() {
            List<String> parts = new ArrayList<>();
            for (int k = 0; k < extents.length; k++) {
                String b = begins[k] == null ? "?" : begins[k].toString();
                String e = begins[k] == null || extents[k] == null ? "?+" + (extents[k] == null ? "?" : extents[k])
                        : Long.toString(begins[k] + extents[k]);
                parts.add(b + ":" + e);
            }
            return buffer.name() + "[" + String.join(", ", parts) + "]";
        }
    }

    /** A tile call: position in walk order, op name without {@code tirx.tile.}, operand regions, other arguments. */
    public record Call(int index, String op, List<Region> regions, List<Object> others, TvmObject node) {
        public String label() {
            return "call #" + index + " " + op + "(" + String.join(", ", regions.stream().map(Region::toString).toList())
                    + ")";
        }

        /** A constant integer of the call's config (e.g. {@code cta_group}), or {@code absent}. */
        public long configInt(String key, long absent) {
            if (node == null || !node.fieldNames().contains("config")) {
                return absent;
            }
            if (node.get("config") instanceof java.util.Map<?, ?> config && config.containsKey(key)) {
                Long value = constant(config.get(key));
                return value == null ? absent : value;
            }
            return absent;
        }
    }

    private final String name;
    private final TvmObject func;
    private final List<Buffer> buffers = new ArrayList<>();
    private final List<Call> calls = new ArrayList<>();
    private final Map<String, Long> threadExtents = new LinkedHashMap<>();

    private TirFunction(String name, TvmObject func) {
        this.name = name;
        this.func = func;
    }

    /** Reads {@code func} (a {@code tirx.PrimFunc}); {@code name} labels diagnostics. */
    public static TirFunction read(String name, TvmObject func) {
        if (!func.isInstance("tirx.PrimFunc")) {
            throw new IllegalArgumentException("expected a tirx.PrimFunc, got " + func.typeKey());
        }
        TirFunction f = new TirFunction(name, func);
        for (Object p : (List<?>) func.get("params")) {
            if (p instanceof TvmObject var) {
                f.define(var, Origin.PARAM, null);
            }
        }
        f.walk(func.get("body"));
        return f;
    }

    public String name() {
        return name;
    }

    public TvmObject func() {
        return func;
    }

    public List<Buffer> buffers() {
        return Collections.unmodifiableList(buffers);
    }

    public List<Call> calls() {
        return Collections.unmodifiableList(calls);
    }

    /** Launched extent per thread axis name ({@code laneid}, {@code warpid}, {@code tx}, ...). */
    public Map<String, Long> threadExtents() {
        return Collections.unmodifiableMap(threadExtents);
    }

    // ---- the walk ------------------------------------------------------------------------------

    private void walk(Object node) {
        if (node instanceof List<?> list) {
            list.forEach(this::walk);
            return;
        }
        if (!(node instanceof TvmObject o)) {
            return;
        }
        String key = o.typeKey();
        switch (key) {
            case "tirx.TilePrimitiveCall" -> calls.add(call(o));
            case "tirx.AllocBuffer" -> define((TvmObject) o.get("buffer"), Origin.ALLOC, null);
            case "tirx.DeclBuffer" -> define((TvmObject) o.get("buffer"), Origin.DECL, o.get("data"));
            case "tirx.ScopeIdDefStmt" -> scopeIds((TvmObject) o.get("def"));
            default -> {
                List<String> fields = o.fieldNames();
                for (String f : List.of("seq", "body", "then_case", "else_case", "block")) {
                    if (fields.contains(f)) {
                        walk(o.get(f));
                    }
                }
            }
        }
    }

    /** {@code ScopeIdDef.scope}: the (parent, child) scope pair; the axis whose ids it launches, by TIRx's numbering. */
    private static final Map<Long, String> SCOPE_AXIS = Map.of(
            1L, "bx", 3L, "wgid", 4L, "warpid", 5L, "wid_in_wg", 6L, "laneid", 7L, "tx", 8L, "tid_in_wg");

    private void scopeIds(TvmObject def) {
        Object scope = def.get("scope");
        String axis = scope instanceof Long s ? SCOPE_AXIS.get(s) : null;
        List<?> extents = (List<?>) def.get("extents");
        if (axis != null && extents != null) {
            long product = 1;
            for (Object e : extents) {
                Long v = constant(e);
                if (v == null) {
                    return;
                }
                product *= v;
            }
            threadExtents.put(axis, product);
        }
    }

    private void define(TvmObject var, Origin origin, Object data) {
        if (var == null || lookup(var) != null) {
            return;
        }
        Object ty = var.get("ty");
        if (!(ty instanceof TvmObject type) || !type.isInstance("tirx.BufferType")) {
            return;
        }
        List<?> dims = (List<?>) type.get("shape");
        Long[] shape = new Long[dims.size()];
        for (int k = 0; k < shape.length; k++) {
            shape[k] = constant(dims.get(k));
        }
        Object dtObj = type.get("dtype");
        DataType dt = (DataType) (dtObj instanceof TvmObject prim ? prim.get("dtype") : dtObj);
        Object layout = type.get("layout");
        Buffer alias = null;
        if (data instanceof TvmObject call && call.fieldNames().contains("args")) {
            for (Object a : (List<?>) call.get("args")) {
                if (a instanceof TvmObject v) {
                    alias = lookup(v);
                }
            }
        }
        buffers.add(new Buffer(var, type, String.valueOf(var.get("name")), Tvm.formatDataType(dt),
                Math.max(1, dt.bits() * dt.lanes() / 8), shape, String.valueOf(type.get("storage_scope")),
                layout instanceof TvmObject l ? l : null, origin, alias));
    }

    /** The buffer of {@code var}, by object identity. */
    public Buffer lookup(TvmObject var) {
        for (Buffer b : buffers) {
            if (b.var().sameObject(var)) {
                return b;
            }
        }
        return null;
    }

    private Call call(TvmObject o) {
        String op = String.valueOf(((TvmObject) o.get("op")).get("name"));
        op = op.startsWith("tirx.tile.") ? op.substring("tirx.tile.".length()) : op;
        List<Region> regions = new ArrayList<>();
        List<Object> others = new ArrayList<>();
        for (Object a : (List<?>) o.get("args")) {
            if (a instanceof TvmObject r && r.fieldNames().contains("source") && r.fieldNames().contains("region")) {
                Buffer b = lookup((TvmObject) r.get("source"));
                List<?> ranges = (List<?>) r.get("region");
                Long[] begins = new Long[ranges.size()];
                Long[] extents = new Long[ranges.size()];
                List<Object> beginExprs = new ArrayList<>();
                List<Object> extentExprs = new ArrayList<>();
                for (int k = 0; k < begins.length; k++) {
                    TvmObject range = (TvmObject) ranges.get(k);
                    begins[k] = constant(range.get("min"));
                    extents[k] = constant(range.get("extent"));
                    beginExprs.add(range.get("min"));
                    extentExprs.add(range.get("extent"));
                }
                if (b != null) {
                    regions.add(new Region(b, begins, extents, beginExprs, extentExprs));
                }
            } else {
                others.add(a);
            }
        }
        return new Call(calls.size(), op, regions, others, o);
    }

    /** An integer constant ({@code IntImm} or a plain integer), else null. */
    static Long constant(Object e) {
        if (e instanceof Long v) {
            return v;
        }
        if (e instanceof TvmObject o && o.isInstance("ir.IntImm")) {
            return (Long) o.get("value");
        }
        return null;
    }
}
