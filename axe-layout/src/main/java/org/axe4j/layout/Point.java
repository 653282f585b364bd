package org.axe4j.layout;

import java.util.Collections;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * A point of {@code Z^A}: a sparse integer vector over axes, added componentwise.
 * Zero components are not stored, so two points are equal iff they agree on every axis.
 * Points order by their (axis, value) entries, which fixes the order of {@link Layout#apply} sets.
 */
public record Point(SortedMap<Axis, Long> coords) implements Comparable<Point> {
    public static final Point ZERO = new Point(new TreeMap<>());

    public Point {
        TreeMap<Axis, Long> copy = new TreeMap<>();
        for (Map.Entry<Axis, Long> e : coords.entrySet()) {
            if (e.getValue() != 0L) {
                copy.put(e.getKey(), e.getValue());
            }
        }
        coords = Collections.unmodifiableSortedMap(copy);
    }

    /** {@code Point.of("laneid", 8, "warpid", 6)}. */
    public static Point of(Object... axisValuePairs) {
        if (axisValuePairs.length % 2 != 0) {
            throw AxeException.invalid("Point.of needs axis/value pairs, got %d arguments", axisValuePairs.length);
        }
        TreeMap<Axis, Long> m = new TreeMap<>();
        for (int i = 0; i < axisValuePairs.length; i += 2) {
            Object a = axisValuePairs[i];
            Axis axis = a instanceof Axis ax ? ax : Axis.of(a.toString());
            long v = ((Number) axisValuePairs[i + 1]).longValue();
            m.merge(axis, v, (x, y) -> Checks.add(() -> "point coordinate on " + axis, x, y));
        }
        return new Point(m);
    }

    public static Point single(Axis axis, long value) {
        TreeMap<Axis, Long> m = new TreeMap<>();
        m.put(axis, value);
        return new Point(m);
    }

    /** The component on {@code axis} (0 if absent). */
    public long get(Axis axis) {
        return coords.getOrDefault(axis, 0L);
    }

    public long get(String axis) {
        return get(Axis.of(axis));
    }

    public Point plus(Point other) {
        TreeMap<Axis, Long> m = new TreeMap<>(coords);
        for (Map.Entry<Axis, Long> e : other.coords.entrySet()) {
            m.merge(e.getKey(), e.getValue(), (x, y) -> Checks.add(() -> "point coordinate on " + e.getKey(), x, y));
        }
        return new Point(m);
    }

    public Point minus(Point other) {
        TreeMap<Axis, Long> m = new TreeMap<>(coords);
        for (Map.Entry<Axis, Long> e : other.coords.entrySet()) {
            m.merge(e.getKey(), Math.negateExact(e.getValue()),
                    (x, y) -> Checks.add(() -> "point coordinate on " + e.getKey(), x, y));
        }
        return new Point(m);
    }

    /** Adds {@code value} on {@code axis}. */
    public Point plus(Axis axis, long value) {
        if (value == 0) {
            return this;
        }
        TreeMap<Axis, Long> m = new TreeMap<>(coords);
        m.merge(axis, value, (x, y) -> Checks.add(() -> "point coordinate on " + axis, x, y));
        return new Point(m);
    }

    public boolean isZero() {
        return coords.isEmpty();
    }

    /** Lexicographic over all axes in name order, a missing component reading as 0: {@code {m:-1} < {} < {m:1}}. */
    @Override
    public int compareTo(Point o) {
        java.util.TreeSet<Axis> axes = new java.util.TreeSet<>(coords.keySet());
        axes.addAll(o.coords.keySet());
        for (Axis a : axes) {
            int c = Long.compare(get(a), o.get(a));
            if (c != 0) {
                return c;
            }
        }
        return 0;
    }

    /** {@code {laneid:8, reg:1, warpid:6}}; the origin prints as {@code {}}. */
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("{");
        for (Map.Entry<Axis, Long> e : coords.entrySet()) {
            if (sb.length() > 1) {
                sb.append(", ");
            }
            sb.append(e.getKey()).append(':').append(e.getValue());
        }
        return sb.append('}').toString();
    }
}
