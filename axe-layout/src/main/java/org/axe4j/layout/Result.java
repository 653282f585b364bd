package org.axe4j.layout;

import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The answer of a partial operation (slice, group, tile-of, a conversion to another layout system): a value, or the
 * reason there is none. It reads like {@link Optional} and keeps the reason where {@code Optional.empty()} would
 * drop it.
 *
 * <p>Absent means valid operands without a representable answer; bad operands are not an absent result, they throw
 * an INVALID {@link AxeException}. {@link #orElseThrow()} turns an absent result into the NOT_REPRESENTABLE
 * exception its operation documents, with the reason as the message.
 *
 * @param <T> the value's type
 */
public final class Result<T> {
    private final T value;
    private final String reason;

    private Result(T value, String reason) {
        this.value = value;
        this.reason = reason;
    }

    public static <T> Result<T> of(T value) {
        return new Result<>(Objects.requireNonNull(value, "value"), null);
    }

    public static <T> Result<T> absent(String reason) {
        return new Result<>(null, Objects.requireNonNull(reason, "reason"));
    }

    /** An absent result whose reason is {@code String.format(format, args)}. */
    public static <T> Result<T> absent(String format, Object... args) {
        return absent(String.format(format, args));
    }

    public boolean isPresent() {
        return value != null;
    }

    public boolean isEmpty() {
        return value == null;
    }

    /** The value; NoSuchElementException with the reason when absent. */
    public T get() {
        if (value == null) {
            throw new NoSuchElementException(reason);
        }
        return value;
    }

    /** Why there is no value; the empty string for a present result. */
    public String reason() {
        return value != null ? "" : reason;
    }

    /** The value, or a NOT_REPRESENTABLE {@link AxeException} whose message is the reason. */
    public T orElseThrow() {
        if (value == null) {
            throw new AxeException(AxeException.Kind.NOT_REPRESENTABLE, reason);
        }
        return value;
    }

    /** The value, or the exception {@code error} makes of the reason. */
    public <X extends RuntimeException> T orElseThrow(Function<String, X> error) {
        if (value == null) {
            throw error.apply(reason);
        }
        return value;
    }

    public T orElse(T other) {
        return value != null ? value : other;
    }

    public T orElseGet(Supplier<? extends T> other) {
        return value != null ? value : other.get();
    }

    public void ifPresent(Consumer<? super T> action) {
        if (value != null) {
            action.accept(value);
        }
    }

    /** The value mapped by {@code f}; an absent result keeps its reason. */
    public <U> Result<U> map(Function<? super T, ? extends U> f) {
        return value != null ? Result.of(f.apply(value)) : absent(reason);
    }

    /** {@code f} of the value; an absent result keeps its reason. */
    public <U> Result<U> flatMap(Function<? super T, Result<U>> f) {
        return value != null ? f.apply(value) : absent(reason);
    }

    /** The value as an {@link Optional}, the reason dropped. */
    public Optional<T> toOptional() {
        return Optional.ofNullable(value);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Result<?> r && Objects.equals(value, r.value) && Objects.equals(reason, r.reason);
    }

    @Override
    public int hashCode() {
        return Objects.hash(value, reason);
    }

    @Override
    public String toString() {
        return value != null ? "Result[" + value + "]" : "Absent[" + reason + "]";
    }
}
