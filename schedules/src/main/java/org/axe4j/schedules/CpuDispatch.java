package org.axe4j.schedules;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The CPU dispatch table: for each tile op, the rules that may implement it on target kind {@code llvm}, highest
 * priority first. {@link #decide} runs one named rule; {@link #explain} runs them all.
 */
public final class CpuDispatch {
    public static final String TARGET_KIND = "llvm";

    private static final Map<String, List<Rule>> TABLE = new LinkedHashMap<>();

    static {
        List<Rule> elementwise = List.of(ElementwiseRules.VECTOR, ElementwiseRules.DIGITS,
                ElementwiseRules.SCALAR);
        for (String op : List.of("copy", "cast", "fill", "zero", "exp", "exp2", "log2", "sqrt", "reciprocal", "silu",
                "add", "sub", "mul", "fdiv", "maximum", "minimum")) {
            TABLE.put(op, elementwise);
        }
        for (String op : List.of("sum", "max", "min")) {
            TABLE.put(op, List.of(ReduceRule.INSTANCE, ReduceRule.DIGITS));
        }
        TABLE.put("gemm", List.of(GemmRules.BLOCKED, GemmRules.NAIVE));
    }

    private CpuDispatch() {}

    public static List<String> ops() {
        return List.copyOf(TABLE.keySet());
    }

    public static List<Rule> rules(String op) {
        List<Rule> rules = new ArrayList<>(TABLE.getOrDefault(op, List.of()));
        rules.sort(Comparator.comparingInt(Rule::priority).reversed().thenComparing(Rule::variant));
        return rules;
    }

    public static Optional<Rule> rule(String op, String variant) {
        return rules(op).stream().filter(r -> r.variant().equals(variant)).findFirst();
    }

    /** The decision of rule {@code variant} for {@code call}; an unknown variant is a declined decision. */
    public static Decision decide(String variant, Request call) {
        return rule(call.op(), variant).map(r -> r.decide(call)).orElseGet(() -> new Decision(variant, 0, false,
                "no rule " + variant + " for op " + call.op() + " (rules: " + rules(call.op()).stream()
                        .map(Rule::variant).toList() + ")", Map.of()));
    }

    /** Every rule's decision for {@code call}, in the order dispatch tries them. */
    public static List<Decision> explain(Request call) {
        return rules(call.op()).stream().map(r -> r.decide(call)).toList();
    }
}
