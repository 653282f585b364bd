package org.axe4j.passes;

import java.util.ArrayList;
import java.util.List;

/**
 * The values a region's variables can take with the box inside the shape: a begin {@code beta + c*v} of width
 * {@code w} on a dimension of {@code S} needs {@code 0 <= beta + c*v <= S - w}, which bounds {@code v}; a variable
 * met in several such begins takes the intersection. A begin with several terms bounds none of them, and an
 * expression term (not a bare variable) is never bounded. Used to simplify expressions in those variables.
 */
final class VariableBounds {
    private final List<SymbolicOffset.Term> vars = new ArrayList<>();
    private final List<long[]> ranges = new ArrayList<>();

    /** Adds the condition {@code 0 <= beta + c*v <= last} on {@code t = c*v}; false if no value is left. */
    boolean bound(long beta, SymbolicOffset.Term t, long last) {
        long c = t.coefficient();
        if (!t.isVariable() || c == 0) {
            return true;
        }
        // c*v in [-beta, last - beta]
        long lo = c > 0 ? ceilDiv(-beta, c) : ceilDiv(last - beta, c);
        long hi = c > 0 ? Math.floorDiv(last - beta, c) : Math.floorDiv(-beta, c);
        for (int j = 0; j < vars.size(); j++) {
            if (vars.get(j).sameQuantity(t)) {
                long[] r = ranges.get(j);
                r[0] = Math.max(r[0], lo);
                r[1] = Math.min(r[1], hi);
                return r[0] <= r[1];
            }
        }
        vars.add(t);
        ranges.add(new long[] {lo, hi});
        return lo <= hi;
    }

    /** {@code [min, max]} of {@code constant + sum c_j * v_j}, or null when some term is unbounded or it overflows. */
    long[] interval(long constant, List<SymbolicOffset.Term> terms) {
        long min = constant;
        long max = constant;
        try {
            for (SymbolicOffset.Term t : terms) {
                long[] r = range(t);
                if (r == null) {
                    return null;
                }
                long a = Math.multiplyExact(t.coefficient(), r[0]);
                long b = Math.multiplyExact(t.coefficient(), r[1]);
                min = Math.addExact(min, Math.min(a, b));
                max = Math.addExact(max, Math.max(a, b));
            }
        } catch (ArithmeticException e) {
            return null;
        }
        return new long[] {min, max};
    }

    private long[] range(SymbolicOffset.Term t) {
        for (int j = 0; j < vars.size(); j++) {
            if (vars.get(j).sameQuantity(t)) {
                return ranges.get(j);
            }
        }
        return null;
    }

    private static long ceilDiv(long a, long b) {
        return -Math.floorDiv(-a, b);
    }
}
