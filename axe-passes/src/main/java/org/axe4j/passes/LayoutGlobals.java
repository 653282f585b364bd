package org.axe4j.passes;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.axe4j.layout.ApplyToShape;
import org.axe4j.layout.AxeException;
import org.axe4j.layout.Axis;
import org.axe4j.layout.AxisScope;
import org.axe4j.layout.Budget;
import org.axe4j.layout.Canonicalize;
import org.axe4j.layout.Checks;
import org.axe4j.layout.CudaThreads;
import org.axe4j.layout.DirectSum;
import org.axe4j.layout.DirectSumOf;
import org.axe4j.layout.Equivalence;
import org.axe4j.layout.Group;
import org.axe4j.layout.GroupMany;
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
import org.axe4j.layout.TileOf;
import org.axe4j.layout.WellFormed;
import org.axe4j.tvm.GlobalsProvider;
import org.axe4j.tvm.PackedFunction;
import org.axe4j.tvm.Tvm;
import org.axe4j.tvm.TvmObject;

/**
 * The layout algebra as TVM globals, so that a TVM pipeline can ask Java any layout question. Every
 * layout argument is a TVM layout ({@code tirx.TileLayout}, {@code tirx.ComposeLayout}) or axe4j text;
 * every layout result is a TVM layout. Shapes are arrays of integers; a region is an array of
 * {@code ir.Range} or of {@code [begin, end)} pairs. Argument orders follow TIRx's methods.
 * <ul>
 *   <li>{@code parse(text)}, {@code to_text(layout)}</li>
 *   <li>{@code canonicalize(layout)}: the canonical form (symbolic offset and swizzle kept); under a current
 *       {@code cuda} target (TVM's {@code Target::Current()}) the CUDA thread axes first on the axis of the layout's
 *       scope pair ({@link CudaThreads#fuse}), as TIRx's canonicalize does</li>
 *   <li>{@code group(layout, shape)}: {@code [grouped, seps]}</li>
 *   <li>{@code group_many(layout, shapes)}: {@code [split, [seps per shape]]}, the common refinement</li>
 *   <li>{@code tile(inner, outer, outer_shape, inner_shape)}: {@code outer (x) inner}</li>
 *   <li>{@code tile_of(part, tiled, tiled_shape, part_shape, role)}: role {@code "inner"} returns the
 *       outer layout, {@code "outer"} the inner one; None when {@code tiled} is no such tiling. Swizzled layouts
 *       go through {@link SwizzledTile}; under a current {@code cuda} target both layouts' thread axes are fused and
 *       the tiled layout's split into the part's warps or warpgroups first, as TIRx's {@code IsTileInner} does</li>
 *   <li>{@code direct_sum(right, left, left_shape, right_shape)}: {@code left + right}</li>
 *   <li>{@code is_direct_sum_right(right, sum, interleaved_shape, right_shape)}: the left addend A with
 *       {@code sum == A + right}, None when there is none; {@code is_direct_sum_left(left, sum, interleaved_shape,
 *       left_shape)}: the right addend. {@code interleaved_shape} is {@code (left[0], right[0], left[1], ...)}</li>
 *   <li>{@code slice(layout, shape, region)}: the layout of the region, None when not representable; a begin
 *       affine in TIR variables gives a symbolic offset ({@link SymbolicIndex}), with floordiv/floormod terms
 *       where the layout does not translate the start ({@link DigitOffsetSlice})</li>
 *   <li>{@code permute_by_groups(layout, seps, perm)}: the shard's groups of iters reordered</li>
 *   <li>{@code apply_to_shape(layout, coord, input_shape)}: the value of each shard iter (of the layout split by
 *       {@code input_shape} where it splits, else its own shard) at {@code coord}</li>
 *   <li>{@code verify_well_formed(layout)}: whether the thread axes chain one order of scopes</li>
 *   <li>{@code apply(layout, x)} or {@code apply(layout, coord, shape)}: every point of L(x), each a
 *       map from every axis of the layout to its coordinate (a PrimExpr where the offset or the index is
 *       symbolic: {@link SymbolicIndex}; on a swizzled layout the swizzle of the whole address, every offset
 *       inside it: {@link SwizzledAddress})</li>
 *   <li>{@code count(layout, x)} or {@code count(layout, coord, shape)}: how many points L(x) has, without
 *       enumerating them</li>
 *   <li>{@code points(layout, x, shape, start, limit)}: points {@code start .. start+limit-1} of L(x) in the order
 *       of {@code apply} ({@code shape} None for a flat index), so a caller can page through a set of any size</li>
 *   <li>{@code equivalent(a, b)}: do the two layouts induce the same map</li>
 *   <li>{@code size(layout[, axis])}; {@code span(layout[, axis])}: TIRx's span, one past the largest coordinate
 *       (offset counted; without an axis the memory axes added, as TIRx does; {@link TirxSpan});
 *       {@code image_span(layout[, axis])}: axe4j's span, {@code max - min + 1} (offset not counted), or
 *       {@code {axis: span}}</li>
 *   <li>{@code limits([caps])}: the caps every call runs under ({@link Budget}: {@code max_points},
 *       {@code max_answer_bytes}, {@code max_request_bytes}, {@code max_millis}), after setting those named in
 *       the optional map {@code caps}; they start from {@link Budget#fromEnvironment}</li>
 * </ul>
 * Every call runs under the caps: a layout text longer than {@code max_request_bytes}, an enumeration of more
 * than {@code max_points} points (refused before it starts: apply of a layout whose L(x) has too many points,
 * a page larger than the cap), an answer text longer than {@code max_answer_bytes}, a call running past
 * {@code max_millis} and a call that runs the JVM out of memory are refused with a ValueError whose message says
 * {@code too large} and names the figure and the cap (a stack overflow, a defect, is a ValueError saying
 * {@code internal error}). Concurrent calls each have their own.
 * Errors are TVM {@code ValueError}s whose message starts with the global's name.
 */
public final class LayoutGlobals implements GlobalsProvider {
    public static final String PREFIX = "axe4j.layout.";

    /** The caps of every call; {@code limits} changes them for the whole process. */
    private static volatile Budget budget = Budget.fromEnvironment(System.getenv());

    /** The caps calls run under now. */
    public static Budget budget() {
        return budget;
    }

    /** Replaces the caps of every later call. */
    public static void setBudget(Budget b) {
        budget = java.util.Objects.requireNonNull(b, "budget");
    }

    @Override
    public String name() {
        return "axe4j.layout";
    }

    @Override
    public void register() {
        def("parse", 1, 1, a -> TirxLayouts.write(readText(string(a[0], "text"))));
        def("to_text", 1, 1, a -> answerText(layout(a[0], "layout").toString()));
        def("canonicalize", 1, 1, a -> {
            TirxLayout l = layout(a[0], "layout");
            Layout base = cudaTargetCurrent() ? CudaThreads.fuse(l.layout()) : l.layout();
            return TirxLayouts.write(l.withLayout(Canonicalize.canonicalize(base)));
        });
        def("group", 2, 2, a -> {
            TirxLayout l = layout(a[0], "layout");
            Shape shape = shape(a[1], "shape");
            Grouped g = Group.group(l.composed() ? new SwizzledLayout(l.swizzle(), l.layout()).over(shape).layout()
                    : l.layout(), shape);
            List<Object> seps = new ArrayList<>();
            g.seps().forEach(s -> seps.add((long) s));
            return List.of(TirxLayouts.write(l.withLayout(g.layout())), seps);
        });
        def("group_many", 2, 2, a -> {
            TirxLayout l = layout(a[0], "layout");
            if (!(a[1] instanceof List<?> list)) {
                throw new IllegalArgumentException("shapes must be an array of shapes, got " + describe(a[1]));
            }
            List<Shape> shapes = new ArrayList<>();
            for (int i = 0; i < list.size(); i++) {
                shapes.add(shape(list.get(i), "shapes[" + i + "]"));
            }
            GroupMany.Result g = GroupMany.groupMany(l.plain("group_many"), shapes);
            List<Object> seps = new ArrayList<>();
            for (List<Integer> one : g.seps()) {
                List<Object> longs = new ArrayList<>();
                one.forEach(s -> longs.add((long) s));
                seps.add(longs);
            }
            return List.of(TirxLayouts.write(l.withLayout(g.layout())), seps);
        });
        def("tile", 4, 4, a -> {
            TirxLayout inner = layout(a[0], "inner");
            Layout outer = plain(a[1], "outer", "tile");
            if (inner.composed()) {
                return TirxLayouts.toTvm(SwizzledTile.tile(outer, shape(a[2], "outer_shape"),
                        swizzled(inner, "tile (inner)"), shape(a[3], "inner_shape")));
            }
            return TirxLayouts.toTvm(Tile.tile(outer, shape(a[2], "outer_shape"), inner.plain("tile (inner)"),
                    shape(a[3], "inner_shape")));
        });
        def("tile_of", 5, 5, a -> {
            TirxLayout partArg = layout(a[0], "part");
            TirxLayout tiledArg = layout(a[1], "tiled");
            Shape tiledShape = shape(a[2], "tiled_shape");
            Shape partShape = shape(a[3], "part_shape");
            String role = string(a[4], "role");
            if (partArg.composed() || tiledArg.composed()) {
                SwizzledLayout tiled = swizzled(tiledArg, "tile_of (tiled)");
                return switch (role) {
                    case "inner" -> SwizzledTile.outer(tiled, tiledShape, swizzled(partArg, "tile_of (part)"), partShape)
                            .map(TirxLayouts::toTvm).orElse(null);
                    case "outer" -> SwizzledTile.inner(tiled, tiledShape, partArg.plain("tile_of (part, an outer"
                            + " layout)"), partShape).map(TirxLayouts::toTvm).orElse(null);
                    default -> throw new IllegalArgumentException("role must be \"inner\" or \"outer\", got \""
                            + role + "\"");
                };
            }
            Layout part = partArg.plain("tile_of (part)");
            Layout tiled = tiledArg.plain("tile_of (tiled)");
            if (cudaTargetCurrent()) {
                part = CudaThreads.fuse(part);
                tiled = onPartScopes(CudaThreads.fuse(tiled), part, role);
            }
            Result<Layout> other = switch (role) {
                case "inner" -> TileOf.outer(tiled, tiledShape, part, partShape);
                case "outer" -> TileOf.inner(tiled, tiledShape, part, partShape);
                default -> throw new IllegalArgumentException("role must be \"inner\" or \"outer\", got \"" + role + "\"");
            };
            return other.map(TirxLayouts::toTvm).orElse(null);
        });
        def("direct_sum", 4, 4, a -> TirxLayouts.toTvm(DirectSum.directSum(plain(a[1], "left", "direct_sum"),
                shape(a[2], "left_shape"), plain(a[0], "right", "direct_sum"), shape(a[3], "right_shape"))));
        def("slice", 3, 3, a -> {
            TirxLayout l = layout(a[0], "layout");
            if (SymbolicIndex.anySymbolicRegion(a[2])) {
                TirxLayout moved = SymbolicIndex.slice(l, shape(a[1], "shape"), (List<?>) a[2]);
                return moved == null ? null : TirxLayouts.write(moved);
            }
            Shape shape = shape(a[1], "shape");
            Layout under = l.composed() ? new SwizzledLayout(l.swizzle(), l.layout()).over(shape).layout() : l.layout();
            Result<Layout> s = Slice.trySlice(under, shape, region(a[2]));
            return s.map(sliced -> TirxLayouts.write(l.withLayout(sliced))).orElse(null);
        });
        def("is_direct_sum_right", 4, 4, a -> DirectSumOf.left(plain(a[1], "sum_layout", "is_direct_sum_right"),
                shape(a[2], "interleaved_shape"), plain(a[0], "right", "is_direct_sum_right"),
                shape(a[3], "right_shape")).map(TirxLayouts::toTvm).orElse(null));
        def("is_direct_sum_left", 4, 4, a -> DirectSumOf.right(plain(a[1], "sum_layout", "is_direct_sum_left"),
                shape(a[2], "interleaved_shape"), plain(a[0], "left", "is_direct_sum_left"),
                shape(a[3], "left_shape")).map(TirxLayouts::toTvm).orElse(null));
        def("permute_by_groups", 3, 3, a -> {
            TirxLayout l = layout(a[0], "layout");
            return TirxLayouts.write(l.withLayout(PermuteByGroups.permuteByGroups(l.layout(), ints(a[1], "seps"),
                    ints(a[2], "perm"))));
        });
        def("apply_to_shape", 3, 3, a -> {
            Layout l = layout(a[0], "layout").layout();
            ApplyToShape.Values v = ApplyToShape.applyToShape(l, shape(a[2], "input_shape"), integers(a[1], "coord"));
            return new ArrayList<Object>(v.values());
        });
        def("verify_well_formed", 1, 1, a -> WellFormed.isWellFormed(layout(a[0], "layout").layout()));
        def("storage", 1, 1, a -> {
            TirxLayout l = layout(a[0], "layout");
            // offsets on thread axes go with their iters, symbolic ones too
            java.util.TreeMap<Axis, List<SymbolicOffset.Term>> kept = new java.util.TreeMap<>(l.symbolic().terms());
            kept.keySet().removeIf(axis -> axis.kind() == org.axe4j.layout.AxisKind.THREAD);
            return TirxLayouts.write(new TirxLayout(Packing.storage(l.layout()), new SymbolicOffset(kept), l.swizzle(),
                    l.composed()));
        });
        def("pack", 2, 2, a -> {
            TirxLayout l = layout(a[0], "layout");
            long num = TirxLayouts.integer(a[1], null, "num");
            return l.composed() ? TirxLayouts.toTvm(Packing.pack(swizzled(l, "pack"), num))
                    : TirxLayouts.toTvm(Packing.pack(l.plain("pack (layout)"), num));
        });
        def("unpack", 2, 2, a -> {
            TirxLayout l = layout(a[0], "layout");
            long num = TirxLayouts.integer(a[1], null, "num");
            return l.composed() ? TirxLayouts.toTvm(Packing.unpack(swizzled(l, "unpack"), num))
                    : TirxLayouts.toTvm(Packing.unpack(l.plain("unpack (layout)"), num));
        });
        def("tile_to", 3, 3, a -> {
            TirxLayout l = layout(a[0], "layout");
            if (l.composed()) {
                return TirxLayouts.toTvm(SwizzledTile.tileTo(swizzled(l, "tile_to (layout)"), shape(a[1], "to_shape"),
                        shape(a[2], "current_shape")));
            }
            return TirxLayouts.toTvm(Packing.tileTo(l.plain("tile_to (layout)"), shape(a[1], "to_shape"),
                    shape(a[2], "current_shape")));
        });
        def("apply", 2, 3, a -> apply(layout(a[0], "layout"), a));
        def("count", 2, 3, a -> {
            TirxLayout l = layout(a[0], "layout");
            if (SymbolicIndex.anySymbolic(a[1])) {
                return l.layout().replicas().count(); // |L(x)| is the replica count at every x
            }
            if (l.composed() && new SwizzledLayout(l.swizzle(), l.layout()).isBare()) {
                return (long) apply(l, a).size(); // one point at every x >= 0, as apply answers
            }
            return l.layout().pointCount(flatIndex(l, a[1], a.length == 3 ? a[2] : null));
        });
        def("points", 5, 5, a -> points(layout(a[0], "layout"), a));
        def("limits", 0, 1, a -> {
            if (a.length == 1 && a[0] != null) {
                if (!(a[0] instanceof Map<?, ?> caps)) {
                    throw new IllegalArgumentException("caps must be a map of cap name to integer, got " + describe(a[0]));
                }
                Budget b = budget;
                for (Map.Entry<?, ?> e : caps.entrySet()) {
                    b = b.with(string(e.getKey(), "cap name"), TirxLayouts.integer(e.getValue(), null, "cap " + e.getKey()));
                }
                setBudget(b);
            }
            return new LinkedHashMap<String, Object>(budget.asMap());
        });
        def("equivalent", 2, 2, a -> equivalent(layout(a[0], "a"), layout(a[1], "b")));
        def("size", 1, 2, a -> {
            Layout l = layout(a[0], "layout").layout();
            return a.length == 1 || a[1] == null ? l.size() : l.sizeOn(Axis.of(string(a[1], "axis")));
        });
        def("span", 1, 2, a -> TirxSpan.span(layout(a[0], "layout"),
                a.length == 1 || a[1] == null ? null : Axis.of(string(a[1], "axis"))));
        def("image_span", 1, 2, a -> {
            Layout l = layout(a[0], "layout").layout();
            if (a.length == 1 || a[1] == null) {
                Map<String, Object> spans = new LinkedHashMap<>();
                l.spans().forEach((axis, v) -> spans.put(axis.name(), v));
                return spans;
            }
            return l.spanOn(Axis.of(string(a[1], "axis")));
        });
        registerTirxMethods();
    }

    /**
     * The rest of TIRx's public TileLayout and ComposeLayout methods, with TIRx's argument orders (the algebra in
     * {@code org.axe4j.layout}: {@code Broadcast}, {@code PermuteDims}, {@code Trivial}, {@code ScopePair},
     * {@code TrainiumLayout}):
     * <ul>
     *   <li>{@code broadcast(layout, num[, position[, axis]])}: a stride-0 iter {@code (num, 0@axis)} inserted into
     *       the shard at {@code position} (Python's list-insert index, default -1: appended; axis default m; a
     *       ComposeLayout's tile gets it)</li>
     *   <li>{@code permute_dims(layout, perm)}: the shard iters in the order {@code perm}</li>
     *   <li>{@code is_trivial(layout)}: a TileLayout that is the identity onto one memory axis;
     *       {@code is_swizzle(layout)}: a ComposeLayout over such a tile; {@code is_trainium(layout)}: a TileLayout
     *       on no memory axis but P, F and Bank</li>
     *   <li>{@code get_scope(layout)}: {@code [innermost unit, outermost scope]} of the thread axes, as scope names
     *       ({@code "thread"}, {@code "warp"}, {@code "warpgroup"}, {@code "cta"}, {@code "cluster"}), None without a
     *       thread axis in the shard; an offset entry of a TVM layout on a thread axis counts even when it is 0, as
     *       in TIRx</li>
     *   <li>{@code trainium(annotation, shape[, is_psum])}, TIRx's class method {@code TileLayout.trainium};
     *       {@code to_psum(layout)}: F cut into PSUM banks</li>
     * </ul>
     */
    private static void registerTirxMethods() {
        def("broadcast", 2, 4, a -> {
            TirxLayout l = layout(a[0], "layout");
            long num = TirxLayouts.integer(a[1], null, "num");
            long position = a.length < 3 || a[2] == null ? -1 : TirxLayouts.integer(a[2], null, "position");
            Axis axis = a.length < 4 || a[3] == null ? Axis.M : axisArgument(a[3], "axis");
            if (l.composed() && !axis.equals(Axis.M)) {
                throw new IllegalArgumentException("axis must be m for a swizzled layout (the swizzle acts on m), got "
                        + axis);
            }
            Layout broadcast = org.axe4j.layout.Broadcast.broadcast(l.layout(), num, position, axis);
            return TirxLayouts.write(l.withLayout(broadcast));
        });
        def("permute_dims", 2, 2, a -> {
            TirxLayout l = layout(a[0], "layout");
            Layout permuted = org.axe4j.layout.PermuteDims.permuteDims(l.layout(), ints(a[1], "perm"));
            return TirxLayouts.write(l.withLayout(permuted));
        });
        def("is_trivial", 1, 1, a -> {
            TileArgument l = tileOf(a[0]);
            return !l.composed() && l.tile().symbolic().isEmpty()
                    && org.axe4j.layout.Trivial.isTrivial(l.tile().layout());
        });
        def("is_swizzle", 1, 1, a -> {
            TileArgument l = tileOf(a[0]);
            return l.composed() && l.tile().symbolic().isEmpty()
                    && org.axe4j.layout.Trivial.isTrivial(l.tile().layout());
        });
        def("is_trainium", 1, 1, a -> {
            TileArgument l = tileOf(a[0]);
            return !l.composed() && org.axe4j.layout.TrainiumLayout.isTrainium(l.tile().layout());
        });
        def("get_scope", 1, 1, a -> {
            TirxLayout l = tileOf(a[0]).tile();
            java.util.Set<Axis> offsetAxes = new TreeSet<>(l.symbolic().terms().keySet());
            offsetAxes.addAll(tvmOffsetAxes(a[0])); // a zero offset counts in TIRx, and axe4j's Layout drops it
            java.util.Optional<AxisScope[]> pair = org.axe4j.layout.ScopePair.of(l.layout(), offsetAxes);
            return pair.isEmpty() ? null : new ArrayList<Object>(List.of(org.axe4j.layout.ScopePair.name(pair.get()[0]),
                    org.axe4j.layout.ScopePair.name(pair.get()[1])));
        });
        def("trainium", 2, 3, a -> {
            String annotation = string(a[0], "annotation");
            boolean psum = a.length == 3 && a[2] != null && bool(a[2], "is_psum");
            return TirxLayouts.toTvm(org.axe4j.layout.TrainiumLayout.annotated(annotation, shape(a[1], "shape"), psum));
        });
        def("to_psum", 1, 1, a -> {
            TirxLayout l = layout(a[0], "layout");
            if (l.composed()) {
                throw new IllegalArgumentException("to_psum: the layout " + l + " is swizzled; to_psum takes a "
                        + "TileLayout");
            }
            if (!l.symbolic().on(org.axe4j.targets.Trainium.F).isEmpty()) {
                throw new IllegalArgumentException("to_psum: the layout " + l + " has a symbolic offset on F; "
                        + "cutting F into banks moves only shard iters");
            }
            return TirxLayouts.write(l.withLayout(org.axe4j.layout.TrainiumLayout.toPsum(l.layout())));
        });
    }

    /**
     * A layout argument for the predicates: a {@code tirx.ComposeLayout} object gives its tile (composed), whatever
     * its axes (TIRx's predicates look at the tile only; a swizzle in axe4j needs a tile on m).
     */
    private static TileArgument tileOf(Object arg) {
        if (arg instanceof TvmObject o && "tirx.ComposeLayout".equals(o.typeKey())) {
            try (TvmObject tile = (TvmObject) o.get("tile_layout")) {
                return new TileArgument(TirxLayouts.read(tile), true);
            }
        }
        TirxLayout l = layout(arg, "layout");
        return new TileArgument(new TirxLayout(l.layout(), l.symbolic(), org.axe4j.layout.Swizzle.IDENTITY, false),
                l.composed());
    }

    /** The axes of a TVM layout object's offset map, zero entries included (none for layout text). */
    private static List<Axis> tvmOffsetAxes(Object arg) {
        List<Axis> axes = new ArrayList<>();
        if (arg instanceof TvmObject o && TirxLayouts.COMPOSE_LAYOUT.equals(o.typeKey())) {
            try (TvmObject tile = (TvmObject) o.get("tile_layout")) {
                return tvmOffsetAxes(tile);
            }
        }
        if (arg instanceof TvmObject o && TirxLayouts.TILE_LAYOUT.equals(o.typeKey())
                && o.get("offset") instanceof Map<?, ?> offset) {
            for (Object key : offset.keySet()) {
                if (key instanceof TvmObject axis && "tirx.Axis".equals(axis.typeKey())) {
                    axes.add(Axis.of(TirxLayouts.axisName(axis)));
                } else if (key instanceof String name) {
                    axes.add(Axis.of(name));
                }
            }
        }
        return axes;
    }

    /** A layout's tile (unswizzled) and whether it came swizzled (a {@code tirx.ComposeLayout}). */
    private record TileArgument(TirxLayout tile, boolean composed) {}

    /** An axis argument: its name, or a {@code tirx.Axis}. */
    private static Axis axisArgument(Object arg, String role) {
        if (arg instanceof TvmObject o && "tirx.Axis".equals(o.typeKey())) {
            return Axis.of(TirxLayouts.axisName(o));
        }
        return Axis.of(string(arg, role));
    }

    /** A boolean argument (a TVM bool, or 0 / 1). */
    private static boolean bool(Object arg, String role) {
        if (arg instanceof Boolean b) {
            return b;
        }
        if (arg instanceof Long v && (v == 0 || v == 1)) {
            return v == 1;
        }
        throw new IllegalArgumentException(role + " must be a bool, got " + describe(arg));
    }

    /**
     * Registers {@code axe4j.layout.<name>}, running each call under the caps of {@link #budget()}; wrong
     * argument counts, axe4j errors, refusals over a cap and running out of memory or stack become ValueErrors.
     */
    private static void def(String name, int min, int max, PackedFunction body) {
        String full = PREFIX + name;
        Tvm.register(full, args -> {
            if (args.length < min || args.length > max) {
                throw new IllegalArgumentException(full + " takes " + (min == max ? min : min + " to " + max)
                        + " arguments, got " + args.length);
            }
            Budget caps = budget;
            try {
                return caps.run(() -> {
                    try {
                        return body.apply(args);
                    } catch (RuntimeException e) {
                        throw e;
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                });
            } catch (AxeException | IllegalArgumentException | ClassCastException e) {
                throw new IllegalArgumentException(full + ": " + e.getMessage(), e);
            } catch (OutOfMemoryError e) {
                throw new IllegalArgumentException(full + ": too large: the call ran out of memory (the JVM's heap "
                        + "holds " + Runtime.getRuntime().maxMemory() / (1 << 20) + " MiB; the caps are "
                        + caps.asMap() + ")");
            } catch (StackOverflowError e) {
                throw new IllegalArgumentException(full + ": internal error: the call ran out of stack");
            }
        }, true);
    }

    /** A text answer, refused when it has more bytes than the answer cap. */
    private static String answerText(String text) {
        long bytes = text.getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
        Budget b = Budget.active().orElse(budget);
        if (bytes > b.maxAnswerBytes()) {
            throw Budget.tooLarge("the answer has " + bytes + " bytes, more than the cap of " + b.maxAnswerBytes()
                    + " bytes");
        }
        return text;
    }

    /** A layout argument: a TVM layout object, or axe4j text (plain or {@code Swizzle<...> o ...}). */
    static TirxLayout layout(Object arg, String role) {
        if (arg instanceof TvmObject o) {
            return TirxLayouts.read(o);
        }
        if (arg instanceof String text) {
            return readText(text);
        }
        throw new IllegalArgumentException(role + " must be a TVM layout or layout text, got " + describe(arg));
    }

    /** Is a CUDA target current (TVM's {@code Target::Current()}, set by {@code with tvm.target.Target("cuda")})? */
    static boolean cudaTargetCurrent() {
        if (!(Tvm.call("target.TargetCurrent", true) instanceof TvmObject target)) {
            return false;
        }
        try (target; TvmObject kind = (TvmObject) target.get("kind")) {
            return TirxLayouts.integer(kind.get("default_device_type"), null, "default_device_type") == 2; // kDLCUDA
        }
    }

    /**
     * A fused tiled layout's threads written in the part's units, as TIRx's {@code IsTileInner} does: an inner part
     * within a scope below the tiled layout's (a warp in a CTA) splits {@code tx} at that scope; an outer part counting
     * warps or warpgroups splits it at that unit.
     */
    private static Layout onPartScopes(Layout tiled, Layout part, String role) {
        java.util.Optional<AxisScope[]> t = CudaThreads.scopePair(tiled);
        java.util.Optional<AxisScope[]> p = CudaThreads.scopePair(part);
        if (t.isEmpty() || p.isEmpty()) {
            return tiled;
        }
        AxisScope at = role.equals("inner") ? p.get()[1] : p.get()[0];
        boolean between = t.get()[0].isInside(at) && at.isInside(t.get()[1]);
        if (!between || at != AxisScope.WARP && at != AxisScope.WARPGROUP) {
            return tiled;
        }
        try {
            return CudaThreads.split(tiled, at);
        } catch (AxeException e) {
            return tiled; // threads that are no whole units: the part's axes do not occur, so tile-of answers None
        }
    }

    /** An integer layout, swizzled or not (the identity swizzle), as a {@link SwizzledLayout}: memory axis only. */
    private static SwizzledLayout swizzled(TirxLayout l, String operation) {
        if (!l.symbolic().isEmpty()) {
            throw new AxeException(AxeException.Kind.NOT_REPRESENTABLE, operation + ": the layout " + l
                    + " has a symbolic offset; " + operation + " needs integer offsets");
        }
        return new SwizzledLayout(l.swizzle(), l.layout());
    }

    private static Layout plain(Object arg, String role, String operation) {
        return layout(arg, role).plain(operation + " (" + role + ")");
    }

    private static TirxLayout readText(String text) {
        Budget b = Budget.active().orElse(budget);
        if (text.length() > b.maxRequestBytes()
                || text.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > b.maxRequestBytes()) {
            throw Budget.tooLarge("the layout text has more than " + b.maxRequestBytes() + " bytes, the cap of a request");
        }
        return SwizzledLayout.isSwizzledText(text) ? TirxLayout.of(SwizzledLayout.parse(text))
                : TirxLayout.of(Layout.parse(text));
    }

    static Shape shape(Object arg, String role) {
        return Shape.of(integers(arg, role));
    }

    static long[] integers(Object arg, String role) {
        if (!(arg instanceof List<?> list)) {
            throw new IllegalArgumentException(role + " must be an array of integers, got " + describe(arg));
        }
        long[] values = new long[list.size()];
        for (int i = 0; i < values.length; i++) {
            values[i] = TirxLayouts.integer(list.get(i), null, role + "[" + i + "]");
        }
        return values;
    }

    static List<Integer> ints(Object arg, String role) {
        List<Integer> out = new ArrayList<>();
        for (long v : integers(arg, role)) {
            if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) {
                throw new IllegalArgumentException(role + " entry " + v + " is out of range");
            }
            out.add((int) v);
        }
        return out;
    }

    /** {@code [ir.Range(min, extent), ...]} or {@code [[begin, end], ...]}. */
    static Region region(Object arg) {
        if (!(arg instanceof List<?> list)) {
            throw new IllegalArgumentException("region must be an array of ranges, got " + describe(arg));
        }
        long[][] pairs = new long[list.size()][];
        for (int k = 0; k < pairs.length; k++) {
            Object item = list.get(k);
            String what = "region[" + k + "]";
            if (item instanceof TvmObject r && "ir.Range".equals(r.typeKey())) {
                long begin = TirxLayouts.integer(TirxLayouts.rangeBegin(r), null, what + ".min");
                long extent = TirxLayouts.integer(r.get("extent"), null, what + ".extent");
                pairs[k] = new long[] {begin, Checks.add(what + " end (min + extent)", begin, extent)};
            } else if (item instanceof List<?> pair && pair.size() == 2) {
                pairs[k] = new long[] {TirxLayouts.integer(pair.get(0), null, what + " begin"),
                        TirxLayouts.integer(pair.get(1), null, what + " end")};
            } else {
                throw new IllegalArgumentException(what + " must be an ir.Range or a [begin, end] pair, got "
                        + describe(item));
            }
        }
        return Region.of(pairs);
    }

    /** The flat index of {@code x} (a flat index, or a coordinate of {@code shape} when it is not None). */
    private static long flatIndex(TirxLayout l, Object x, Object shapeArg) {
        long flat;
        if (shapeArg != null) {
            Shape shape = shape(shapeArg, "shape");
            l.layout().requireAdmits(shape);
            flat = shape.flatten(integers(x, "coord"));
        } else {
            flat = TirxLayouts.integer(x, null, "x");
        }
        if (flat < 0 || flat >= l.layout().size()) {
            throw new IllegalArgumentException("x = " + flat + " is outside [0, " + l.layout().size() + ") of " + l);
        }
        return flat;
    }

    private static List<Object> apply(TirxLayout l, Object[] a) {
        if (SymbolicIndex.anySymbolic(a[1])) {
            return SymbolicIndex.apply(l, a[1], a.length == 3 ? a[2] : null);
        }
        boolean swizzledOffset = l.composed() && !l.symbolic().on(Axis.M).isEmpty();
        if (l.composed() && new SwizzledLayout(l.swizzle(), l.layout()).isBare()) {
            // A bare swizzle is the swizzle of memory: every index x >= 0 (of any shape) maps to swz(x).
            long x = a.length == 3 && a[2] != null ? shape(a[2], "shape").flatten(integers(a[1], "coord"))
                    : TirxLayouts.integer(a[1], null, "x");
            SwizzledLayout bare = new SwizzledLayout(l.swizzle(), l.layout());
            if (!swizzledOffset) {
                return pointMaps(l, bare.applyAny(x));
            }
            bare.applyAny(x); // refuses a negative index
            return swizzledPointMaps(l, x < l.layout().size() ? l.layout().apply(x)
                    : List.of(new Point(new java.util.TreeMap<>(Map.of(Axis.M, x)))));
        }
        long x = flatIndex(l, a[1], a.length == 3 ? a[2] : null);
        if (swizzledOffset) {
            return swizzledPointMaps(l, l.layout().apply(x));
        }
        List<Point> points = l.composed() ? new SwizzledLayout(l.swizzle(), l.layout()).apply(x) : l.layout().apply(x);
        return pointMaps(l, points);
    }

    /**
     * Points of a swizzled layout with a symbolic offset on m, from the points of its integer layout before the swizzle:
     * the m coordinate is {@code swz(p_m + symbolic)}, the swizzle after every offset ({@link SwizzledAddress}).
     */
    private static List<Object> swizzledPointMaps(TirxLayout l, List<Point> unswizzled) {
        List<Object> out = new ArrayList<>();
        for (Object o : pointMaps(l, unswizzled)) {
            @SuppressWarnings("unchecked")
            Map<String, Object> coords = (Map<String, Object>) o;
            long m = ((Point) unswizzled.get(out.size())).get(Axis.M);
            coords.put(Axis.M.name(), SwizzledAddress.of(l.swizzle(), m, l.symbolic().on(Axis.M),
                    "the address on m of " + l));
            out.add(coords);
        }
        return out;
    }

    /** {@code points(layout, x, shape, start, limit)}: one page of L(x), in apply's order; plain layouts only. */
    private static List<Object> points(TirxLayout l, Object[] a) {
        Layout plain = l.plain("points (layout)");
        long x = flatIndex(l, a[1], a[2]);
        long start = Checks.nonNegative("start", TirxLayouts.integer(a[3], null, "start"));
        long limit = Checks.positive("limit", TirxLayouts.integer(a[4], null, "limit"));
        Budget.requirePoints(limit, () -> "a page of " + limit + " points of L(" + x + ") of " + l);
        java.util.Iterator<Point> it = plain.replicas().iterator(start);
        Point base = plain.base(x);
        List<Point> page = new ArrayList<>();
        while (page.size() < limit && it.hasNext()) {
            page.add(base.plus(it.next()));
        }
        return pointMaps(l, page);
    }

    /** Points as maps from every axis of the layout to its coordinate (a PrimExpr where the offset is symbolic). */
    private static List<Object> pointMaps(TirxLayout l, List<Point> points) {
        List<Object> out = new ArrayList<>();
        for (Point p : points) {
            Map<String, Object> coords = new LinkedHashMap<>();
            // Every axis of the layout appears, zero coordinates included (as in TIRx's apply).
            TreeSet<Axis> axes = new TreeSet<>(l.layout().axes());
            axes.addAll(p.coords().keySet());
            axes.addAll(l.symbolic().terms().keySet());
            for (Axis axis : axes) {
                coords.put(axis.name(), AffineExprs.write(p.get(axis), l.symbolic().on(axis)));
            }
            out.add(coords);
        }
        return out;
    }

    /**
     * Same map for every value of the variables: equal symbolic parts and, for the integer parts,
     * {@link Equivalence}; with a swizzle, the enumerated maps are compared (up to 2^20 elements).
     */
    static boolean equivalent(TirxLayout a, TirxLayout b) {
        if (!a.symbolic().equals(b.symbolic())) {
            return false;
        }
        if (!a.composed() && !b.composed()) {
            return Equivalence.equivalent(a.layout(), b.layout());
        }
        if (a.composed() && b.composed() && a.swizzle().equals(b.swizzle())
                && Equivalence.equivalent(a.layout(), b.layout())) {
            return true;
        }
        long size = a.layout().size();
        if (size != b.layout().size()) {
            return false;
        }
        if (size > Equivalence.RUN_LIMIT) {
            throw new AxeException(AxeException.Kind.NOT_REPRESENTABLE, "equivalent: " + a + " and " + b
                    + " are swizzled and have " + size + " elements, more than the " + Equivalence.RUN_LIMIT
                    + " axe4j enumerates");
        }
        SwizzledLayout sa = new SwizzledLayout(a.swizzle(), a.layout());
        SwizzledLayout sb = new SwizzledLayout(b.swizzle(), b.layout());
        // The common symbolic offset s on m is swizzled with the rest: both maps repeat when s grows by the larger
        // period P, and s takes every multiple of g = gcd(its coefficients), so the residues s mod P that occur are
        // the multiples of gcd(g, P); the maps must agree at each.
        long period = Math.max(a.swizzle().period(), b.swizzle().period());
        long g = 0;
        for (SymbolicOffset.Term t : a.symbolic().on(Axis.M)) {
            g = org.axe4j.layout.Checks.gcd(g, t.coefficient() % period);
        }
        long step = g == 0 ? period : org.axe4j.layout.Checks.gcd(g, period);
        if (size * (period / step) > Equivalence.RUN_LIMIT) {
            throw new AxeException(AxeException.Kind.NOT_REPRESENTABLE, "equivalent: " + a + " and " + b
                    + " are swizzled after a symbolic offset; comparing them at its " + period / step + " residues"
                    + " modulo the period " + period + " takes more than the " + Equivalence.RUN_LIMIT + " points"
                    + " axe4j enumerates");
        }
        for (long s = 0; s < period; s += step) {
            for (long x = 0; x < size; x++) {
                if (!new TreeSet<>(shifted(sa, x, s)).equals(new TreeSet<>(shifted(sb, x, s)))) {
                    return false;
                }
            }
        }
        return true;
    }

    /** {@code { swz(p + s) | p in L(x) }}: a swizzled layout's points with {@code s} added before the swizzle. */
    private static List<Point> shifted(SwizzledLayout l, long x, long s) {
        List<Point> out = new ArrayList<>();
        for (Point p : l.layout().apply(x)) {
            out.add(new Point(new java.util.TreeMap<>(Map.of(Axis.M, l.swizzle().apply(p.get(Axis.M) + s)))));
        }
        return out;
    }

    private static String string(Object arg, String role) {
        if (arg instanceof String s) {
            return s;
        }
        throw new IllegalArgumentException(role + " must be a string, got " + describe(arg));
    }

    private static String describe(Object arg) {
        return arg == null ? "None" : arg instanceof TvmObject o ? o.typeKey() + " " + o.repr()
                : arg.getClass().getSimpleName() + " " + arg;
    }
}
