package org.axe4j.layout.interop;

import java.util.Objects;
import java.util.Optional;
import org.axe4j.layout.AxeException;

/**
 * The answer of a partial conversion: either a value, or the reason no value exists.
 * Exactly one of {@link #value()} and {@link #reason()} is present.
 *
 * @param <T> the converted value's type
 */
public final class Conversion<T> {
    private final T value;
    private final String reason;

    private Conversion(T value, String reason) {
        this.value = value;
        this.reason = reason;
    }

    public static <T> Conversion<T> of(T value) {
        return new Conversion<>(Objects.requireNonNull(value, "value"), null);
    }

    public static <T> Conversion<T> refused(String reason) {
        return new Conversion<>(null, Objects.requireNonNull(reason, "reason"));
    }

    public boolean isPresent() {
        return value != null;
    }

    public Optional<T> value() {
        return Optional.ofNullable(value);
    }

    /** Why there is no value; empty when there is one. */
    public Optional<String> reason() {
        return Optional.ofNullable(reason);
    }

    /** The value, or a NOT_REPRESENTABLE {@link AxeException} carrying the reason. */
    public T orElseThrow() {
        if (value == null) {
            throw new AxeException(AxeException.Kind.NOT_REPRESENTABLE, reason);
        }
        return value;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Conversion<?> c && Objects.equals(value, c.value) && Objects.equals(reason, c.reason);
    }

    @Override
    public int hashCode() {
        return Objects.hash(value, reason);
    }

    @Override
    public String toString() {
        return value != null ? "Conversion[" + value + "]" : "Refused[" + reason + "]";
    }
}
