package org.axe4j.layout.picture;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.axe4j.layout.AxeException;
import org.axe4j.layout.Axis;
import org.axe4j.layout.AxisKind;
import org.axe4j.layout.AxisScope;
import org.axe4j.layout.Point;

/**
 * Compact labels of points over a fixed list of axes: {@code {laneid:8, reg:1, warpid:6}} over
 * (laneid, warpid, reg) is {@code L8 W6 r1}. Every axis is printed, zeros included, so the columns of a
 * picture line up; {@link #parse} reads a label back.
 *
 * <p>Axes are ordered thread axes first (innermost scope first), then device axes, then memory and
 * unknown axes by name. Known axes get short names ({@code laneid -> L}, {@code warpid -> W},
 * {@code reg -> r}, {@code gpuid -> G}); any other axis is written in full. A short name never ends in
 * a digit (a {@code :} is appended if the axis name does), so {@code name + integer} reads back uniquely.
 */
public final class PointLabels {
    private static final Map<String, String> SHORT = Map.of(
            "laneid", "L", "warpid", "W", "reg", "r", "gpuid", "G", "wgid", "WG", "wid_in_wg", "w");

    private final List<Axis> axes;
    private final Map<Axis, String> names;

    private PointLabels(List<Axis> axes, Map<Axis, String> names) {
        this.axes = List.copyOf(axes);
        this.names = names;
    }

    /** Labels over {@code axes}, ordered for reading (threads innermost first, devices, then memory). */
    public static PointLabels over(Collection<Axis> axes) {
        List<Axis> ordered = new ArrayList<>(axes);
        ordered.sort(Comparator.comparingInt(PointLabels::rank).thenComparing(Comparator.naturalOrder()));
        Map<Axis, String> names = new LinkedHashMap<>();
        Map<String, Integer> uses = new TreeMap<>();
        for (Axis a : ordered) {
            uses.merge(proposed(a), 1, Integer::sum);
            uses.merge(a.name(), 1, Integer::sum);
        }
        for (Axis a : ordered) {
            String p = proposed(a);
            // A short name that another axis also proposes or is literally called falls back to the full name.
            String name = p.equals(a.name()) || uses.get(p) == 1 ? p : a.name();
            names.put(a, Character.isDigit(name.charAt(name.length() - 1)) ? name + ":" : name);
        }
        return new PointLabels(ordered, names);
    }

    private static String proposed(Axis a) {
        return SHORT.getOrDefault(a.name(), a.name());
    }

    /** Sort key: thread axes by scope, then device axes, then everything else. */
    private static int rank(Axis a) {
        AxisKind kind = a.kind();
        if (kind == AxisKind.THREAD) {
            return a.scope().map(AxisScope::ordinal).orElse(AxisScope.values().length);
        }
        return kind == AxisKind.DEVICE ? AxisScope.values().length + 1 : AxisScope.values().length + 2;
    }

    /** The axes in label order. */
    public List<Axis> axes() {
        return axes;
    }

    /** The short name of {@code axis} in labels. */
    public String shortName(Axis axis) {
        String n = names.get(axis);
        if (n == null) {
            throw new AxeException(AxeException.Kind.INVALID, "axis " + axis + " is not one of the labelled axes " + axes);
        }
        return n;
    }

    /** {@code L = laneid, W = warpid, r = reg}; an axis written in full is listed by its name alone. */
    public String legend() {
        StringBuilder sb = new StringBuilder();
        for (Axis a : axes) {
            sb.append(sb.length() > 0 ? ", " : "").append(names.get(a));
            if (!names.get(a).equals(a.name())) {
                sb.append(" = ").append(a.name());
            }
        }
        return sb.toString();
    }

    /** Label of the origin when there are no axes at all (a layout that maps everything to one point). */
    public static final String ORIGIN = "{}";

    /** {@code L8 W6 r1}; a point with a component on an axis outside the list is rejected. */
    public String label(Point p) {
        for (Axis a : p.coords().keySet()) {
            shortName(a);
        }
        if (axes.isEmpty()) {
            return ORIGIN;
        }
        StringBuilder sb = new StringBuilder();
        for (Axis a : axes) {
            sb.append(sb.length() > 0 ? " " : "").append(names.get(a)).append(p.get(a));
        }
        return sb.toString();
    }

    /** Reads a label written by {@link #label}. */
    public Point parse(String label) {
        TreeMap<Axis, Long> coords = new TreeMap<>();
        if (label.trim().equals(ORIGIN)) {
            return Point.ZERO;
        }
        for (String token : label.trim().split("\\s+")) {
            Optional<Map.Entry<Axis, Long>> match = Optional.empty();
            for (Map.Entry<Axis, String> e : names.entrySet()) {
                String rest = token.startsWith(e.getValue()) ? token.substring(e.getValue().length()) : "";
                if (rest.matches("-?[0-9]+")) {
                    match = Optional.of(Map.entry(e.getKey(), Long.parseLong(rest)));
                }
            }
            Map.Entry<Axis, Long> m = match.orElseThrow(() -> new AxeException(AxeException.Kind.PARSE,
                    "label token '" + token + "' in '" + label + "' names none of " + legend()));
            coords.merge(m.getKey(), m.getValue(), Long::sum);
        }
        return new Point(coords);
    }
}
