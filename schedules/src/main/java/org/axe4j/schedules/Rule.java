package org.axe4j.schedules;

import java.util.Map;

/**
 * A dispatch rule for one family of tile ops on one target kind. {@link #plan} returns the loop plan or throws
 * {@link Declined} naming the applicability condition that failed; {@link #decide} wraps that in a {@link Decision}.
 */
public interface Rule {
    String variant();

    int priority();

    /** The plan for {@code call}, or {@link Declined} with the reason the rule does not apply. */
    Map<String, Object> plan(Request call);

    /** Whether {@link #plan} addresses swizzled layouts ({@link Request#swizzles}); others are declined for it. */
    default boolean acceptsSwizzle() {
        return false;
    }

    default Decision decide(Request call) {
        if (!acceptsSwizzle() && !call.swizzles().isEmpty()) {
            String role = call.swizzles().keySet().iterator().next();
            return Decision.decline(this, call.op() + ": the layout of " + call.operand(role) + " is swizzled ("
                    + call.swizzle(role) + "); " + variant() + " addresses unswizzled layouts only");
        }
        try {
            return Decision.accept(this, plan(call));
        } catch (Declined declined) {
            return Decision.decline(this, declined.getMessage());
        } catch (RuntimeException error) {
            return Decision.decline(this, "cannot plan: " + error);
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
