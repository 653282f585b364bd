package org.axe4j.schedules.cuda;

import java.util.ArrayList;
import java.util.List;
import org.axe4j.schedules.AffineAccess;
import org.axe4j.schedules.Operand;
import org.axe4j.schedules.Request;

/**
 * Cuts a register-tile call whose region crosses a layout digit part way into boxes that do not.
 *
 * <p>A region of a dim is affine in its digits as {@link AffineAccess#fitsDigits} says. Per loop dim, from the region's
 * start, the longest segment that is affine in every operand's digits is taken, then the next from its end (a
 * segment of one element always is). The boxes are the products of the dims' segments. A dim with a run-time start
 * in any operand is not cut (its digits move with the start).
 */
final class RegisterBoxes {
    /** At most this many boxes (each unrolled over the thread's slots); beyond, axe4j-cuda-register-digits takes the call. */
    static final int MAX_BOXES = 16;

    private RegisterBoxes() {}

    /** One loop dim's segment [from, to) of the region (counted from the region's start). */
    record Segment(long from, long to) {}

    /**
     * The boxes of {@code call} (each a call over its part of the region), or an empty list when no dim needs a cut,
     * a cut dim starts at run time, or there would be more than {@link #MAX_BOXES}.
     */
    static List<Request> of(Request call) {
        List<Operand> ops = call.operands();
        long[] extents = ops.get(0).loopExtents();
        List<List<List<Long>>> digits = new ArrayList<>();
        for (Operand o : ops) {
            if (o.loopExtents().length != extents.length) {
                return List.of();
            }
            boolean register = call.storage(o.role()).equals("local");
            digits.add(register ? RegisterTile.digitExtents(o) : AffineAccess.digitExtents(o));
        }
        List<List<Segment>> cuts = new ArrayList<>();
        long boxes = 1;
        boolean cut = false;
        for (int k = 0; k < extents.length; k++) {
            List<Segment> segments = segments(ops, digits, k, extents[k]);
            cut |= segments.size() > 1;
            boxes *= segments.size();
            cuts.add(segments);
        }
        if (!cut || boxes > MAX_BOXES) {
            return List.of();
        }
        List<Request> out = new ArrayList<>();
        product(call, cuts, 0, new Segment[extents.length], out);
        return out;
    }

    private static List<Segment> segments(List<Operand> ops, List<List<List<Long>>> digits, int k, long extent) {
        for (Operand o : ops) {
            if (o.symbolic()[o.loopDims()[k]]) {
                return List.of(new Segment(0, extent));
            }
        }
        List<Segment> out = new ArrayList<>();
        long from = 0;
        while (from < extent) {
            long to = extent;
            while (to > from + 1 && !fitsAll(ops, digits, k, from, to)) {
                to--;
            }
            out.add(new Segment(from, to));
            from = to;
        }
        return out;
    }

    private static boolean fitsAll(List<Operand> ops, List<List<List<Long>>> digits, int k, long from, long to) {
        for (int o = 0; o < ops.size(); o++) {
            int d = ops.get(o).loopDims()[k];
            if (!AffineAccess.fitsDigits(digits.get(o).get(d), ops.get(o).start()[d] + from, to - from)) {
                return false;
            }
        }
        return true;
    }

    private static void product(Request call, List<List<Segment>> cuts, int k, Segment[] chosen, List<Request> out) {
        if (k == cuts.size()) {
            out.add(box(call, chosen));
            return;
        }
        for (Segment s : cuts.get(k)) {
            chosen[k] = s;
            product(call, cuts, k + 1, chosen, out);
        }
    }

    /** The call over one box: each operand's loop dim k restricted to [start + from, start + to). */
    private static Request box(Request call, Segment[] chosen) {
        List<Operand> ops = new ArrayList<>();
        for (Operand o : call.operands()) {
            int[] dims = o.loopDims();
            long[] start = o.start().clone();
            long[] extent = o.extent().clone();
            for (int k = 0; k < dims.length; k++) {
                start[dims[k]] += chosen[k].from();
                extent[dims[k]] = chosen[k].to() - chosen[k].from();
            }
            ops.add(new Operand(o.role(), o.name(), o.dtype(), o.shape(), start, extent, o.layout(), o.elemOffset(),
                    o.runTimeStarts()));
        }
        return new Request(call.op(), call.target(), call.scope(), ops, call.params(), call.swizzles());
    }
}
