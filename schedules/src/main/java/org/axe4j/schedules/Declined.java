package org.axe4j.schedules;

/** A rule's refusal: thrown while planning, turned into a declined {@link Decision} carrying {@link #getMessage()}. */
public final class Declined extends RuntimeException {
    public Declined(String reason) {
        super(reason, null, false, false);
    }

    public static Declined of(String format, Object... args) {
        return new Declined(String.format(format, args));
    }
}
