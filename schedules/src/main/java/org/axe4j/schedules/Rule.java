package org.axe4j.schedules;

import org.axe4j.schedules.plan.SchedulePlan;

/**
 * A dispatch rule for one family of tile ops on one target kind. {@link #plan} returns the loop plan or throws
 * {@link Declined} naming the applicability condition that failed; {@link #decide} wraps that in a {@link Decision}.
 */
public interface Rule {
    /** System property: when true, a rule that throws anything but {@link Declined} throws out of {@link #decide}. */
    String STRICT_PROPERTY = "axe4j.rules.strict";

    /** System property naming a rule variant that throws on every call: tests of how rule errors are reported. */
    String PLANTED_ERROR_PROPERTY = "axe4j.rules.planted-error";

    String variant();

    int priority();

    /** The plan for {@code call}, or {@link Declined} with the reason the rule does not apply. */
    SchedulePlan plan(Request call);

    /** Whether {@link #plan} addresses swizzled layouts ({@link Request#swizzles}); others are declined for it. */
    default boolean acceptsSwizzle() {
        return false;
    }

    /**
     * Whether {@link #plan} handles regions whose extent is known only at run time
     * ({@link Request#runTimeExtentDims}); others are declined for them.
     */
    default boolean acceptsRunTimeExtents() {
        return false;
    }

    /**
     * Whether {@link #plan} takes a region wider than its buffer's dim at a run-time start ({@link
     * Operand#firstDimPastEnd}): an edge tile that reads zeros and writes nothing past the end, as a TMA copy does.
     */
    default boolean acceptsPastEnd() {
        return false;
    }

    default Decision decide(Request call) {
        if (!acceptsPastEnd()) {
            for (Operand o : call.operands()) {
                var d = o.firstDimPastEnd();
                if (d.isPresent()) {
                    return Decision.decline(this, call.op() + ": the region of " + o + " is " + o.extent()[d.getAsInt()]
                            + " wide in dim " + d.getAsInt() + " of size " + o.shape()[d.getAsInt()] + ", so it runs "
                            + "past the end; " + variant() + " does not clip there (a TMA copy does)");
                }
            }
        }
        if (!acceptsRunTimeExtents() && call.firstRunTimeExtent().isPresent()) {
            var first = call.firstRunTimeExtent().get();
            return Decision.decline(this, call.op() + ": the region of " + first.getKey() + " has a run-time extent"
                    + " in dim " + first.getValue() + " (at most " + first.getKey().extent()[first.getValue()]
                    + "); " + variant() + " needs constant extents");
        }
        if (!acceptsSwizzle() && !call.swizzles().isEmpty()) {
            String role = call.swizzles().keySet().iterator().next();
            return Decision.decline(this, call.op() + ": the layout of " + call.operand(role) + " is swizzled ("
                    + call.swizzle(role) + "); " + variant() + " addresses unswizzled layouts only");
        }
        try {
            if (variant().equals(System.getProperty(PLANTED_ERROR_PROPERTY))) {   // tests only: see the constant
                throw new IllegalStateException("planted rule error (" + PLANTED_ERROR_PROPERTY + ")");
            }
            return Decision.accept(this, plan(call));
        } catch (Declined declined) {
            return Decision.decline(this, declined.getMessage());
        } catch (RuntimeException error) {
            if (Boolean.getBoolean(STRICT_PROPERTY)) {   // under tests a rule that throws fails the test
                throw new IllegalStateException("rule " + variant() + " threw on " + call.op() + " "
                        + call.operands(), error);
            }
            return Decision.failure(this, call, error);
        }
    }

    /** The checks every CPU rule makes first: target kind llvm, thread scope. */
    static void requireCpuThread(Request call) {
        if (!"llvm".equals(call.target())) {
            throw Declined.of("target kind %s is not llvm", call.target());
        }
        if (!"thread".equals(call.scope())) {
            throw Declined.of("execution scope %s: CPU rules run at thread scope only", call.scope());
        }
    }
}
