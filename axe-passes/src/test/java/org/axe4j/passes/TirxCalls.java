package org.axe4j.passes;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.axe4j.layout.AxeException;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Point;
import org.axe4j.layout.Region;
import org.axe4j.layout.Shape;
import org.axe4j.tvm.Tvm;
import org.axe4j.tvm.TvmException;
import org.axe4j.tvm.TvmObject;

/**
 * The questions put to TIRx's C++ globals, each answered by a layout (or number) or by a refusal: a raised
 * error, a {@code None}, or an answer that does not convert back (a symbolic expression, a ComposeLayout).
 * Also renders a question as TVMScript-style Python for the reproductions in docs/divergences.md.
 */
final class TirxCalls {
    private TirxCalls() {}

    /** TIRx's answer, or why there is none ({@code refusal} is then a short stable key and {@code message} the text). */
    record Answer<T>(T value, String refusal, String message) {
        boolean answered() {
            return value != null;
        }

        String shown() {
            return answered() ? String.valueOf(value) : "refuses (" + message + ")";
        }
    }

    private static final Pattern CHECK = Pattern.compile("Check failed: \\((.*?)\\) is false");

    static <T> Answer<T> ask(Supplier<T> question) {
        try {
            T value = question.get();
            return value == null ? new Answer<>(null, "returns None", "None") : new Answer<>(value, null, null);
        } catch (TvmException | AxeException e) {
            String first = String.valueOf(e.getMessage()).lines().findFirst().orElse("").strip();
            Matcher m = CHECK.matcher(first);
            String key = m.find() ? "raises: Check failed: (" + m.group(1) + ")"
                    : "raises: " + first.replaceAll("T\\.TileLayout\\(.*\\)", "L").replaceAll("-?\\d+", "N");
            String shortKey = key.length() > 110 ? key.substring(0, 110) + "..." : key;
            String message = first.length() > 300 ? first.substring(0, 300) + "..." : first;
            return new Answer<>(null, shortKey, message);
        }
    }

    static Layout layout(Object tvm) {
        return tvm == null ? null : TirxLayouts.fromTvm((TvmObject) tvm);
    }

    static Answer<Point> applyLinear(TvmObject l, long x) {
        return ask(() -> TirxLayouts.pointOf((Map<?, ?>) Tvm.call("tirx.LayoutApplyLinear", l, x)));
    }

    static Answer<Layout> canonicalize(Layout l) {
        return ask(() -> layout(Tvm.call("tirx.LayoutCanonicalize", TirxLayouts.toTvm(l))));
    }

    static Answer<Long> span(TvmObject l, Axis a) {
        return ask(() -> TirxLayouts.integer(Tvm.call("tirx.LayoutGetSpan", l, a.name()), l, "span"));
    }

    /** {@code TileLayoutGroup(l, shape)}: the grouped layout and its separators. */
    record GroupAnswer(Layout layout, List<Integer> seps) {
        @Override
        public String toString() {
            return layout + " seps " + seps;
        }
    }

    static Answer<GroupAnswer> group(Layout l, Shape shape) {
        return ask(() -> {
            List<?> pair = (List<?>) Tvm.call("tirx.TileLayoutGroup", TirxLayouts.toTvm(l), shape.dims());
            List<Integer> seps = new ArrayList<>();
            for (Object s : (List<?>) pair.get(1)) {
                seps.add(Math.toIntExact(TirxLayouts.integer(s, null, "separator")));
            }
            return new GroupAnswer(layout(pair.get(0)), seps);
        });
    }

    /** {@code inner.tile(outer, outer_shape, inner_shape)}. */
    static Answer<Layout> tile(Layout outer, Shape outerShape, Layout inner, Shape innerShape) {
        return ask(() -> layout(Tvm.call("tirx.LayoutTile", TirxLayouts.toTvm(inner), TirxLayouts.toTvm(outer),
                outerShape.dims(), innerShape.dims())));
    }

    /** {@code right.direct_sum(left, left_shape, right_shape)}. */
    static Answer<Layout> directSum(Layout left, Shape leftShape, Layout right, Shape rightShape) {
        return ask(() -> layout(Tvm.call("tirx.LayoutDirectSum", TirxLayouts.toTvm(right), TirxLayouts.toTvm(left),
                leftShape.dims(), rightShape.dims())));
    }

    /** {@code inner.is_tile_inner(tiled, tiled_shape, inner_shape)}: the outer layout, or None. */
    static Answer<Layout> outerOf(Layout tiled, Shape shape, Layout inner, Shape innerShape) {
        return ask(() -> layout(Tvm.call("tirx.LayoutIsTileInner", TirxLayouts.toTvm(inner), TirxLayouts.toTvm(tiled),
                shape.dims(), innerShape.dims())));
    }

    /** {@code outer.is_tile_outer(tiled, tiled_shape, outer_shape)}: the inner layout, or None. */
    static Answer<Layout> innerOf(Layout tiled, Shape shape, Layout outer, Shape outerShape) {
        return ask(() -> layout(Tvm.call("tirx.LayoutIsTileOuter", TirxLayouts.toTvm(outer), TirxLayouts.toTvm(tiled),
                shape.dims(), outerShape.dims())));
    }

    /** {@code l.slice(shape, region)} with the region as {@code ir.Range(begin, end)} per dimension. */
    static Answer<Layout> slice(Layout l, Shape shape, Region region) {
        return ask(() -> {
            List<Object> ranges = new ArrayList<>();
            for (int k = 0; k < region.rank(); k++) {
                ranges.add(Tvm.call("ir.Range", region.begin(k), region.end(k), null));
            }
            return layout(Tvm.call("tirx.LayoutSlice", TirxLayouts.toTvm(l), shape.dims(), ranges));
        });
    }

    // ---- Python reproductions -------------------------------------------------------------------------

    /** The imports a reproduction needs: TIRx's layout builders and the axes as names. */
    static final String PYTHON_PRELUDE = "from tvm.tirx.layout import S, R, TileLayout, Axis\n"
            + "laneid, warpid, TLane, TCol = (Axis.get(n) for n in (\"laneid\", \"warpid\", \"TLane\", \"TCol\"))\n";

    /**
     * axe4j's text is TIRx's {@code S[...] + R[...] + o@axis} syntax once the axes are Python names, except that
     * TIRx's builder has no subtraction: a negative offset term {@code - 7@laneid} is written {@code + -7@laneid}.
     * (axe4j prints " - " only between offset terms; strides inside brackets carry their sign without spaces.)
     */
    static String python(Layout l) {
        return "TileLayout(" + l.toString().replace(" - ", " + -") + ")";
    }

    static String python(Shape s) {
        return s.dims().toString().replace(" ", "");
    }

    static String python(Region region) {
        StringBuilder sb = new StringBuilder("[");
        for (int k = 0; k < region.rank(); k++) {
            sb.append(k == 0 ? "" : ", ").append('(').append(region.begin(k)).append(", ").append(region.end(k))
                    .append(')');
        }
        return sb.append(']').toString();
    }
}
