package org.axe4j.schedules.plan;

import java.util.List;
import java.util.Map;
import org.axe4j.schedules.plan.PlanParts.Access;
import org.axe4j.schedules.plan.PlanParts.DigitOperand;
import org.axe4j.schedules.plan.PlanParts.DimLoop;
import org.axe4j.schedules.plan.PlanParts.GemmAccess;
import org.axe4j.schedules.plan.PlanParts.GemmDigitOperand;
import org.axe4j.schedules.plan.PlanParts.KindedDimLoop;
import org.axe4j.schedules.plan.PlanParts.NestLoop;

/** The plans of the CPU rules (target kind {@code llvm}). */
public final class CpuPlans {
    private CpuPlans() {}

    /** An element-wise op over affine operands: one loop nest, vector loop last, {@code tail} elements guarded. */
    @PlanKind("affine")
    public record Affine(List<NestLoop> loops, Map<String, Access> access, long tail, List<String> notes)
            implements SchedulePlan {}

    /** An element-wise op with addresses from the layouts' digits: serial loops over the region dims. */
    @PlanKind("digits")
    public record Digits(List<KindedDimLoop> loops, Map<String, DigitOperand> operands, List<String> notes)
            implements SchedulePlan {}

    /** An element-wise op addressed through TVM's flattening of the buffers: serial logical loops. */
    @PlanKind("logical")
    public record Logical(List<KindedDimLoop> loops, List<String> notes) implements SchedulePlan {}

    /** A reduction over affine operands: kept loops then reduced ones, the destination moving by 0 in the latter. */
    @PlanKind("reduce")
    public record Reduce(String combine, boolean init, boolean vectorReduce, List<NestLoop> loops,
                         Map<String, Access> access, long tail, List<String> notes) implements SchedulePlan {}

    /** A reduction with addresses from the layouts' digits: serial kept loops around serial reduced loops. */
    @PlanKind("reduce-digits")
    public record ReduceDigits(String combine, boolean init, List<DimLoop> spatial, List<DimLoop> reduced,
                               Map<String, DigitOperand> operands, List<String> notes) implements SchedulePlan {}

    /**
     * D = A B + C in cache blocks: a {@code tile} u x v register tile, {@code blocks} of k and u, A and B packed
     * ({@code packing}) or, for {@code kernel} "rows", read in place {@code k_rows} at a time. {@code packed_v}: the
     * layout of a moving operand already stored as packed panels for this plan's kc and nv, read in place.
     * {@code workers}: when present, the parallel loop is that many contiguous runs of u blocks or v panels (as
     * {@code parallel_over}), each running every K block and packing the moving operand's panels it reads (one
     * parallel region).
     */
    @PlanKind("gemm-blocked")
    public record GemmBlocked(long M, long N, long K, Map<String, GemmAccess> access, String vectorDim,
                              @MayBeAbsent String runTimeExtent, String isa, GemmTile tile, GemmBlocks blocks, boolean parallel, String parallelOver,
                              Map<String, String> packing, int lanes, boolean prefetchD, @MayBeAbsent String kernel,
                              @MayBeAbsent Long kRows, @MayBeAbsent String packedV, @MayBeAbsent Long workers,
                              List<String> notes)
            implements SchedulePlan {}

    /** The register tile of the blocked gemm: u rows (or columns) of v-wide vectors. */
    public record GemmTile(long u, long v) {}

    /** The cache blocks of the blocked gemm: k of the contraction, u of the non-vector dim. */
    public record GemmBlocks(long k, long u) {}

    /** D = A B + C one element at a time, addresses from the layouts' digits. */
    @PlanKind("gemm-naive")
    public record GemmNaive(long M, long N, long K, Map<String, GemmDigitOperand> operands) implements SchedulePlan {}
}
