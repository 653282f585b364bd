package org.axe4j.schedules;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.axe4j.schedules.cpu.CpuDispatch;
import org.axe4j.schedules.cuda.CudaDispatch;
import org.axe4j.schedules.trn.TrnDispatch;

/**
 * One target kind's dispatch table: for each tile op, the rules that may implement it, highest priority first.
 * {@link #decide} runs one named rule; {@link #explain} runs them all.
 */
public final class DispatchTable {
    private final String targetKind;
    private final Map<String, List<Rule>> table;

    public DispatchTable(String targetKind, Map<String, List<Rule>> table) {
        this.targetKind = targetKind;
        this.table = new LinkedHashMap<>(table);
    }

    public String targetKind() {
        return targetKind;
    }

    public List<String> ops() {
        return List.copyOf(table.keySet());
    }

    public List<Rule> rules(String op) {
        List<Rule> rules = new ArrayList<>(table.getOrDefault(op, List.of()));
        rules.sort(Comparator.comparingInt(Rule::priority).reversed().thenComparing(Rule::variant));
        return rules;
    }

    public Optional<Rule> rule(String op, String variant) {
        return rules(op).stream().filter(r -> r.variant().equals(variant)).findFirst();
    }

    /** The decision of rule {@code variant} for {@code call}; an unknown variant is a declined decision. */
    public Decision decide(String variant, Request call) {
        return rule(call.op(), variant).map(r -> r.decide(call)).orElseGet(() -> Decision.unknown(variant,
                "no " + targetKind + " rule " + variant + " for op " + call.op() + " (rules: " + rules(call.op())
                        .stream().map(Rule::variant).toList() + ")"));
    }

    /** Every rule's decision for {@code call}, in the order dispatch tries them. */
    public List<Decision> explain(Request call) {
        return rules(call.op()).stream().map(r -> r.decide(call)).toList();
    }

    /** The table for a request's target kind ({@code llvm}, {@code cuda} or {@code trn}). */
    public static DispatchTable forTarget(String kind) {
        return switch (kind) {
            case CudaDispatch.TARGET_KIND -> CudaDispatch.TABLE;
            case CpuDispatch.TARGET_KIND -> CpuDispatch.TABLE;
            case TrnDispatch.TARGET_KIND -> TrnDispatch.TABLE;
            default -> throw new IllegalArgumentException("no axe4j dispatch table for target kind " + kind
                    + " (tables: llvm, cuda, trn)");
        };
    }

    public static List<DispatchTable> all() {
        return List.of(CpuDispatch.TABLE, CudaDispatch.TABLE, TrnDispatch.TABLE);
    }
}
