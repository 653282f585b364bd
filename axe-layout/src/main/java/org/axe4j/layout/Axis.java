package org.axe4j.layout;

import java.util.Optional;
import java.util.regex.Pattern;

/**
 * A named hardware axis ({@code m}, {@code laneid}, {@code warpid}, {@code gpuid}, {@code P}, ...).
 * Any identifier is a legal axis; {@link AxisRegistry} gives known ones a kind and scope.
 * Axes order by name, which fixes the printed order of offsets and points.
 */
public record Axis(String name) implements Comparable<Axis> {
    private static final Pattern IDENT = Pattern.compile("[A-Za-z_][A-Za-z0-9_.]*");

    /** Axes by name, so that {@link #of} validates a name once (a regex match costs more than the lookup). */
    private static final java.util.concurrent.ConcurrentHashMap<String, Axis> INTERNED =
            new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * Interned names are bounded, in number and in length: a stream of distinct (or very long) names must not
     * grow the table without end.
     */
    private static final int INTERNED_LIMIT = 4096;

    private static final int INTERNED_NAME_LIMIT = 64;

    /** The default memory axis; a bare stride or offset in text means this axis. */
    public static final Axis M = new Axis("m");

    public Axis {
        if (name == null || !(INTERNED.containsKey(name) || IDENT.matcher(name).matches())) {
            throw AxeException.invalid("axis name (%s) must be an identifier [A-Za-z_][A-Za-z0-9_.]*", name);
        }
    }

    public static Axis of(String name) {
        if (name == null) {
            return new Axis(null); // throws the validation error
        }
        Axis known = INTERNED.get(name);
        if (known != null) {
            return known;
        }
        Axis axis = new Axis(name);
        if (INTERNED.size() < INTERNED_LIMIT && name.length() <= INTERNED_NAME_LIMIT) {
            INTERNED.putIfAbsent(name, axis);
        }
        return axis;
    }

    /** The registry's kind for this axis, {@link AxisKind#UNKNOWN} if unregistered. */
    public AxisKind kind() {
        return AxisRegistry.global().kind(this);
    }

    /** The registry's scope for a thread or device axis. */
    public Optional<AxisScope> scope() {
        return AxisRegistry.global().scope(this);
    }

    public boolean isMemory() {
        return this.equals(M);
    }

    @Override
    public int compareTo(Axis o) {
        return name.compareTo(o.name);
    }

    @Override
    public String toString() {
        return name;
    }
}
