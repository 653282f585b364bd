package org.axe4j.schedules.cuda;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Point;
import org.axe4j.layout.Result;
import org.axe4j.layout.Shape;
import org.axe4j.layout.Swizzle;
import org.axe4j.layout.TileOf;
import org.axe4j.schedules.AffineAccess;
import org.axe4j.schedules.Declined;
import org.axe4j.schedules.Operand;
import org.axe4j.schedules.Request;
import org.axe4j.schedules.Rule;
import org.axe4j.schedules.RunTimeStarts;
import org.axe4j.schedules.plan.CudaPlans;
import org.axe4j.schedules.plan.SchedulePlan;

/**
 * {@code copy} between a warp's register tile and shared memory as {@code ldmatrix} / {@code stmatrix}
 * ({@code m8n8}, 16-bit elements, x1/x2/x4), chosen by tile-of.
 *
 * <p>One 8x8 matrix of {@code ldmatrix} puts row r, columns 2c and 2c+1 into lane {@code 4r + c}, as one 32-bit
 * register: the atom {@code B = S[(8,4,2):(4@laneid,1@laneid,1)]} over (8, 8). The register tile R over
 * (8a, 8b) qualifies when {@code R = A (x) B} for an outer layout A over (a, b) that lives on registers only
 * ({@link TileOf#outer}); block (i, j) then sits in registers {@code 2 A(i, j)} and {@code 2 A(i, j) + 1}
 * (the tile scales A by span(B) = 2 registers), one 32-bit word. On the shared side every block row must be 8 contiguous elements (16 bytes) starting at a multiple
 * of 8 elements, and the row stride must be the same for every block. Blocks are taken in register order, x4
 * (or x2, x1) per instruction; lane l gives the address of row {@code l % 8} of the group's block
 * {@code l / 8}.
 *
 * <p>At warpgroup scope the outer layout A may also place blocks on the warp axis {@code wid_in_wg}: warp w issues
 * the same instructions on its own blocks (the same registers in every warp), and its rows sit {@code w * warpStride}
 * elements after warp 0's (one stride for every block). A shared tile swizzled by {@code Swizzle<B,M,S>} is
 * addressed as swz(row address) per lane: the swizzle moves runs of 2^M elements whole (2^(M+|S|) for S &lt; 0),
 * so a 16-byte-aligned row of 8 elements stays contiguous when a run holds at least 8 elements; the view must start
 * a whole swizzle period into its data.
 */
final class CudaMatrixRules {
    private CudaMatrixRules() {}

    /** The ldmatrix m8n8 fragment of one 8x8 block of 16-bit elements. */
    static final Layout ATOM = Layout.parse("S[(8,4,2):(4@laneid,1@laneid,1)]");
    static final Shape ATOM_SHAPE = Shape.of(8, 8);
    /** The warp of a warpgroup (TIRx: {@code tx % 128 = 32 wid_in_wg + laneid}). */
    static final Axis WARP = Axis.of("wid_in_wg");

    public static final Rule LDST = new Rule() {
        public String variant() {
            return "axe4j-cuda-ldstmatrix";
        }

        public int priority() {
            return 12;
        }

        @Override
        public boolean acceptsSwizzle() {
            return true;
        }

        public SchedulePlan plan(Request call) {
            CudaRules.requireCudaScope(call);
            if (!call.scope().equals("warp") && !call.scope().equals("warpgroup")) {
                throw Declined.of("copy: ldmatrix/stmatrix at %s scope: warp or warpgroup scope only", call.scope());
            }
            int warps = call.scope().equals("warpgroup") ? 4 : 1;
            Operand dst = call.operand("dst");
            Operand src = call.operand("src0");
            String ds = call.storage("dst");
            String ss = call.storage("src0");
            boolean load = ds.equals("local") && ss.startsWith("shared");
            boolean store = ss.equals("local") && ds.startsWith("shared");
            if (!load && !store) {
                throw Declined.of("copy: %s -> %s is not shared <-> local", ss, ds);
            }
            Operand reg = load ? dst : src;
            Operand smem = load ? src : dst;
            if (reg.elementBytes() != 2 || !reg.dtype().equals(smem.dtype())) {
                throw Declined.of("copy: ldmatrix moves 16-bit elements, not %s -> %s", src.dtype(), dst.dtype());
            }
            long[] ext = reg.loopExtents();
            if (ext.length != 2 || ext[0] % 8 != 0 || ext[1] % 8 != 0
                    || !java.util.Arrays.equals(ext, smem.loopExtents())) {
                throw Declined.of("copy: regions %s and %s are not one (8a, 8b) matrix", reg, smem);
            }
            if (reg.elements() != Shape.of(reg.shape()).size()) {
                throw Declined.of("copy: %s is a part of its register tile; ldmatrix fills whole fragments", reg);
            }
            Swizzle swizzle = requireRowsSwizzleWhole(call, reg, smem);
            Shape shape = Shape.of(ext);
            Layout regLayout = reg.layout();
            Result<Layout> outer = TileOf.outer(regLayout, shape, ATOM, ATOM_SHAPE);
            if (!outer.isPresent()) {
                throw Declined.of("copy: register layout %s is not a tile of the ldmatrix fragment %s: %s", regLayout,
                        ATOM, outer.reason());
            }
            Layout a = outer.get();
            long rows = ext[0] / 8;
            long cols = ext[1] / 8;
            Shape outerShape = Shape.of(rows, cols);
            Map<Long, List<long[]>> byWarp = new TreeMap<>(); // warp -> {i, j, register}
            for (long i = 0; i < rows; i++) {
                for (long j = 0; j < cols; j++) {
                    // A (x) B scales A by span(B): block (i, j) starts at register A(i, j) * span_m(B)
                    List<Point> p = a.apply(outerShape, i, j);
                    if (p.size() != 1 || !onlyRegistersAndWarps(p.get(0), warps)) {
                        throw Declined.of("copy: block (%d, %d) of %s is at %s (outer layout %s), not one register "
                                + "pair of %s", i, j, regLayout, p, a, warps > 1 ? "a warp's lane" : "its lane");
                    }
                    long warp = warps > 1 ? p.get(0).get(WARP) : 0;
                    byWarp.computeIfAbsent(warp, w -> new ArrayList<>())
                            .add(new long[] {i, j, p.get(0).get(Axis.M) * ATOM.spanOn(Axis.M)});
                }
            }
            if (byWarp.size() != warps) {
                throw Declined.of("copy: the blocks of %s sit on warps %s of the warpgroup's %d", regLayout,
                        byWarp.keySet(), warps);
            }
            for (List<long[]> own : byWarp.values()) {
                own.sort(Comparator.comparingLong(b -> b[2]));
            }
            List<long[]> blocks = byWarp.get(0L);
            for (Map.Entry<Long, List<long[]>> e : byWarp.entrySet()) {
                if (!registersOf(e.getValue()).equals(registersOf(blocks))) {
                    throw Declined.of("copy: warp %d of %s holds blocks at registers %s, warp 0 at %s; the warps of "
                            + "one instruction name the same registers", e.getKey(), regLayout,
                            registersOf(e.getValue()), registersOf(blocks));
                }
            }
            int num = blocks.size() % 4 == 0 ? 4 : blocks.size() % 2 == 0 ? 2 : 1;
            AffineAccess.requireMemoryOnly(smem);
            // a run-time start (a warp's rows, a pipeline stage) moves every row by what AffineAccess says it adds:
            // keep 16 bytes for every value TVM's analysis allows
            AffineAccess runTime = SharedMatrixDescriptor.hasRunTimeStart(smem) ? AffineAccess.of(smem) : null;
            long[] from = runTime != null ? runTime.lowStart(smem) : smem.start();
            if (runTime != null) {
                if (!runTime.startOffset().divisibleBy(8)) {
                    throw Declined.of("copy: %s starts at run-time indices that move it by %s elements, which may "
                            + "move its rows off 16 bytes", smem, runTime.startOffset());
                }
            }
            RunTimeStarts starts = runTime != null ? RunTimeStarts.of(runTime) : null;
            long rowStride = -1;
            for (List<long[]> own : byWarp.values()) {
                for (long[] b : own) {
                    rowStride = requireRows(smem, from, b, rowStride);
                }
            }
            // warp w's k-th block starts warpStride * w after warp 0's: one stride for every block
            long warpStride = warps > 1 ? firstRow(smem, from, byWarp.get(1L).get(0)) - firstRow(smem, from,
                    blocks.get(0)) : 0;
            for (Map.Entry<Long, List<long[]>> e : byWarp.entrySet()) {
                for (int b = 0; b < blocks.size(); b++) {
                    long moved = firstRow(smem, from, e.getValue().get(b)) - firstRow(smem, from, blocks.get(b));
                    if (moved != e.getKey() * warpStride) {
                        throw Declined.of("copy: warp %d's block %d of %s starts %d elements after warp 0's, not %d "
                                + "(one stride of %d per warp)", e.getKey(), b, smem, moved, e.getKey() * warpStride,
                                warpStride);
                    }
                }
            }
            List<CudaPlans.MatrixGroup> groups = new ArrayList<>();
            for (int g = 0; g < blocks.size(); g += num) {
                List<Long> words = new ArrayList<>();
                List<Long> bases = new ArrayList<>();
                for (long[] b : blocks.subList(g, g + num)) {
                    words.add(b[2] / 2);
                    bases.add(firstRow(smem, from, b));
                }
                groups.add(new CudaPlans.MatrixGroup(words, bases));
            }
            List<Long> swizzleBits = swizzle.isIdentity() ? null
                    : List.of((long) swizzle.bits(), (long) swizzle.base(), (long) swizzle.shift());
            String where = (warps > 1 ? ", warp w at +" + warpStride + " w" : "")
                    + (swizzle.isIdentity() ? "" : ", rows at swz(address) for " + swizzle);
            return new CudaPlans.LdStMatrix(load ? "ld" : "st", num, rowStride, regLayout.spanOn(Axis.M), reg.role(),
                    smem.role(), groups, warps, warpStride, swizzleBits, starts != null ? starts.strides() : null,
                    starts != null ? starts.terms() : null, List.of((load ? "ldmatrix" : "stmatrix") + ".x" + num
                    + " x " + groups.size() + ", outer layout " + a + " over " + outerShape + where));
        }
    };

    /**
     * The shared tile's swizzle (identity when none) once it keeps every 16-byte row contiguous: the register tile
     * is not swizzled, the view starts a whole period into its data, and the swizzle's runs hold 8 elements or more.
     */
    private static Swizzle requireRowsSwizzleWhole(Request call, Operand reg, Operand smem) {
        if (!call.swizzle(reg.role()).isIdentity()) {
            throw Declined.of("copy: the register tile %s has a swizzled layout (%s); registers are addressed by the "
                    + "layout's slots only", reg, call.swizzle(reg.role()));
        }
        Swizzle z = call.swizzle(smem.role());
        if (z.isIdentity()) {
            return z;
        }
        if (smem.elemOffset() % z.period() != 0) {
            throw Declined.of("copy: %s is a swizzled view %d elements into its data, not a multiple of the swizzle's "
                    + "period %d (the swizzle applies to addresses from the start of the data)", smem,
                    smem.elemOffset(), z.period());
        }
        long run = 1L << (z.base() + (z.inner() ? 0 : -z.shift())); // elements the swizzle moves whole
        if (run < 8) {
            throw Declined.of("copy: %s moves runs of %d elements, which splits the 8-element rows of ldmatrix", z,
                    run);
        }
        return z;
    }

    /** The row stride of block {i, j, register}, once its 8 rows are evenly spaced, aligned and contiguous. */
    private static long requireRows(Operand smem, long[] from, long[] b, long rowStride) {
        long first = firstRow(smem, from, b);
        long stride = address(smem, from, 8 * b[0] + 1, 8 * b[1]) - first;
        if (rowStride >= 0 && stride != rowStride) {
            throw Declined.of("copy: blocks of %s have different row strides (%d, %d)", smem, rowStride, stride);
        }
        for (long r = 0; r < 8; r++) {
            long row = address(smem, from, 8 * b[0] + r, 8 * b[1]);
            if (row != first + r * stride) {
                throw Declined.of("copy: rows of block (%d, %d) of %s are not evenly spaced", b[0], b[1], smem);
            }
            if (row % 8 != 0) {
                throw Declined.of("copy: row %d of block (%d, %d) of %s starts at element %d, not 16-byte aligned", r,
                        b[0], b[1], smem, row);
            }
            for (long c = 1; c < 8; c++) {
                if (address(smem, from, 8 * b[0] + r, 8 * b[1] + c) != row + c) {
                    throw Declined.of("copy: row %d of block (%d, %d) of %s is not 8 contiguous elements", r, b[0],
                            b[1], smem);
                }
            }
        }
        return stride;
    }

    private static long firstRow(Operand smem, long[] from, long[] b) {
        return address(smem, from, 8 * b[0], 8 * b[1]);
    }

    private static List<Long> registersOf(List<long[]> blocks) {
        List<Long> out = new ArrayList<>();
        for (long[] b : blocks) {
            out.add(b[2]);
        }
        return out;
    }

    /** Only the register axis, and at warpgroup scope the warp axis (a warp of the 4). */
    private static boolean onlyRegistersAndWarps(Point p, int warps) {
        for (Axis axis : p.coords().keySet()) {
            boolean warp = warps > 1 && axis.equals(WARP) && p.get(axis) >= 0 && p.get(axis) < warps;
            if (!axis.equals(Axis.M) && !warp && p.get(axis) != 0) {
                return false;
            }
        }
        return true;
    }

    /** Memory address of region element (r, c) (region-relative) of a shared operand, with its element offset. */
    private static long address(Operand o, long[] from, long r, long c) {
        int[] dims = o.loopDims();
        long[] coord = from.clone();
        coord[dims[0]] += r;
        coord[dims[1]] += c;
        List<Point> p = o.layout().apply(Shape.of(o.shape()), coord);
        return o.elemOffset() + p.get(0).get(Axis.M);
    }
}
