package org.axe4j.schedules.cuda;

import com.google.gson.JsonObject;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Shape;
import org.axe4j.layout.Swizzle;
import org.axe4j.schedules.AffineAccess;
import org.axe4j.schedules.Declined;
import org.axe4j.schedules.Operand;
import org.axe4j.schedules.Request;
import org.axe4j.schedules.RunTimeStarts;
import org.axe4j.schedules.plan.PlanParts;

/**
 * A K-major 16-bit operand in shared memory as the tensor cores' 64-bit matrix descriptor sees it (wgmma and
 * tcgen05 read the same canonical layouts): a start address, the stride between 8-row groups (SBO), between
 * core-matrix columns (LBO, without swizzle) and a swizzle mode. For every instruction tile (rows x 16) the
 * layout's address before the swizzle must be the descriptor's: {@code start + (r % 8) * 8 + (c % 8) + (r / 8) *
 * SBO + (c / 8) * LBO} without swizzle (8x8 core matrices), {@code start + (r % 8) * W + c + (r / 8) * SBO} with
 * {@code Swizzle<s,3,3>} (rows of W = 8 * 2^s elements: 32, 64 or 128 bytes), checked element by element; a
 * swizzled tile must start on a swizzle-row boundary with its 8-row groups on swizzle-atom boundaries, and the
 * buffer be aligned to the swizzle period (the hardware swizzles absolute shared addresses, the layout offsets
 * into the buffer). Run-time starts must keep those alignments (TVM's modular-set analysis proves it).
 */
record SharedMatrixDescriptor(Operand operand, long rows, long mode, long width, long sbo, long lbo,
        Map<List<Long>, Long> starts, RunTimeStarts runTimeStarts, long unit) {

    /**
     * Checks every instruction tile (rows x one K step of 32 bytes: 16 elements of 16 bits, 32 of 8 bits) of
     * {@code o} against the descriptor's address map.
     */
    static SharedMatrixDescriptor of(Request call, Operand o, long rows, long k, String op) {
        AffineAccess.requireMemoryOnly(o);
        if (o.elementBytes() != 2 && o.elementBytes() != 1) {
            throw Declined.of("%s: %s has %d-byte elements; the descriptor walk here is for 16- and 8-bit ones", op,
                    o, o.elementBytes());
        }
        long unit = 16 / o.elementBytes();   // elements per 16 bytes: a core-matrix row
        long step = kStep(o);
        Swizzle z = call.swizzle(o.role());
        long mode;
        if (z.isIdentity()) {
            mode = 0;
        } else if (z.base() == Long.numberOfTrailingZeros(16 / o.elementBytes()) && z.shift() == 3 && z.bits() >= 1
                && z.bits() <= 3) {
            mode = z.bits();
        } else {
            throw Declined.of("%s: %s is swizzled as %s; the matrix descriptor reads Swizzle<1..3,%d,3> (32/64/128-byte "
                    + "rows of 16-byte units) or none", op, o, z, Long.numberOfTrailingZeros(16 / o.elementBytes()));
        }
        // a run-time start (a pipeline stage, a warpgroup's rows, a K block) adds floor(s / q) * p to every address
        AffineAccess runTime = hasRunTimeStart(o) ? AffineAccess.of(o) : null;
        long[] from = runTime != null ? runTime.lowStart(o) : o.start();
        long width = mode == 0 ? unit : unit << mode; // elements per swizzle row (core-matrix row without swizzle)
        long blocks = o.loopExtents()[0] / rows;
        Map<List<Long>, Long> starts = new LinkedHashMap<>();
        long sbo = -1;
        long lbo = -1;
        for (long i = 0; i < blocks; i++) {
            for (long kk = 0; kk < k / step; kk++) {
                long start = address(o, from, i * rows, kk * step);
                long s = rows > 8 ? address(o, from, i * rows + 8, kk * step) - start : 8 * width;
                long l = mode == 0 ? address(o, from, i * rows, kk * step + unit) - start : 0;
                if (sbo >= 0 && (s != sbo || l != lbo)) {
                    throw Declined.of("%s: instruction tiles of %s have different strides (8-row groups "
                            + "%d and %d, core-matrix columns %d and %d elements apart)", op, o, sbo, s, lbo, l);
                }
                sbo = s;
                lbo = l;
                for (long r = 0; r < rows; r++) {
                    for (long c = 0; c < step; c++) {
                        long want = mode == 0
                                ? start + (r % 8) * unit + (c % unit) + (r / 8) * sbo + (c / unit) * lbo
                                : start + (r % 8) * width + c + (r / 8) * sbo;
                        long got = address(o, from, i * rows + r, kk * step + c);
                        if (got != want) {
                            throw Declined.of("%s: element (%d, %d) of %s is at %d, the matrix descriptor "
                                    + "(%s, start %d, 8-row groups %d apart%s) reads it from %d", op, i * rows + r,
                                    kk * step + c, o, got, modeName(mode), start, sbo,
                                    mode == 0 ? ", core-matrix columns " + lbo + " apart" : "", want);
                        }
                    }
                }
                if (start % unit != 0) {
                    throw Declined.of("%s: instruction tile (%d, %d) of %s starts at element %d, not on "
                            + "16 bytes", op, i, kk, o, start);
                }
                if (mode != 0 && ((start / width) % 8 != 0 || start % width + step > width)) {
                    throw Declined.of("%s: instruction tile (%d, %d) of %s starts at element %d, not in "
                            + "the first row of a %s atom (%d elements)", op, i, kk, o, start, modeName(mode),
                            8 * width);
                }
                starts.put(List.of(i, kk), start);
            }
        }
        if (sbo % unit != 0 || lbo % unit != 0 || sbo < 0 || lbo < 0 || sbo / unit >= (1 << 14)
                || lbo / unit >= (1 << 14)) {
            throw Declined.of("%s: %s: byte offsets %d and %d do not fit the descriptor's 14-bit "
                    + "16-byte fields", op, o, sbo * o.elementBytes(), lbo * o.elementBytes());
        }
        if (mode != 0 && sbo % (8 * width) != 0) {
            throw Declined.of("%s: %s: 8-row groups %d elements apart are not on %s atom boundaries", op,
                    o, sbo, modeName(mode));
        }
        long align = alignment(call, o);
        long need = mode == 0 ? 16 : 8 * width * o.elementBytes();   // bytes of a core matrix / a swizzle atom
        if (align < need) {
            throw Declined.of("%s: %s is aligned to %d bytes; the %s descriptor needs %d (declare the "
                    + "buffer with align=%d)", op, o, align, modeName(mode), need, need);
        }
        // a run-time start must keep every tile on the same boundaries, for every value TVM's analysis allows
        if (runTime != null && !runTime.startOffset().times(o.elementBytes()).divisibleBy(need)) {
            throw Declined.of("%s: %s starts at run-time indices that move it by %s elements, which may leave the %s "
                    + "period (%d bytes)", op, o, runTime.startOffset(), modeName(mode), need);
        }
        RunTimeStarts runTimeStarts = runTime != null ? RunTimeStarts.of(runTime)
                : null;
        return new SharedMatrixDescriptor(o, rows, mode, width, sbo, lbo, starts, runTimeStarts, unit);
    }

    /** Elements of one instruction's K step: 32 bytes (k16 for 16-bit operands, k32 for 8-bit ones). */
    static long kStep(Operand o) {
        return 32 / o.elementBytes();
    }

    long start(long block, long kk) {
        return starts.get(List.of(block, kk));
    }

    /**
     * The plan's operand: swizzle as CUtensorMapSwizzle (0 none, 1 32B, 2 64B, 3 128B); sbo and lbo as the
     * descriptor fields (bytes >> 4, i.e. elements / unit); what each run-time start adds, when there are any.
     */
    PlanParts.SharedOperand describe() {
        return new PlanParts.SharedOperand(operand.role(), mode, sbo / unit, mode == 0 ? lbo / unit : 1,
                runTimeStarts != null ? runTimeStarts.strides() : null,
                runTimeStarts != null ? runTimeStarts.terms() : null);
    }

    String summary() {
        return modeName(mode) + ", 8-row groups " + sbo * operand.elementBytes() + " B apart"
                + (mode == 0 ? ", core-matrix columns " + lbo * operand.elementBytes() + " B apart" : "");
    }

    static String modeName(long mode) {
        return mode == 0 ? "no swizzle" : (8 << mode) * 2 + "-byte swizzle";
    }

    /** Memory address (elements from the data start, before any swizzle) of region element (r, c). */
    static long address(Operand o, long[] from, long r, long c) {
        int[] dims = o.loopDims();
        long[] coord = from.clone();
        coord[dims[0]] += r;
        coord[dims[1]] += c;
        return o.elemOffset() + o.layout().apply(Shape.of(o.shape()), coord).get(0).get(Axis.M);
    }

    static boolean hasRunTimeStart(Operand o) {
        for (boolean b : o.symbolic()) {
            if (b) {
                return true;
            }
        }
        return false;
    }

    static long alignment(Request call, Operand o) {
        JsonObject align = call.params().has("align") ? call.params().getAsJsonObject("align") : new JsonObject();
        long bytes = align.has(o.role()) ? align.get(o.role()).getAsLong() : 0;
        long offsetBytes = o.elemOffset() * o.elementBytes();
        return offsetBytes == 0 ? bytes : Math.min(bytes, Long.lowestOneBit(offsetBytes));
    }
}
