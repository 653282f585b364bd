package org.axe4j.schedules.plan;

import java.util.List;
import java.util.Map;
import org.axe4j.schedules.plan.PlanParts.Access;
import org.axe4j.schedules.plan.PlanParts.CudaDigitOperand;
import org.axe4j.schedules.plan.PlanParts.KindedLoop;
import org.axe4j.schedules.plan.PlanParts.NestLoop;
import org.axe4j.schedules.plan.PlanParts.OperandStep;
import org.axe4j.schedules.plan.PlanParts.RegisterAccess;
import org.axe4j.schedules.plan.PlanParts.SharedOperand;
import org.axe4j.schedules.plan.PlanParts.SlotAccess;
import org.axe4j.schedules.plan.PlanParts.StridedLoop;

/** The plans of the CUDA rules. */
public final class CudaPlans {
    private CudaPlans() {}

    /** An element-wise op over affine operands: {@code chunks} of {@code vec} elements over {@code threads}. */
    @PlanKind("cuda-affine")
    public record Affine(long threads, long vec, long chunks, long rounds, List<StridedLoop> loops,
                         Map<String, Access> access, List<String> notes) implements SchedulePlan {}

    /** An element-wise op, one element per access, addresses from the layouts' digits. */
    @PlanKind("cuda-digits")
    public record Digits(long threads, List<Long> extents, long rounds, Map<String, CudaDigitOperand> operands,
                         List<String> notes) implements SchedulePlan {}

    /** A global-to-shared copy by {@code cp.async} of {@code bytes} per instruction. */
    @PlanKind("cuda-cp-async")
    public record CpAsync(long threads, long vec, long bytes, String instruction, long chunks, long rounds,
                          List<KindedLoop> loops, Map<String, Access> access, List<String> notes)
            implements SchedulePlan {}

    /**
     * ldmatrix/stmatrix: per group of {@code num} matrices, the register words and the shared row bases (warp 0's;
     * warp w of {@code warps} adds {@code w * warpStride}); a swizzled shared tile ({@code swizzle} [B, M, S]) is
     * addressed at swz(row address); a shared tile at run-time starts has what they add (see
     * {@link PlanParts.Access}).
     */
    @PlanKind("cuda-ldstmatrix")
    public record LdStMatrix(String direction, long num, long rowStride, long registers, String register,
                             String shared, List<MatrixGroup> groups, long warps, long warpStride,
                             @MayBeAbsent List<Long> swizzle, @MayBeAbsent Map<String, Long> startStrides,
                             @MayBeAbsent Map<String, List<List<Long>>> startTerms, List<String> notes)
            implements SchedulePlan {}

    /** One ldmatrix/stmatrix instruction: its register words and its lanes' shared row bases. */
    public record MatrixGroup(List<Long> words, List<Long> bases) {}

    /** A warp MMA ({@code mma.sync}): per tile the D and C fragments and per K step the A and B fragments. */
    @PlanKind("cuda-mma")
    public record Mma(String instruction, String init, MmaRegisters registers, List<MmaTile> tiles,
                      List<String> notes) implements SchedulePlan {}

    /** Registers per thread of each MMA operand. */
    public record MmaRegisters(long D, long A, long B, long C) {}

    /** One MMA output tile: its D and C register indices and its K steps' A and B register indices. */
    public record MmaTile(List<Long> d, List<Long> c, List<MmaStep> steps) {}

    /** One K step: the A and B register indices. */
    public record MmaStep(List<Long> a, List<Long> b) {}

    /** A reduction: {@code kept} loops over outputs spread over threads, {@code folded} loops each thread walks. */
    @PlanKind("cuda-reduce")
    public record Reduce(String combine, boolean init, long threads, long outputs, long rounds,
                         List<StridedLoop> kept, List<StridedLoop> folded, Map<String, Access> access,
                         List<String> notes) implements SchedulePlan {}

    /** A {@link Reduce} whose {@code group} threads per output combine {@code terms} partial results in a tree. */
    @PlanKind("cuda-tree-reduce")
    public record TreeReduce(String combine, boolean init, long threads, long outputs, long rounds, long group,
                             long terms, long warpsPerGroup, List<StridedLoop> kept, List<StridedLoop> folded,
                             Map<String, Access> access, List<String> notes) implements SchedulePlan {}

    /** An op over register-tiled operands: per thread loops over its slots; guards and write-once thread sets. */
    @PlanKind("cuda-register")
    public record Register(long threads, String partition, long vec, List<List<Long>> guards,
                           List<List<Long>> writeOnce, List<NestLoop> loops, Map<String, RegisterAccess> access,
                           List<String> notes) implements SchedulePlan {}

    /**
     * A register-tile op whose region crosses layout digits part way, as boxes cut at digit boundaries: each box a
     * {@link Register} plan over its part of the region, run one after the other.
     */
    @PlanKind("cuda-register-boxes")
    public record RegisterBoxes(long threads, List<Register> boxes, List<String> notes) implements SchedulePlan {}

    /**
     * An op over register tiles, one element per slot: per thread and slot counters ({@code registerDigits}
     * [extent, slot stride, below], {@code threadDigits} [extent, tau, below]) the partition's flat index, its
     * coordinate in {@code shape} guarded by the region, the other operands at the same offset in their regions
     * ({@code memory}: addresses from the layouts' digits; {@code registers}: the same slot).
     */
    @PlanKind("cuda-register-digits")
    public record RegisterDigits(long threads, String partition, List<Long> shape, List<Integer> dims, long slotBase,
                                 long slots, List<List<Long>> registerDigits, List<List<Long>> threadDigits,
                                 List<List<Long>> writeOnce, Map<String, CudaDigitOperand> memory,
                                 List<String> registers, List<String> notes) implements SchedulePlan {}

    /** A reduction in registers finished by warp shuffles over the lane {@code masks}. */
    @PlanKind("cuda-shuffle-reduce")
    public record ShuffleReduce(String combine, boolean init, long threads, List<List<Long>> guards,
                                List<NestLoop> loops, List<Long> masks, Map<String, SlotAccess> access,
                                List<String> notes) implements SchedulePlan {}

    /** A Blackwell {@code tcgen05.mma}: instruction descriptor, shared operands, per tile its TMEM column. */
    @PlanKind("cuda-tcgen05")
    public record Tcgen05(String instruction, long ctaGroup, long idesc, boolean accum, boolean elect,
                          boolean proxyFence, SharedOperand A, SharedOperand B, List<Tcgen05Tile> tiles,
                          List<String> notes) implements SchedulePlan {}

    /**
     * {@code tcgen05.ld} / {@code tcgen05.st} ({@code .32x32b}): {@code count} instructions of {@code num} columns,
     * instruction i moving tensor-memory columns {@code column + i num ..} of lane t to registers {@code slot + i num ..}
     * of warpgroup thread t; {@code registers}: the register tile's slots per thread.
     */
    @PlanKind("cuda-tcgen05-ldst")
    public record TmemCopy(String direction, String register, String tmem, long num, long count, long column,
                           long slot, long registers, List<String> notes) implements SchedulePlan {}

    /** One tcgen05 output tile: its TMEM column and its K steps. */
    public record Tcgen05Tile(long column, List<OperandStep> steps) {}

    /** A TMA bulk tensor copy: the tensor map's {@code dims} and the {@code issues} (shared offset, coordinates). */
    @PlanKind("cuda-tma")
    public record Tma(String direction, long rank, String instruction, boolean multicast, long swizzle,
                      String global, String shared, long globalBase, List<TmaDim> dims, Map<String, Access> access,
                      List<TmaIssue> issues, long boxBytes, long bytes, List<String> notes) implements SchedulePlan {}

    /** One tensor-map dim: the buffer dim, its element step, extent, stride (bytes), box size and start. */
    public record TmaDim(long dim, long step, long extent, long stride, long box, long start) {}

    /** One TMA instruction: its shared-memory offset and its box coordinates. */
    public record TmaIssue(long shared, List<Long> coords) {}

    /** A Hopper {@code wgmma}: shared operand descriptors, per tile its accumulator registers and K steps. */
    @PlanKind("cuda-wgmma")
    public record Wgmma(String instruction, boolean accum, @FieldName("wait") long waitGroups, boolean proxyFence, long registers,
                        SharedOperand A, SharedOperand B, List<WgmmaTile> tiles, List<String> notes)
            implements SchedulePlan {}

    /** One wgmma output tile: its accumulator registers and K steps. */
    public record WgmmaTile(List<Long> d, List<OperandStep> steps) {}
}
