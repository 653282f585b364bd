package org.axe4j.passes.transform;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.axe4j.layout.Layout;
import org.axe4j.passes.TirxLayout;
import org.axe4j.passes.transform.TirFunction.Buffer;
import org.axe4j.passes.transform.TirFunction.Call;
import org.axe4j.passes.transform.TirFunction.Region;

/**
 * Layouts for Trainium SBUF and PSUM buffers allocated without one: a "P"/"F" annotation per dim
 * ({@link TrnLayouts#annotated}, the PSUM form for {@code trn.psum}), chosen from the tile calls so the Trainium
 * rules accept them. What a rule needs comes first (in call order; a later rule need that differs is an
 * {@code infer-conflict}):
 * <ul>
 *   <li>{@code gemm} (D, A, B, C): the TensorEngine contracts over partitions, so K goes on P: A stored M x K is
 *       "FP" (transposed, K x M, "PF"), B stored K x N is "PF" (transposed "FP"); D and C, in PSUM, have M on P
 *       ("PF"), the stationary operand's free dim being the output partitions;</li>
 *   <li>reductions (sum, max, min) along F: the source keeps its reduced dims on F and the kept ones on P; the
 *       destination has its kept dims on P (or, for a source given with its reduced dims on P, the source's
 *       axes);</li>
 *   <li>a per-partition column (n <= 128, 1): "PF", one value per partition, which the element-wise rules
 *       broadcast along F.</li>
 * </ul>
 * Otherwise an element-wise call (copy, cast, unary, binary) whose on-chip partner of the same extents has a
 * layout (given, or chosen here) lends its annotation, repeated until nothing changes; what is left gets rows on P
 * ("PF...").
 */
final class TrnInference {
    /** An annotation a use asks for: strength 2 = a rule needs it, 1 = follows a partner. */
    record Need(String pf, int strength, String reason, Call call) {
        String from() {
            return call == null ? "" : ", from " + call.label();
        }
    }

    private final TirFunction f;
    private final Map<Buffer, String> decided = new LinkedHashMap<>();
    /** Buffers whose wanted annotation the shape cannot take (reported {@code infer-unsupported}). */
    private final Set<Buffer> failed = new java.util.HashSet<>();
    private final Map<Buffer, Layout> layouts = new LinkedHashMap<>();
    private final List<Diagnostic> notes;

    private TrnInference(TirFunction f, List<Diagnostic> notes) {
        this.f = f;
        this.notes = notes;
    }

    static boolean onChip(Buffer b) {
        return b.scope().equals("trn.sbuf") || b.scope().equals("trn.psum");
    }

    /** The layouts of {@code open} (on-chip buffers without one), explaining each choice into {@code notes}. */
    static Map<Buffer, Layout> infer(TirFunction f, List<Buffer> open, List<Diagnostic> notes) {
        TrnInference inf = new TrnInference(f, notes);
        for (Buffer b : open) {
            inf.decideByRules(b);
        }
        for (boolean changed = true; changed; ) {
            changed = false;
            for (Buffer b : open) {
                if (!inf.decided.containsKey(b) && !inf.failed.contains(b)) {
                    Optional<Need> n = inf.partnerNeeds(b).stream().findFirst();
                    if (n.isPresent()) {
                        inf.take(b, n.get(), List.of());
                        changed = true;
                    }
                }
            }
        }
        for (Buffer b : open) {
            if (!inf.decided.containsKey(b) && !inf.failed.contains(b)) {
                String pf = "P" + "F".repeat(b.shape().length - 1);
                inf.take(b, new Need(pf, 0, "no rule and no laid-out partner constrains it: rows on partitions, "
                        + "the rest on F", null), List.of());
            }
        }
        inf.partnerConflicts();
        return inf.layouts;
    }

    private void decideByRules(Buffer b) {
        List<Need> needs = new ArrayList<>();
        if (b.shape().length == 2 && b.shape()[1] == 1 && b.shape()[0] <= TrnLayouts.PARTITIONS) {
            needs.add(new Need("PF", 2, "per-partition column: one value per partition, broadcast along F by the "
                    + "element-wise rules", null));
        }
        for (Call c : f.calls()) {
            for (int k = 0; k < c.regions().size(); k++) {
                if (c.regions().get(k).buffer() == b) {
                    ruleNeed(b, c, k).ifPresent(needs::add);
                }
            }
        }
        if (!needs.isEmpty()) {
            take(b, needs.get(0), needs.subList(1, needs.size()));
        }
    }

    /** Chooses {@code n} for {@code b}; each of {@code others} asking otherwise is an {@code infer-conflict}. */
    private void take(Buffer b, Need n, List<Need> others) {
        String subject = VerifyLayouts.subject(b);
        Layout l;
        try {
            l = TrnLayouts.annotated(n.pf(), b.shape());
            if (b.scope().equals("trn.psum")) {
                l = TrnLayouts.toPsum(l);
            }
        } catch (IllegalArgumentException e) {
            failed.add(b);
            note("infer-unsupported", subject, "", "wanted \"" + n.pf() + "\" (" + n.reason() + n.from() + "), but "
                    + e.getMessage() + "; give its layout");
            return;
        }
        decided.put(b, n.pf());
        layouts.put(b, l);
        String psum = b.scope().equals("trn.psum") ? " in its PSUM form (F cut into banks of 512)" : "";
        note("infer", subject, l.toString(), "\"" + n.pf() + "\"" + psum + ": " + n.reason() + n.from());
        for (Need o : others) {
            if (!o.pf().equals(n.pf())) {
                note("infer-conflict", subject, l.toString(), (o.call() == null ? "its shape" : o.call().label())
                        + " would want \"" + o.pf() + "\" (" + o.reason() + "); kept \"" + n.pf() + "\""
                        + n.from() + ", so that call's rule may decline");
            }
        }
    }

    /** What the rule of call {@code c} needs of operand {@code role} (buffer {@code b}), if it constrains it. */
    private Optional<Need> ruleNeed(Buffer b, Call c, int role) {
        int rank = b.shape().length;
        if (c.op().equals("gemm") && rank == 2 && c.regions().size() >= 3) {
            boolean ta = flag(c, 0);
            boolean tb = flag(c, 1);
            return Optional.of(switch (role) {
                case 1 -> new Need(ta ? "PF" : "FP", 2, "gemm A stored " + (ta ? "K x M" : "M x K")
                        + ": the TensorEngine contracts over partitions, K on P", c);
                case 2 -> new Need(tb ? "FP" : "PF", 2, "gemm B stored " + (tb ? "N x K" : "K x N")
                        + ": the TensorEngine contracts over partitions, K on P", c);
                default -> new Need("PF", 2, "gemm " + (role == 0 ? "D" : "C") + " (PSUM): M on P, the stationary "
                        + "operand's free dim gives the output partitions", c);
            });
        }
        if (isReduction(c) && c.regions().size() >= 2) {
            Set<Integer> axes = reducedAxes(c);
            if (axes == null) {
                return Optional.empty();
            }
            Region src = c.regions().get(1);
            StringBuilder pf = new StringBuilder();
            if (role == 1) {
                for (int d = 0; d < rank; d++) {
                    pf.append(axes.contains(d) || src.extents()[d] == null || src.extents()[d] == 1 ? 'F' : 'P');
                }
                return Optional.of(new Need(pf.toString(), 2, c.op() + " source: the reduced dims "
                        + new java.util.TreeSet<>(axes) + " on F (reduced within each partition), the kept dims on P",
                        c));
            }
            if (role == 0 && rank == src.buffer().shape().length) {
                Optional<String> given = src.buffer() == b ? Optional.empty() : givenAnnotation(src.buffer());
                for (int d = 0; d < rank; d++) {
                    boolean reduced = axes.contains(d) || b.shape()[d] == 1;
                    pf.append(given.isPresent() ? given.get().charAt(d) : reduced ? 'F' : 'P');
                }
                String why = given.isPresent() ? "the axes of its source " + src.buffer().name() + " (\""
                        + given.get() + "\")" : "the kept dims on P, the reduced ones on F (one result per partition)";
                return Optional.of(new Need(pf.toString(), 2, c.op() + " destination: " + why, c));
            }
        }
        return Optional.empty();
    }

    /** Element-wise calls whose on-chip partner of the same extents has an annotation: lend it, dim for dim. */
    private List<Need> partnerNeeds(Buffer b) {
        List<Need> out = new ArrayList<>();
        for (Call c : f.calls()) {
            if (c.op().equals("gemm") || isReduction(c)) {
                continue;
            }
            for (int k = 0; k < c.regions().size(); k++) {
                Region mine = c.regions().get(k);
                if (mine.buffer() != b || !mine.constantExtents()) {
                    continue;
                }
                for (Region other : c.regions()) {
                    Buffer o = other.buffer();
                    if (o == b || !onChip(o) || !other.constantExtents() || !other.squeezed().equals(mine.squeezed())) {
                        continue;
                    }
                    Optional<String> pf = annotation(o).map(a -> lend(a, other, mine));
                    if (pf.isPresent()) {
                        out.add(new Need(pf.get(), 1, c.op() + " partner " + o.name() + " is \"" + annotation(o).get()
                                + "\": the same axes dim for dim", c));
                    }
                }
            }
        }
        return out;
    }

    /**
     * The partner's annotation moved onto {@code mine}: dim for dim when both regions have the same extents, else
     * the partner's non-unit region dims in order onto mine, the rest on F.
     */
    private static String lend(String theirs, Region other, Region mine) {
        if (java.util.Arrays.equals(other.extents(), mine.extents())) {
            return theirs;
        }
        List<Character> axes = new ArrayList<>();
        for (int d = 0; d < other.extents().length; d++) {
            if (other.extents()[d] != 1) {
                axes.add(theirs.charAt(d));
            }
        }
        StringBuilder out = new StringBuilder();
        int next = 0;
        for (int d = 0; d < mine.extents().length; d++) {
            out.append(mine.extents()[d] != 1 ? axes.get(next++) : 'F');
        }
        return out.toString();
    }

    private Optional<String> annotation(Buffer o) {
        return decided.containsKey(o) ? Optional.of(decided.get(o)) : givenAnnotation(o);
    }

    private static Optional<String> givenAnnotation(Buffer o) {
        TirxLayout tl = VerifyLayouts.layoutOf(o);
        if (tl == null || !tl.symbolic().isEmpty() || !o.constantShape() || !onChip(o)) {
            return Optional.empty();
        }
        return TrnLayouts.annotationOf(tl.layout(), o.shape());
    }

    /** Given gemm operands whose annotation puts K off P: the Trainium gemm rule declines such calls. */
    private void partnerConflicts() {
        for (Call c : f.calls()) {
            if (!c.op().equals("gemm") || c.regions().stream().noneMatch(r -> layouts.containsKey(r.buffer()))) {
                continue;
            }
            for (int k = 1; k <= 2 && k < c.regions().size(); k++) {
                Buffer o = c.regions().get(k).buffer();
                Optional<Need> need = ruleNeed(o, c, k);
                Optional<String> given = layouts.containsKey(o) ? Optional.empty() : givenAnnotation(o);
                if (need.isPresent() && given.isPresent() && !given.get().equals(need.get().pf())) {
                    note("infer-conflict", c.label(), "", "user-given layout of " + o.name() + " is \""
                            + given.get() + "\", but " + need.get().reason() + " (\"" + need.get().pf()
                            + "\"); kept it, so axe4j-trn-matmul will decline this call");
                }
            }
        }
    }

    private static boolean isReduction(Call c) {
        return c.op().equals("sum") || c.op().equals("max") || c.op().equals("min");
    }

    /** The reduced axes (first argument after the regions, a list; negative counts from the end), or null. */
    private static Set<Integer> reducedAxes(Call c) {
        int rank = c.regions().get(1).extents().length;
        if (c.others().isEmpty() || !(c.others().get(0) instanceof List<?> list)) {
            return null;
        }
        Set<Integer> axes = new java.util.HashSet<>();
        for (Object a : list) {
            Long v = TirFunction.constant(a);
            if (v == null) {
                return null;
            }
            axes.add((int) ((v % rank + rank) % rank));
        }
        return axes;
    }

    /** transpose_A (n = 0), transpose_B (n = 1): the first two booleans after the operands. */
    private static boolean flag(Call c, int n) {
        List<Boolean> flags = new ArrayList<>();
        c.others().forEach(o -> {
            if (o instanceof Boolean b) {
                flags.add(b);
            }
        });
        return n < flags.size() && flags.get(n);
    }

    private void note(String rule, String subject, String layout, String message) {
        notes.add(new Diagnostic(rule, f.name(), subject, layout, message));
    }
}
