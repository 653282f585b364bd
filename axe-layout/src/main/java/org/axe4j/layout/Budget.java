package org.axe4j.layout;

import java.util.Map;
import java.util.function.Supplier;

/**
 * The resource caps of one request, and the request that runs under them.
 *
 * <pre>
 *   maxPoints        most points one enumeration may produce: the points of L(x) (its distinct replicas),
 *                    a picture's cells x replicas, an image's size x replicas. Refused up front, before
 *                    anything is enumerated, whenever the count is known from the layout.
 *   maxAnswerBytes   most bytes of one answer (the command-line tool's answer line or text)
 *   maxRequestBytes  most bytes of one request (a batch line, a layout text given to a TVM function)
 *   maxMillis        most wall-clock milliseconds one request may run
 * </pre>
 *
 * A caller runs a request with {@link #run}: inside it, {@link #requirePoints} refuses an enumeration larger
 * than {@code maxPoints} and {@link #tick} (called in the algebra's long loops) refuses to go on past the
 * deadline. Both throw an {@link AxeException} of kind {@link AxeException.Kind#TOO_LARGE} that names the
 * figure and the cap, e.g. {@code "too large: L(1) of S[2:1] + R[16777216:1@laneid] has 16777216 points,
 * more than the cap of 65536 points"}. Outside {@link #run} (the algebra used as a library) nothing is
 * capped beyond the algebra's own enumeration limits. Budgets are per thread: concurrent requests each
 * run under their own.
 *
 * <p>{@link #DEFAULT} holds the caps the command-line tool and the TVM functions start from;
 * {@link #fromEnvironment} lets {@code AXE4J_MAX_POINTS}, {@code AXE4J_MAX_ANSWER_BYTES},
 * {@code AXE4J_MAX_REQUEST_BYTES} and {@code AXE4J_MAX_MILLIS} change them.
 */
public record Budget(long maxPoints, long maxAnswerBytes, long maxRequestBytes, long maxMillis) {
    /** 65,536 points, 4 MiB answers, 1 MiB requests, 10 seconds. */
    public static final Budget DEFAULT = new Budget(1L << 16, 4L << 20, 1L << 20, 10_000);

    /** The environment variables {@link #fromEnvironment} reads, by cap name. */
    public static final Map<String, String> ENVIRONMENT = Map.of(
            "max_points", "AXE4J_MAX_POINTS",
            "max_answer_bytes", "AXE4J_MAX_ANSWER_BYTES",
            "max_request_bytes", "AXE4J_MAX_REQUEST_BYTES",
            "max_millis", "AXE4J_MAX_MILLIS");

    private static final ThreadLocal<Scope> ACTIVE = new ThreadLocal<>();

    /** How many {@link #tick}s pass between two looks at the clock. */
    private static final int TICKS_PER_CLOCK_READ = 256;

    public Budget {
        Checks.positive("budget max_points", maxPoints);
        Checks.positive("budget max_answer_bytes", maxAnswerBytes);
        Checks.positive("budget max_request_bytes", maxRequestBytes);
        Checks.positive("budget max_millis", maxMillis);
    }

    /** This budget with the cap {@code name} ({@code max_points}, {@code max_answer_bytes}, ...) set to {@code value}. */
    public Budget with(String name, long value) {
        return switch (name) {
            case "max_points" -> new Budget(value, maxAnswerBytes, maxRequestBytes, maxMillis);
            case "max_answer_bytes" -> new Budget(maxPoints, value, maxRequestBytes, maxMillis);
            case "max_request_bytes" -> new Budget(maxPoints, maxAnswerBytes, value, maxMillis);
            case "max_millis" -> new Budget(maxPoints, maxAnswerBytes, maxRequestBytes, value);
            default -> throw AxeException.invalid("unknown budget cap '%s' (known: max_points, max_answer_bytes, "
                    + "max_request_bytes, max_millis)", name);
        };
    }

    /** The caps by name, in a fixed order. */
    public Map<String, Long> asMap() {
        java.util.LinkedHashMap<String, Long> m = new java.util.LinkedHashMap<>();
        m.put("max_points", maxPoints);
        m.put("max_answer_bytes", maxAnswerBytes);
        m.put("max_request_bytes", maxRequestBytes);
        m.put("max_millis", maxMillis);
        return m;
    }

    /** {@link #DEFAULT} with every cap whose environment variable is set replaced by its value. */
    public static Budget fromEnvironment(Map<String, String> env) {
        Budget b = DEFAULT;
        for (String name : b.asMap().keySet()) {
            String var = ENVIRONMENT.get(name);
            String text = env.get(var);
            if (text != null && !text.isEmpty()) {
                b = b.with(name, parseCap(var, text));
            }
        }
        return b;
    }

    /** A cap written as plain ASCII decimal digits, {@code >= 1}. */
    public static long parseCap(String role, String text) {
        if (text.isEmpty() || text.length() > 19 || !text.chars().allMatch(ch -> ch >= '0' && ch <= '9')) {
            throw AxeException.invalid("%s ('%s') must be a positive integer written in digits 0-9", role, text);
        }
        return Checks.positive(role, Long.parseLong(text));
    }

    /** Runs {@code body} as one request under this budget (on this thread); budgets nest, the inner one wins. */
    public <T> T run(Supplier<T> body) {
        Scope outer = ACTIVE.get();
        ACTIVE.set(new Scope(this, System.nanoTime()));
        try {
            return body.get();
        } finally {
            if (outer == null) {
                ACTIVE.remove();
            } else {
                ACTIVE.set(outer);
            }
        }
    }

    /** The budget of the request running on this thread, or empty outside {@link #run}. */
    public static java.util.Optional<Budget> active() {
        Scope s = ACTIVE.get();
        return s == null ? java.util.Optional.empty() : java.util.Optional.of(s.budget);
    }

    /** The active {@code maxPoints}, or {@code fallback} outside {@link #run} (whichever is smaller inside). */
    public static long pointCap(long fallback) {
        Scope s = ACTIVE.get();
        return s == null ? fallback : Math.min(fallback, s.budget.maxPoints);
    }

    /**
     * Refuses, before anything is enumerated, an enumeration of {@code points} points when that is more
     * than the active {@code maxPoints}; {@code what} names the enumeration ("L(1) of S[...]").
     */
    public static void requirePoints(long points, Supplier<String> what) {
        Scope s = ACTIVE.get();
        if (s != null && points > s.budget.maxPoints) {
            throw tooLarge(what.get() + " has " + (points == Long.MAX_VALUE ? "more than 2^63" : Long.toString(points))
                    + " points, more than the cap of " + s.budget.maxPoints + " points");
        }
        tick();
    }

    /** Refuses to go on once the active request has run longer than its {@code maxMillis}. */
    public static void tick() {
        Scope s = ACTIVE.get();
        if (s != null && ++s.ticks % TICKS_PER_CLOCK_READ == 0) {
            s.checkClock();
        }
    }

    /**
     * The error for work past one of the algebra's own limits: TOO_LARGE inside a request (the caller asked for
     * more than a request may cost), INVALID outside one (the library's historical kind).
     */
    public static AxeException overLimit(String message) {
        return active().isPresent() ? tooLarge(message) : new AxeException(AxeException.Kind.INVALID, message);
    }

    /** A TOO_LARGE error: {@code "too large: " + message}. */
    public static AxeException tooLarge(String message) {
        return new AxeException(AxeException.Kind.TOO_LARGE, "too large: " + message);
    }

    /** One running request: its budget, when it started, how many ticks it has made. */
    private static final class Scope {
        final Budget budget;
        final long start;
        final long deadline;
        long ticks;

        Scope(Budget budget, long start) {
            this.budget = budget;
            this.start = start;
            // A cap beyond what nanoTime can count means no deadline.
            this.deadline = budget.maxMillis > Long.MAX_VALUE / 4_000_000L ? Long.MAX_VALUE
                    : start + budget.maxMillis * 1_000_000L;
        }

        void checkClock() {
            if (deadline != Long.MAX_VALUE && System.nanoTime() - deadline > 0) {
                throw tooLarge("the request ran longer than the time cap of " + budget.maxMillis + " ms");
            }
        }
    }
}
