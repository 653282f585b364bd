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
import org.axe4j.layout.Swizzle;
import org.axe4j.layout.SwizzledLayout;
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
 *
 * <p>{@link #fromTvm}/{@link #toTvm(Layout)} convert integer tile layouts to and from {@link Layout}.
 * {@link #read}/{@link #write} convert every TVM layout axe4j can express, as a {@link TirxLayout}:
 * symbolic offsets keep their symbolic part ({@code 2*n + 3}; an integer term that is not affine, such as
 * {@code n // 2}, whole), and a
 * {@code tirx.ComposeLayout(per_element=M, swizzle_len=B, atom_len=A, tile_layout, swizzle_inner)} is the
 * swizzle {@code Swizzle<B, M, inner ? A : -A>} after its tile layout. Symbolic extents or strides, and
 * offsets that are not integer expressions, are refused with {@link AxeException.Kind#NOT_REPRESENTABLE}.
 */
public final class TirxLayouts {
    public static final String TILE_LAYOUT = "tirx.TileLayout";
    public static final String COMPOSE_LAYOUT = "tirx.ComposeLayout";

    private TirxLayouts() {}

    /** Reads a {@code tirx.TileLayout} into a {@link Layout}, through its reflected fields. */
    public static Layout fromTvm(TvmObject layout) {
        if (layout == null) {
            throw new AxeException(AxeException.Kind.INVALID, "fromTvm: the TVM layout is null");
        }
        String type = layout.typeKey();
        if (!TILE_LAYOUT.equals(type)) {
            throw new AxeException(AxeException.Kind.NOT_REPRESENTABLE, "fromTvm: " + layout.repr() + " is a " + type
                    + "; only " + TILE_LAYOUT + " converts to a Layout (read() takes a ComposeLayout's swizzle too)");
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

    /**
     * Layouts read recently, by object address. Each entry holds a reference to its TVM object, so the
     * address cannot be reused by another object while the entry lives; TVM layouts are immutable. A
     * pipeline asks many questions about the same few buffer layouts, and reading one field by field
     * costs dozens of foreign calls.
     */
    private static final int READ_CACHE_ENTRIES = 1024;

    /** Only layouts of at most this many iters are cached, so the cache's memory stays bounded. */
    private static final int CACHED_ITERS = 256;

    private record Cached(TvmObject keepAlive, TirxLayout value) {}

    private static final Map<Long, Cached> READ_CACHE = new LinkedHashMap<>(64, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, Cached> eldest) {
            if (size() > READ_CACHE_ENTRIES) {
                eldest.getValue().keepAlive().close();
                return true;
            }
            return false;
        }
    };

    /** TIRx axes are registered singletons: look each up once. */
    private static final Map<Axis, TvmObject> AXES = new java.util.concurrent.ConcurrentHashMap<>();

    private static final int AXES_CACHED = 4096;

    /** Reads any TVM layout axe4j can express: integer or symbolic offsets, optionally swizzled. */
    public static TirxLayout read(TvmObject layout) {
        if (layout == null) {
            throw new AxeException(AxeException.Kind.INVALID, "read: the TVM layout is null");
        }
        long address = layout.handle();
        synchronized (READ_CACHE) {
            Cached hit = READ_CACHE.get(address);
            if (hit != null) {
                return hit.value();
            }
        }
        TirxLayout value = readFields(layout);
        if (value.layout().shard().size() + value.layout().replica().size() <= CACHED_ITERS) {
            synchronized (READ_CACHE) {
                READ_CACHE.putIfAbsent(address, new Cached(layout.share(), value));
            }
        }
        return value;
    }

    private static TirxLayout readFields(TvmObject layout) {
        String type = layout.typeKey();
        if (COMPOSE_LAYOUT.equals(type)) {
            int base = Math.toIntExact(integer(layout.get("per_element"), layout, "per_element"));
            int bits = Math.toIntExact(integer(layout.get("swizzle_len"), layout, "swizzle_len"));
            int atom = Math.toIntExact(integer(layout.get("atom_len"), layout, "atom_len"));
            boolean inner = (Boolean) layout.get("swizzle_inner");
            TirxLayout tile;
            try (TvmObject tileObject = (TvmObject) layout.get("tile_layout")) {
                tile = readFields(tileObject);
            }
            if (tile.composed()) {
                throw new AxeException(AxeException.Kind.NOT_REPRESENTABLE, "read: " + layout.repr()
                        + " swizzles a swizzled layout; axe4j composes one swizzle with a tile layout");
            }
            return new TirxLayout(tile.layout(), tile.symbolic(), new Swizzle(bits, base, inner ? atom : -atom), true);
        }
        if (!TILE_LAYOUT.equals(type)) {
            throw new AxeException(AxeException.Kind.NOT_REPRESENTABLE, "read: " + layout.repr() + " is a " + type
                    + "; axe4j reads " + TILE_LAYOUT + " and " + COMPOSE_LAYOUT);
        }
        TreeMap<Axis, Long> offset = new TreeMap<>();
        TreeMap<Axis, List<SymbolicOffset.Term>> symbolic = new TreeMap<>();
        for (Map.Entry<?, ?> e : ((Map<?, ?>) layout.get("offset")).entrySet()) {
            Axis axis = axisOf(e.getKey());
            AffineExprs.Affine a = AffineExprs.read(e.getValue(), "offset on axis " + axis.name() + " of " + layout.repr());
            offset.merge(axis, a.constant(), Long::sum);
            symbolic.computeIfAbsent(axis, k -> new ArrayList<>()).addAll(a.terms());
        }
        return new TirxLayout(new Layout(iters(layout, "shard"), iters(layout, "replica"), offset),
                new SymbolicOffset(new TreeMap<>(symbolic)), Swizzle.IDENTITY, false);
    }

    /** Writes a {@link TirxLayout} as a {@code tirx.TileLayout}, or a {@code tirx.ComposeLayout} when composed. */
    public static TvmObject write(TirxLayout layout) {
        Layout l = layout.layout();
        Map<Object, Object> offset = new LinkedHashMap<>();
        java.util.TreeSet<Axis> axes = new java.util.TreeSet<>(l.offset().keySet());
        axes.addAll(layout.symbolic().terms().keySet());
        for (Axis a : axes) {
            offset.put(axisObject(a), AffineExprs.write(l.offsetOn(a), layout.symbolic().on(a)));
        }
        TvmObject tile = (TvmObject) Tvm.call(TILE_LAYOUT, tvmIters(l.shard()), tvmIters(l.replica()), offset);
        if (!layout.composed()) {
            return tile;
        }
        Swizzle s = layout.swizzle();
        try (tile) {
            return (TvmObject) Tvm.call(COMPOSE_LAYOUT, (long) s.base(), (long) s.bits(), (long) Math.abs(s.shift()),
                    tile, s.inner());
        }
    }

    /** A swizzled layout as a {@code tirx.ComposeLayout}. */
    public static TvmObject toTvm(SwizzledLayout layout) {
        return write(TirxLayout.of(layout));
    }

    /** Builds a {@code tirx.TileLayout} through the constructors {@code tirx.Iter}, {@code tirx.AxisGet}. */
    public static TvmObject toTvm(Layout layout) {
        Map<Object, Object> offset = new LinkedHashMap<>();
        for (Map.Entry<Axis, Long> e : layout.offset().entrySet()) {
            offset.put(axisObject(e.getKey()), e.getValue());
        }
        return (TvmObject) Tvm.call(TILE_LAYOUT, tvmIters(layout.shard()), tvmIters(layout.replica()), offset);
    }

    /** The TVM object for an axis: {@code tirx.AxisGet(name)}. */
    public static TvmObject tvmAxis(Axis axis) {
        return axisObject(axis).share();
    }

    /** The axis object, for passing as an argument (the cache, or the caller's reference, keeps it alive). */
    private static TvmObject axisObject(Axis axis) {
        TvmObject known = AXES.get(axis);
        if (known != null) {
            return known;
        }
        TvmObject fresh = (TvmObject) Tvm.call("tirx.AxisGet", axis.name());
        // Bounded like Axis's own table: a stream of distinct names must not grow it without end.
        if (AXES.size() < AXES_CACHED) {
            TvmObject raced = AXES.putIfAbsent(axis, fresh);
            return raced != null ? raced : fresh;
        }
        return fresh;
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
        if (owner == null) { // an argument, not a field of a layout
            throw new AxeException(AxeException.Kind.NOT_REPRESENTABLE, "the " + what + " is " + shown
                    + ", not an integer constant");
        }
        throw new AxeException(AxeException.Kind.NOT_REPRESENTABLE, "fromTvm: the " + what + " of " + owner.repr()
                + " is " + shown + ", not an integer constant; symbolic extents and strides do not convert"
                + " (read() keeps symbolic offsets)");
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
            return Axis.of(axisName(o));
        }
        throw new AxeException(AxeException.Kind.NOT_REPRESENTABLE,
                "fromTvm: expected a tirx.Axis or an axis name, got " + key);
    }

    /** The begin of an {@code ir.Range}: its field {@code min} on TVM 0.27, {@code begin} on the new TIRx. */
    public static Object rangeBegin(TvmObject range) {
        return range.get(range.fieldNames().contains("min") ? "min" : "begin");
    }

    /**
     * The name of a {@code tirx.Axis}: its field {@code name} on TVM 0.27; on the new TIRx (tvm_tirx) the axis is an
     * {@code ffi.Enum} entry whose name is the field {@code _str_index}.
     */
    public static String axisName(TvmObject axis) {
        return (String) axis.get(axis.fieldNames().contains("name") ? "name" : "_str_index");
    }

    private static List<Object> tvmIters(List<Iter> iters) {
        List<Object> out = new ArrayList<>();
        for (Iter it : iters) {
            out.add(Tvm.call("tirx.Iter", it.extent(), it.stride(), axisObject(it.axis())));
        }
        return out;
    }
}
