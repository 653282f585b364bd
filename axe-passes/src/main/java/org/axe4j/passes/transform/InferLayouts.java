package org.axe4j.passes.transform;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Group;
import org.axe4j.layout.Grouped;
import org.axe4j.layout.Iter;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Shape;
import org.axe4j.layout.Swizzle;
import org.axe4j.layout.SwizzledLayout;
import org.axe4j.passes.TirxLayout;
import org.axe4j.passes.TirxLayouts;
import org.axe4j.passes.transform.TirFunction.Buffer;
import org.axe4j.passes.transform.TirFunction.Call;
import org.axe4j.passes.transform.TirFunction.Region;
import org.axe4j.tvm.TvmObject;

/**
 * Gives a layout to every buffer allocated without one ({@code T.alloc_buffer(..., layout=None)}), from the tile
 * calls that use it, and explains each choice. User-given layouts are never changed.
 *
 * <p>Each use of the buffer proposes a layout; the first proposal (in call order) wins, and a later use that
 * proposes a different one is reported as {@code infer-conflict}:
 * <ul>
 *   <li>gemm accumulator (D, C) and operands: row-major. The CPU blocked rule packs A and B whatever their strides
 *       and lays its register tile along the accumulator's rows, so row-major is what its plan is built for.</li>
 *   <li>elementwise calls (copy, cast, unary, binary) with a partner operand of the same extents that has a layout:
 *       a compact layout with the partner's dimension order (dims sorted by the partner's strides), so both operands
 *       walk memory in the same order and the vector rule finds one contiguous inner dim in each.</li>
 *   <li>reductions: row-major (the kept dims outer, reduced ones contiguous for a source).</li>
 *   <li>otherwise: compact row-major ({@code S[shape]}).</li>
 * </ul>
 * CUDA register and shared buffers get the layout their matrix rule wants ({@link CudaInference}): mma fragments
 * for a warp gemm, the wgmma accumulator for a warpgroup gemm_async, the K-major swizzled tile for a TMA copy or a
 * wgmma operand; other shared tiles are compact row-major. Trainium SBUF and PSUM tiles get a P/F layout their rules
 * accept ({@link TrnInference}). Other CUDA registers, whose layouts name thread axes, are not inferred: they get an
 * {@code infer-unsupported} diagnostic.
 */
public final class InferLayouts {
    /** The rewritten function and the explanation of each choice (rule {@code infer}) and each conflict. */
    public record Result(TvmObject func, List<Diagnostic> notes) {}

    private final TirFunction f;
    private final TargetLimits target;
    private final Map<Buffer, Choice> chosen = new LinkedHashMap<>();
    private final List<Diagnostic> notes = new ArrayList<>();

    private InferLayouts(TirFunction f, TargetLimits target) {
        this.f = f;
        this.target = target;
    }

    public static Result run(TirFunction f, TargetLimits target) {
        InferLayouts inf = new InferLayouts(f, target);
        Map<Buffer, TvmObject> layouts = new LinkedHashMap<>();
        if (target.isTrainium()) {
            List<Buffer> open = f.buffers().stream().filter(b -> b.layout() == null
                    && b.origin() == TirFunction.Origin.ALLOC && TrnInference.onChip(b) && b.constantShape()).toList();
            TrnInference.infer(f, open, inf.notes).forEach((b, l) -> {
                inf.chosen.put(b, new Choice(Swizzle.IDENTITY, l));
                layouts.put(b, TirxLayouts.toTvm(l));
            });
        }
        for (Buffer b : f.buffers()) {
            if (b.layout() != null || b.origin() != TirFunction.Origin.ALLOC || inf.chosen.containsKey(b)
                    || (target.isTrainium() && TrnInference.onChip(b) && b.constantShape())) {
                continue;
            }
            Choice l = inf.infer(b);
            if (l != null) {
                inf.chosen.put(b, l);
                layouts.put(b, l.swizzle().isIdentity() ? TirxLayouts.toTvm(l.layout())
                        : TirxLayouts.toTvm(new SwizzledLayout(l.swizzle(), l.layout())));
            }
        }
        return new Result(LayoutRewrite.apply(f.func(), layouts, inf.alignments(layouts.keySet())),
                List.copyOf(inf.notes));
    }

    /** A layout one use of a buffer asks for, why, and the call. */
    record Proposal(Choice layout, String reason, Call call) {
        Proposal(Layout layout, String reason, Call call) {
            this(new Choice(Swizzle.IDENTITY, layout), reason, call);
        }

        Proposal(SwizzledLayout layout, String reason, Call call) {
            this(new Choice(layout.swizzle(), layout.layout()), reason, call);
        }

        String text() {
            return layout.toString();
        }
    }

    /** A chosen layout: the tile layout, then the swizzle on its addresses (identity for registers). */
    record Choice(Swizzle swizzle, Layout layout) {
        @Override
        public String toString() {
            return swizzle.isIdentity() ? layout.toString() : new SwizzledLayout(swizzle, layout).toString();
        }
    }

    /** Byte alignment a swizzled choice needs: the swizzle period (the hardware swizzles absolute addresses). */
    private Map<Buffer, Long> alignments(java.util.Set<Buffer> buffers) {
        Map<Buffer, Long> out = new LinkedHashMap<>();
        for (Buffer b : buffers) {
            Swizzle s = chosen.get(b).swizzle();
            if (!s.isIdentity()) {
                out.put(b, s.period() * b.elementBytes());
            }
        }
        return out;
    }

    private Choice infer(Buffer b) {
        String subject = VerifyLayouts.subject(b);
        if (!b.constantShape()) {
            note("infer-unsupported", subject, "", "its shape is symbolic; give its layout");
            return null;
        }
        if (target.isCuda() && (b.scope().startsWith("shared") || b.scope().equals("local"))) {
            List<Proposal> proposals = new ArrayList<>();
            for (Call c : f.calls()) {
                for (int k = 0; k < c.regions().size(); k++) {
                    if (c.regions().get(k).buffer() == b) {
                        CudaInference.propose(b, c, k, target).ifPresent(proposals::add);
                    }
                }
            }
            if (!proposals.isEmpty()) {
                for (Call c : proposals.stream().map(Proposal::call).distinct().toList()) {
                    CudaInference.partnerConflicts(b, c, target)
                            .forEach(m -> note("infer-conflict", "call #" + c.index() + " " + c.op(), "", m));
                }
                return decide(subject, proposals);
            }
            if (b.scope().startsWith("shared")) {
                Layout l = rowMajor(b.shape());
                note("infer", subject, l.toString(), "shared tile that no TMA copy or wgmma reads: compact "
                        + "row-major, unswizzled (what the CUDA copy rules accept)");
                return new Choice(Swizzle.IDENTITY, l);
            }
            note("infer-unsupported", subject, "", "no warp gemm (mma) or warpgroup gemm_async (wgmma accumulator) "
                    + "uses this register buffer; give its layout");
            return null;
        }
        if (!target.isCpu() && !target.kind().isEmpty() && !b.scope().isEmpty() && !b.scope().equals("global")) {
            note("infer-unsupported", subject, "", "no inference rule for scope " + b.scope() + " on target "
                    + target.kind() + "; give its layout");
            return null;
        }
        List<Proposal> proposals = new ArrayList<>();
        for (Call c : f.calls()) {
            for (int k = 0; k < c.regions().size(); k++) {
                if (c.regions().get(k).buffer() == b) {
                    proposals.add(propose(b, c, k));
                }
            }
        }
        if (proposals.isEmpty()) {
            Layout l = rowMajor(b.shape());
            note("infer", subject, l.toString(), "no tile call uses it: compact row-major");
            return new Choice(Swizzle.IDENTITY, l);
        }
        return decide(subject, proposals);
    }

    /** The first proposal wins; each later one that differs is an {@code infer-conflict}. */
    private Choice decide(String subject, List<Proposal> proposals) {
        Proposal first = proposals.get(0);
        note("infer", subject, first.text(), first.reason() + ", from " + first.call().label());
        for (Proposal p : proposals.subList(1, proposals.size())) {
            if (!p.layout().equals(first.layout())) {
                note("infer-conflict", subject, first.text(), p.call().label() + " would want "
                        + p.text() + " (" + p.reason() + "); kept the choice of " + first.call().label());
            }
        }
        return first.layout();
    }

    private Proposal propose(Buffer b, Call c, int role) {
        Layout row = rowMajor(b.shape());
        if (c.op().equals("gemm")) {
            String what = role == 0 || role == 3 ? "gemm accumulator" : "gemm operand";
            return new Proposal(row, what + ": row-major, the blocked rule's register tile runs along its rows", c);
        }
        if (c.op().equals("sum") || c.op().equals("max") || c.op().equals("min")) {
            return new Proposal(row, "reduction " + (role == 0 ? "destination" : "source")
                    + ": row-major, reduced dims innermost", c);
        }
        Region mine = c.regions().get(role);
        for (int k = 0; k < c.regions().size(); k++) {
            Region other = c.regions().get(k);
            if (k == role || other.buffer() == b || !other.squeezed().equals(mine.squeezed())) {
                continue;
            }
            Optional<int[]> order = dimOrder(other.buffer());
            if (order.isPresent() && Arrays.equals(shapeOf(other.buffer()), shapeOf(b))) {
                Layout l = compact(b.shape(), order.get());
                return new Proposal(l, "elementwise partner " + other.buffer().name() + " has dimension order "
                        + Arrays.toString(order.get()) + " (outer to inner): same order, compact", c);
            }
        }
        return new Proposal(row, c.op() + " operand with no laid-out partner of its shape: compact row-major", c);
    }

    /** The layout known for a buffer: user-given, or chosen earlier in this pass. */
    private Layout known(Buffer b) {
        if (chosen.containsKey(b)) {
            Choice s = chosen.get(b);
            return s.swizzle().isIdentity() ? s.layout() : null;
        }
        TirxLayout tl = VerifyLayouts.layoutOf(b);
        return tl == null || !tl.symbolic().isEmpty() ? null : tl.layout();
    }

    /** The dims of {@code b} from outermost to innermost (largest stride first), when each dim is one memory iter. */
    private Optional<int[]> dimOrder(Buffer b) {
        Layout l = known(b);
        if (l == null || !b.constantShape()) {
            return Optional.empty();
        }
        org.axe4j.layout.Result<Grouped> g = Group.tryGroup(l, new Shape(List.of(b.shape())));
        if (g.isEmpty()) {
            return Optional.empty();
        }
        List<Iter> iters = g.get().layout().shard();
        List<Integer> seps = g.get().seps();
        int rank = b.shape().length;
        long[] strides = new long[rank];
        for (int d = 0; d < rank; d++) {
            List<Iter> dim = new ArrayList<>();
            for (int k = seps.get(d); k < seps.get(d + 1); k++) {
                if (iters.get(k).extent() > 1) {
                    dim.add(iters.get(k));
                }
            }
            if (dim.size() > 1 || (dim.size() == 1 && !dim.get(0).axis().equals(Axis.M))) {
                return Optional.empty();
            }
            strides[d] = dim.isEmpty() ? 0 : Math.abs(dim.get(0).stride());
        }
        Integer[] order = new Integer[rank];
        for (int d = 0; d < rank; d++) {
            order[d] = d;
        }
        Arrays.sort(order, Comparator.comparingLong((Integer d) -> -strides[d]).thenComparingInt(d -> d));
        return Optional.of(Arrays.stream(order).mapToInt(Integer::intValue).toArray());
    }

    private static long[] shapeOf(Buffer b) {
        return Arrays.stream(b.shape()).mapToLong(Long::longValue).toArray();
    }

    static Layout rowMajor(Long[] shape) {
        int[] order = new int[shape.length];
        for (int d = 0; d < order.length; d++) {
            order[d] = d;
        }
        return compact(shape, order);
    }

    /** {@code S[shape : strides]} with dims packed densely in {@code order} (outer to inner). */
    static Layout compact(Long[] shape, int[] order) {
        long[] strides = new long[shape.length];
        long next = 1;
        for (int k = order.length - 1; k >= 0; k--) {
            strides[order[k]] = next;
            next *= shape[order[k]];
        }
        List<Iter> iters = new ArrayList<>();
        for (int d = 0; d < shape.length; d++) {
            iters.add(Iter.of(shape[d], strides[d]));
        }
        return Layout.shard(iters.toArray(new Iter[0]));
    }

    private void note(String rule, String subject, String layout, String message) {
        notes.add(new Diagnostic(rule, f.name(), subject, layout, message));
    }
}
