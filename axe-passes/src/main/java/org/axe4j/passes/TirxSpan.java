package org.axe4j.passes;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Checks;
import org.axe4j.layout.Equivalence;
import org.axe4j.layout.Layout;
import org.axe4j.layout.SwizzledLayout;
import org.axe4j.tvm.Tvm;
import org.axe4j.tvm.TvmException;

/**
 * TIRx's {@code span}: one past the largest coordinate, the size of the range {@code [0, max]} that holds the
 * image (what a buffer allocated from 0 needs). On an axis, {@code max + 1 = O_a + sum (e-1) * max(s, 0) + 1}
 * over the shard and replica iters on it (each iter's digit ranges independently), plus the symbolic part of
 * the offset as a PrimExpr; without an axis, TIRx adds the memory axes ({@code tirx.AxisIsMemoryAxis}) as one
 * address, so the answer is {@code 1 + sum over memory axes of max}. axe4j's own span ({@code image_span},
 * {@link Layout#spanOn}) is {@code max - min + 1}, independent of the offset.
 *
 * <p>TIRx sums {@code (e-1) * s} with the sign of the stride, so with a negative stride its figure is not
 * {@code max + 1} (it can be 0 or negative); TIRx also gives a {@code ComposeLayout} its tile layout's span,
 * while here the swizzled image's largest coordinate is counted (enumerated, up to
 * {@link Equivalence#RUN_LIMIT} elements). A swizzled layout's symbolic offset on {@code m} passes the swizzle only
 * where each term is a multiple of its period ({@code swz(p + o) = swz(p) + o}); any other is refused by name.
 */
final class TirxSpan {
    private TirxSpan() {}

    /** TIRx's span on {@code axis}, or over the memory axes when {@code axis} is null: a Long or a PrimExpr. */
    static Object span(TirxLayout l, Axis axis) {
        List<Axis> axes = new ArrayList<>();
        if (axis != null) {
            axes.add(axis);
        } else {
            TreeSet<Axis> all = new TreeSet<>(l.layout().axes());
            all.addAll(l.layout().offset().keySet());
            all.addAll(l.symbolic().terms().keySet());
            for (Axis a : all) {
                if (isMemory(a)) {
                    axes.add(a);
                }
            }
        }
        if (l.composed() && axes.contains(Axis.M)) {
            for (SymbolicOffset.Term t : l.symbolic().on(Axis.M)) {
                if (t.coefficient() % l.swizzle().period() != 0) {
                    // swz(p + t) moves with t's low bits: its largest value is no sum of the offset and a constant
                    throw new org.axe4j.layout.AxeException(org.axe4j.layout.AxeException.Kind.NOT_REPRESENTABLE,
                            l + " is swizzled after a symbolic offset whose term " + t + " is not a multiple"
                            + " of the swizzle's period " + l.swizzle().period() + ", so its largest address depends on"
                            + " the value of " + t.name() + " bit by bit; axe4j gives the span where every symbolic"
                            + " term is a multiple of the period");
                }
            }
        }
        long top = 1;
        List<SymbolicOffset.Term> terms = new ArrayList<>();
        for (Axis a : axes) {
            long max = l.composed() && a.equals(Axis.M) ? new SwizzledLayout(l.swizzle(), l.layout()).largestAddress()
                    : l.layout().largestOn(a);
            top = Checks.add(() -> "span of " + l + (axis == null ? " (memory axes)" : " on axis " + a.name())
                    + " (max + 1)", top, max);
            terms.addAll(l.symbolic().on(a));
        }
        return AffineExprs.write(top, terms);
    }

    /** TIRx's classification; an axis TIRx has not registered is not a memory axis. */
    private static boolean isMemory(Axis a) {
        if (a.isMemory()) {
            return true;
        }
        try {
            try (org.axe4j.tvm.TvmObject axis = TirxLayouts.tvmAxis(a)) {
                return Boolean.TRUE.equals(Tvm.call("tirx.AxisIsMemoryAxis", axis));
            }
        } catch (TvmException e) {
            return false;
        }
    }
}
