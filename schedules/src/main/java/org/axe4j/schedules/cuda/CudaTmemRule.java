package org.axe4j.schedules.cuda;

import com.google.gson.JsonElement;
import java.util.List;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Point;
import org.axe4j.layout.Shape;
import org.axe4j.schedules.Declined;
import org.axe4j.schedules.Operand;
import org.axe4j.schedules.Request;
import org.axe4j.schedules.Rule;
import org.axe4j.schedules.plan.CudaPlans;
import org.axe4j.schedules.plan.SchedulePlan;

/**
 * {@code copy_async} between Blackwell tensor memory and a warpgroup's registers as {@code tcgen05.ld} /
 * {@code tcgen05.st} with the {@code .32x32b} shape: warp w of the warpgroup reaches tensor-memory lanes
 * {@code 32w .. 32w + 31}, thread t (= 32w + lane) the lane t, and {@code .x<num>} moves {@code num} consecutive
 * 32-bit columns into (or out of) {@code num} consecutive registers of the thread.
 *
 * <p>So the tensor-memory tile's layout must put row r on lane r and column c on column {@code c0 + c} (the M = 128
 * data path, as the accumulator of {@link CudaTcgen05Rule}), and the register tile's must put row r on thread r of
 * the warpgroup ({@code tid_in_wg}, or {@code 32 wid_in_wg + laneid}) and column c in register {@code s0 + c}, both
 * checked element by element over the 128-row region, 32-bit elements only. Columns go in instructions of the widest
 * power of two up to 128 that divides the width. Completion is the caller's ({@code tcgen05.wait::ld} /
 * {@code ::st}), as with TVM's own case.
 */
final class CudaTmemRule implements Rule {
    public static final CudaTmemRule INSTANCE = new CudaTmemRule();

    private static final long ROWS = 128;
    private static final Axis THREAD = Axis.of("tid_in_wg");
    private static final Axis WARP = Axis.of("wid_in_wg");
    private static final Axis LANE = Axis.of("laneid");

    private CudaTmemRule() {}

    public String variant() {
        return "axe4j-cuda-tmem";
    }

    public int priority() {
        return 10;
    }

    public SchedulePlan plan(Request call) {
        long threads = CudaRules.requireCudaScope(call);
        Operand dst = call.operand("dst");
        Operand src = call.operand("src0");
        String ds = call.storage("dst");
        String ss = call.storage("src0");
        boolean load = ss.equals("tmem") && ds.equals("local");
        if (!load && !(ss.equals("local") && ds.equals("tmem"))) {
            throw Declined.of("copy_async: %s -> %s is not tensor memory <-> registers", ss, ds);
        }
        JsonElement arch = call.params().get("arch");
        String archName = arch == null || arch.isJsonNull() ? "(none)" : arch.getAsString();
        if (!CudaTcgen05Rule.ARCHS.contains(archName)) {
            throw Declined.of("copy_async: tcgen05.ld/st need arch %s, the target's is %s",
                    CudaTcgen05Rule.ARCHS.stream().sorted().toList(), archName);
        }
        if (!call.scope().equals("warpgroup") || threads != ROWS) {
            throw Declined.of("copy_async: tcgen05.ld/st move a 128-lane tile with the 4 warps of a warpgroup, not at "
                    + "%s scope with %d threads", call.scope(), threads);
        }
        CudaAsyncRules.requireNoConfig(call, "tcgen05.ld/st");
        Operand reg = load ? dst : src;
        Operand tmem = load ? src : dst;
        if (reg.elementBytes() != 4 || !reg.dtype().equals(tmem.dtype())) {
            throw Declined.of("copy_async: this rule moves 32-bit elements, one per tensor-memory column, not %s -> %s",
                    src.dtype(), dst.dtype());
        }
        for (Operand o : List.of(reg, tmem)) {
            for (boolean s : o.symbolic()) {
                if (s) {
                    throw Declined.of("copy_async: %s starts at a run-time index; tensor-memory columns and registers "
                            + "are planned at compile time", o);
                }
            }
        }
        long[] re = reg.loopExtents();
        long[] te = tmem.loopExtents();
        if (re.length != 2 || te.length != 2 || re[0] != ROWS || te[0] != ROWS || re[1] != te[1]) {
            throw Declined.of("copy_async: regions %s and %s are not one 128 x N tile (a row per tensor-memory lane)",
                    reg, tmem);
        }
        long width = re[1];
        long column0 = place(tmem, width, true);
        long slot0 = place(reg, width, false);
        long num = 128;
        while (width % num != 0) {
            num /= 2;
        }
        long count = width / num;
        return new CudaPlans.TmemCopy(load ? "ld" : "st", reg.role(), tmem.role(), num, count, column0, slot0,
                reg.layout().spanOn(Axis.M), List.of("tcgen05." + (load ? "ld" : "st") + ".32x32b.x" + num + " x "
                + count + ": rows on lanes 0-127 (warp w: lanes 32w-32w+31), columns " + column0 + "-"
                + (column0 + width - 1) + (load ? " into" : " from") + " registers " + slot0 + "-"
                + (slot0 + width - 1)));
    }

    /**
     * The tensor-memory column (or register) of element (0, 0) of {@code o}'s region, once every element (r, c) is
     * on lane r, column c0 + c (a tensor-memory tile) or on thread r of the warpgroup, register s0 + c (registers).
     */
    private static long place(Operand o, long width, boolean tmem) {
        Shape shape = Shape.of(o.shape());
        int[] dims = o.loopDims();
        long first = -1;
        for (long r = 0; r < ROWS; r++) {
            for (long c = 0; c < width; c++) {
                long[] coord = o.start().clone();
                coord[dims[0]] += r;
                coord[dims[1]] += c;
                List<Point> p = o.layout().apply(shape, coord);
                long row = -1;
                long at = -1;
                if (p.size() == 1) {
                    Point q = p.get(0);
                    boolean onlyOurs = q.coords().keySet().stream().allMatch(x -> q.get(x) == 0 || (tmem
                            ? x.equals(CudaTcgen05Rule.LANE) || x.equals(CudaTcgen05Rule.COLUMN)
                            : x.equals(THREAD) || x.equals(WARP) || x.equals(LANE) || x.equals(Axis.M)));
                    if (onlyOurs) {
                        row = tmem ? q.get(CudaTcgen05Rule.LANE) : q.get(THREAD) + 32 * q.get(WARP) + q.get(LANE);
                        at = tmem ? q.get(CudaTcgen05Rule.COLUMN) : q.get(Axis.M);
                    }
                }
                if (r == 0 && c == 0) {
                    first = at;
                }
                if (row != r || at != first + c || first < 0) {
                    throw Declined.of("copy_async: element (%d, %d) of %s is at %s; tcgen05.ld/st .32x32b put it on "
                            + "%s %d, %s %d", r, c, o, p, tmem ? "TLane" : "warpgroup thread", r,
                            tmem ? "TCol" : "register", Math.max(first, 0) + c);
                }
            }
        }
        return first;
    }
}
