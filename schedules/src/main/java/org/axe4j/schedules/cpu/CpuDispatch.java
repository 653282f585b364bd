package org.axe4j.schedules.cpu;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.axe4j.schedules.Decision;
import org.axe4j.schedules.DispatchTable;
import org.axe4j.schedules.Request;
import org.axe4j.schedules.Rule;

/** The CPU dispatch table (target kind {@code llvm}): element-wise, reduction and GEMM rules. */
public final class CpuDispatch {
    public static final String TARGET_KIND = "llvm";

    public static final DispatchTable TABLE;

    static {
        Map<String, List<Rule>> table = new LinkedHashMap<>();
        List<Rule> elementwise = List.of(ElementwiseRules.VECTOR, ElementwiseRules.DIGITS,
                ElementwiseRules.SCALAR);
        for (String op : List.of("copy", "cast", "fill", "zero", "exp", "exp2", "log2", "sqrt", "reciprocal", "silu",
                "add", "sub", "mul", "fdiv", "maximum", "minimum")) {
            table.put(op, elementwise);
        }
        for (String op : List.of("sum", "max", "min")) {
            table.put(op, List.of(ReduceRule.INSTANCE, ReduceRule.DIGITS));
        }
        table.put("gemm", List.of(GemmRules.BLOCKED, GemmRules.NAIVE));
        TABLE = new DispatchTable(TARGET_KIND, table);
    }

    private CpuDispatch() {}

    public static List<String> ops() {
        return TABLE.ops();
    }

    public static List<Rule> rules(String op) {
        return TABLE.rules(op);
    }

    public static Optional<Rule> rule(String op, String variant) {
        return TABLE.rule(op, variant);
    }

    public static Decision decide(String variant, Request call) {
        return TABLE.decide(variant, call);
    }

    public static List<Decision> explain(Request call) {
        return TABLE.explain(call);
    }
}
