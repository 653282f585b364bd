package org.axe4j.schedules.cuda;

import com.google.gson.JsonElement;
import java.util.ArrayList;
import java.util.List;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Point;
import org.axe4j.layout.Result;
import org.axe4j.layout.Shape;
import org.axe4j.layout.TileOf;
import org.axe4j.schedules.Declined;
import org.axe4j.schedules.Operand;
import org.axe4j.schedules.Request;
import org.axe4j.schedules.Rule;
import org.axe4j.schedules.plan.CudaPlans;
import org.axe4j.schedules.plan.SchedulePlan;
import org.axe4j.targets.MatrixFragments;

/**
 * {@code gemm} of a warp's register tiles as {@code mma.sync.aligned.m16n8k16.row.col} (f16 or bf16 inputs, f32
 * accumulator), chosen by tile-of against the instruction's fragments ({@link MatrixFragments}).
 *
 * <p>D = op(A) op(B) + beta C with D (M x N), op(A) (M x K), op(B) (K x N). Each operand's register layout must be
 * {@code O (x) F}: the fragment F of its role and orientation (A over (M, K) or, transposed, (K, M); B over (K, N)
 * or (N, K); C and D over (M, N)) tiled by an outer layout O on registers only ({@link TileOf#outer}). Block
 * (i, j) of an operand then starts at register slot {@code O(i, j) * span(F)} and its slots follow the PTX order.
 * One instruction per (i, j, k) block triple, k innermost, accumulating in place in D's registers (c = d); D's
 * block is first set from C (beta = 1) or zero (beta = 0). alpha must be 1: mma has no scale.
 */
public final class CudaMmaRule implements Rule {
    public static final CudaMmaRule INSTANCE = new CudaMmaRule();

    private CudaMmaRule() {}

    public String variant() {
        return "axe4j-cuda-mma";
    }

    public int priority() {
        return 10;
    }

    public SchedulePlan plan(Request call) {
        if (!CudaRules.TARGET_KIND.equals(call.target())) {
            throw Declined.of("target kind %s is not cuda", call.target());
        }
        if (!call.scope().equals("warp") || CudaRules.requireCudaScope(call) != 32) {
            throw Declined.of("gemm: mma.sync runs at warp scope with all 32 lanes, not %s scope", call.scope());
        }
        Operand d = call.operand("D");
        Operand a = call.operand("A");
        Operand b = call.operand("B");
        Operand c = call.operand("C");
        for (Operand o : List.of(d, a, b, c)) {
            String s = call.storage(o.role());
            if (!s.equals("local")) {
                throw Declined.of("gemm: %s is in %s memory; mma.sync takes register (local) tiles", o, s);
            }
            if (o.elements() != Shape.of(o.shape()).size()) {
                throw Declined.of("gemm: %s is a part of its register tile; mma fragments are whole tiles", o);
            }
            if (!o.layout().replica().isEmpty()) {
                throw Declined.of("gemm: %s has replicas (%s); each mma fragment element has one holder", o,
                        o.layout());
            }
        }
        String in = a.dtype();
        if (!(in.equals("float16") || in.equals("bfloat16")) || !b.dtype().equals(in)) {
            throw Declined.of("gemm: mma.m16n8k16 multiplies float16 or bfloat16, not %s x %s", a.dtype(), b.dtype());
        }
        if (!d.dtype().equals("float32") || !c.dtype().equals("float32")) {
            throw Declined.of("gemm: the mma accumulator is float32, not D %s / C %s", d.dtype(), c.dtype());
        }
        double alpha = scalar(call, "alpha");
        double beta = scalar(call, "beta");
        if (alpha != 1.0 || !(beta == 0.0 || beta == 1.0)) {
            throw Declined.of("gemm: mma computes A B + C: alpha must be 1 and beta 0 or 1, not %s and %s",
                    fmt(alpha), fmt(beta));
        }
        boolean ta = call.flag("trans_a");
        boolean tb = call.flag("trans_b");
        long[] ae = a.loopExtents();
        long[] be = b.loopExtents();
        long[] de = d.loopExtents();
        if (ae.length != 2 || be.length != 2 || de.length != 2) {
            throw Declined.of("gemm: mma needs 2-D tiles, not A %s, B %s, D %s", a, b, d);
        }
        long m = ta ? ae[1] : ae[0];
        long k = ta ? ae[0] : ae[1];
        long n = tb ? be[0] : be[1];
        if ((tb ? be[1] : be[0]) != k || de[0] != m || de[1] != n
                || !java.util.Arrays.equals(c.loopExtents(), de)) {
            throw Declined.of("gemm: shapes do not agree: D %s, A %s%s, B %s%s, C %s", d, a, ta ? "^T" : "", b,
                    tb ? "^T" : "", c);
        }
        if (m % 16 != 0 || n % 8 != 0 || k % 16 != 0) {
            throw Declined.of("gemm: M=%d, N=%d, K=%d are not multiples of the m16n8k16 tile", m, n, k);
        }
        Blocks aBlocks = blocks(a, ta ? MatrixFragments.MMA_A_T : MatrixFragments.MMA_A, ta ? 16 : 16, 16, ta);
        Blocks bBlocks = blocks(b, tb ? MatrixFragments.MMA_B_T : MatrixFragments.MMA_B, tb ? 8 : 16, tb ? 16 : 8, tb);
        Blocks dBlocks = blocks(d, MatrixFragments.MMA_C, 16, 8, false);
        Blocks cBlocks = blocks(c, MatrixFragments.MMA_C, 16, 8, false);
        String ptx = in.equals("float16") ? "f16" : "bf16";
        List<CudaPlans.MmaTile> tiles = new ArrayList<>();
        for (long i = 0; i < m / 16; i++) {
            for (long j = 0; j < n / 8; j++) {
                List<CudaPlans.MmaStep> steps = new ArrayList<>();
                for (long kk = 0; kk < k / 16; kk++) {
                    // 32-bit words: two 16-bit elements each
                    steps.add(new CudaPlans.MmaStep(slots(aBlocks.base(i, kk) / 2, 4), slots(bBlocks.base(kk, j) / 2,
                            2)));
                }
                tiles.add(new CudaPlans.MmaTile(slots(dBlocks.base(i, j), 4), slots(cBlocks.base(i, j), 4), steps));
            }
        }
        return new CudaPlans.Mma("mma.sync.aligned.m16n8k16.row.col.f32." + ptx + "." + ptx + ".f32",
                beta == 1.0 ? "C" : "zero", new CudaPlans.MmaRegisters(d.layout().spanOn(Axis.M),
                a.layout().spanOn(Axis.M), b.layout().spanOn(Axis.M), c.layout().spanOn(Axis.M)), tiles, List.of((m / 16) * (n / 8) * (k / 16) + " x m16n8k16 (" + m + "x" + n + "x" + k
                + "), outer layouts A " + aBlocks.outer + ", B " + bBlocks.outer + ", D " + dBlocks.outer));
    }

    /** An operand's outer layout over its blocks (in its own orientation) and the fragment's span. */
    private record Blocks(Layout outer, Shape shape, long span, boolean transposed) {
        /** First register slot of logical block (row, col) of op(X); {@code transposed}: X is stored as op(X)^T. */
        long base(long row, long col) {
            long[] at = transposed ? new long[] {col, row} : new long[] {row, col};
            List<Point> p = outer.apply(shape, at);
            return p.get(0).get(Axis.M) * span;
        }
    }

    private static Blocks blocks(Operand o, Layout fragment, long rows, long cols, boolean transposed) {
        Shape shape = Shape.of(o.loopExtents());
        Result<Layout> match = TileOf.outer(o.layout(), shape, fragment, Shape.of(rows, cols));
        if (!match.isPresent()) {
            throw Declined.of("gemm: the layout %s of %s is not a tile of the mma fragment %s over (%d, %d): %s",
                    o.layout(), o, fragment, rows, cols, match.reason());
        }
        Layout outer = match.get();
        Shape outerShape = Shape.of(shape.dim(0) / rows, shape.dim(1) / cols);
        for (long i = 0; i < outerShape.dim(0); i++) {
            for (long j = 0; j < outerShape.dim(1); j++) {
                List<Point> p = outer.apply(outerShape, i, j);
                if (p.size() != 1 || p.get(0).coords().keySet().stream()
                        .anyMatch(axis -> !axis.equals(Axis.M) && p.get(0).get(axis) != 0)) {
                    throw Declined.of("gemm: block (%d, %d) of %s sits at %s (outer layout %s): not one register "
                            + "block of every lane", i, j, o, p, outer);
                }
            }
        }
        return new Blocks(outer, outerShape, fragment.spanOn(Axis.M), transposed);
    }

    private static List<Long> slots(long first, int count) {
        List<Long> out = new ArrayList<>();
        for (int s = 0; s < count; s++) {
            out.add(first + s);
        }
        return out;
    }

    private static double scalar(Request call, String name) {
        JsonElement e = call.params().get(name);
        if (e == null || e.isJsonNull()) {
            throw Declined.of("gemm: %s is not a compile-time constant; mma needs alpha = 1 and beta 0 or 1", name);
        }
        return e.getAsDouble();
    }

    private static String fmt(double v) {
        return v == Math.rint(v) ? Long.toString((long) v) : Double.toString(v);
    }
}
