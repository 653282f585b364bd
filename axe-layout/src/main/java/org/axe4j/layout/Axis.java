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

    /** The default memory axis; a bare stride or offset in text means this axis. */
    public static final Axis M = new Axis("m");

    public Axis {
        if (name == null || !IDENT.matcher(name).matches()) {
            throw AxeException.invalid("axis name (%s) must be an identifier [A-Za-z_][A-Za-z0-9_.]*", name);
        }
    }

    public static Axis of(String name) {
        return name.equals("m") ? M : new Axis(name);
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
