package org.axe4j.passes;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.axe4j.layout.AxeException;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Iter;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Point;
import org.axe4j.tvm.Tvm;
import org.axe4j.tvm.TvmObject;

/**
 * Conversion between axe4j layouts and TVM's TIRx layouts.
 *
 * <p>A {@code tirx.TileLayout} holds {@code shard: Array<tirx.Iter>}, {@code replica: Array<tirx.Iter>} and
 * {@code offset: Map<tirx.Axis, PrimExpr>}; a {@code tirx.Iter} holds {@code extent}, {@code stride} (PrimExpr)
 * and {@code axis} (a {@code tirx.Axis} with field {@code name}). Both describe the same map
 * L(x) = {D(x) + r + O | r in R}, so the conversion is field by field:
 * iter (e, s, a) &lt;-&gt; tirx.Iter(e, s, tirx.AxisGet(a)), offset {a: o} &lt;-&gt; {tirx.AxisGet(a): o}.
 * Only integer extents, strides and offsets convert; a symbolic one, or a {@code tirx.ComposeLayout}
 * (a swizzle composed with a tile layout), is refused with {@link AxeException.Kind#NOT_REPRESENTABLE}.
 */
public final class TirxLayouts {
    public static final String TILE_LAYOUT = "tirx.TileLayout";

    private TirxLayouts() {}

    /** Reads a {@code tirx.TileLayout} into a {@link Layout}, through its reflected fields. */
    public static Layout fromTvm(TvmObject layout) {
        if (layout == null) {
            throw new AxeException(AxeException.Kind.INVALID, "fromTvm: the TVM layout is null");
        }
        String type = layout.typeKey();
        if (!TILE_LAYOUT.equals(type)) {
            throw new AxeException(AxeException.Kind.NOT_REPRESENTABLE, "fromTvm: " + layout.repr() + " is a " + type
                    + "; only " + TILE_LAYOUT + " converts (a ComposeLayout's swizzle is not an Axe layout)");
        }
        List<Iter> shard = iters(layout, "shard");
        List<Iter> replica = iters(layout, "replica");
        TreeMap<Axis, Long> offset = new TreeMap<>();
        for (Map.Entry<?, ?> e : ((Map<?, ?>) layout.get("offset")).entrySet()) {
            Axis axis = axisOf(e.getKey());
            offset.merge(axis, integer(e.getValue(), layout, "offset on axis " + axis.name()), Long::sum);
        }
        return new Layout(shard, replica, offset);
    }

    /** Builds a {@code tirx.TileLayout} through the constructors {@code tirx.Iter}, {@code tirx.AxisGet}. */
    public static TvmObject toTvm(Layout layout) {
        Map<Object, Object> offset = new LinkedHashMap<>();
        for (Map.Entry<Axis, Long> e : layout.offset().entrySet()) {
            offset.put(tvmAxis(e.getKey()), e.getValue());
        }
        return (TvmObject) Tvm.call(TILE_LAYOUT, tvmIters(layout.shard()), tvmIters(layout.replica()), offset);
    }

    /** The TVM object for an axis: {@code tirx.AxisGet(name)}. */
    public static TvmObject tvmAxis(Axis axis) {
        return (TvmObject) Tvm.call("tirx.AxisGet", axis.name());
    }

    /**
     * A point from TIRx's answer to {@code apply} ({@code Map<String or tirx.Axis, PrimExpr>}, zero
     * coordinates included), with zero coordinates dropped as {@link Point} does.
     */
    public static Point pointOf(Map<?, ?> coordinates) {
        TreeMap<Axis, Long> coords = new TreeMap<>();
        for (Map.Entry<?, ?> e : coordinates.entrySet()) {
            Axis axis = axisOf(e.getKey());
            coords.merge(axis, integer(e.getValue(), null, "coordinate on axis " + axis.name()), Long::sum);
        }
        return new Point(coords);
    }

    /** An integer from a Long or an {@code ir.IntImm}; anything else is a symbolic expression and refused. */
    static long integer(Object value, TvmObject owner, String what) {
        if (value instanceof Long v) {
            return v;
        }
        if (value instanceof TvmObject o && "ir.IntImm".equals(o.typeKey())) {
            return (Long) o.get("value");
        }
        String shown = value instanceof TvmObject o ? o.repr() : String.valueOf(value);
        throw new AxeException(AxeException.Kind.NOT_REPRESENTABLE, "fromTvm: the " + what
                + (owner == null ? "" : " of " + owner.repr()) + " is " + shown
                + ", not an integer constant; symbolic extents, strides and offsets do not convert");
    }

    private static List<Iter> iters(TvmObject layout, String field) {
        List<Iter> out = new ArrayList<>();
        for (Object item : (List<?>) layout.get(field)) {
            TvmObject iter = (TvmObject) item;
            Axis axis = axisOf(iter.get("axis"));
            out.add(new Iter(integer(iter.get("extent"), layout, field + " extent"),
                    integer(iter.get("stride"), layout, field + " stride"), axis));
        }
        return out;
    }

    private static Axis axisOf(Object key) {
        if (key instanceof String name) {
            return Axis.of(name);
        }
        if (key instanceof TvmObject o && "tirx.Axis".equals(o.typeKey())) {
            return Axis.of((String) o.get("name"));
        }
        throw new AxeException(AxeException.Kind.NOT_REPRESENTABLE,
                "fromTvm: expected a tirx.Axis or an axis name, got " + key);
    }

    private static List<Object> tvmIters(List<Iter> iters) {
        List<Object> out = new ArrayList<>();
        for (Iter it : iters) {
            out.add(Tvm.call("tirx.Iter", it.extent(), it.stride(), tvmAxis(it.axis())));
        }
        return out;
    }
}
