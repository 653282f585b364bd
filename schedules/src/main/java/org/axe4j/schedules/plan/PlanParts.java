package org.axe4j.schedules.plan;

import java.util.List;
import java.util.Map;

/**
 * The pieces plans share: loops, operand accesses and digit descriptions. Maps are keyed by operand role
 * ({@code dst}, {@code src0}, {@code A}, ...) or by a buffer dim written as a string ({@code "0"}, {@code "1"}).
 */
public final class PlanParts {
    private PlanParts() {}

    /** A loop of a nest: {@code kind} serial/vectorized/parallel/unroll, whether it reduces, stride per role. */
    public record NestLoop(long extent, String kind, boolean reduces, Map<String, Long> strides) {}

    /** A loop known by its extent and per-role strides only (threads split it). */
    public record StridedLoop(long extent, Map<String, Long> strides) {}

    /** A loop with a kind (e.g. {@code chunked}) and per-role strides. */
    public record KindedLoop(String kind, long extent, Map<String, Long> strides) {}

    /** A loop driving, per role, one buffer dim (addresses come from the layouts' digits). */
    public record DimLoop(long extent, Map<String, Integer> dims) {}

    /** A {@link DimLoop} with a loop kind. */
    public record KindedDimLoop(long extent, String kind, Map<String, Integer> dims) {}

    /**
     * An affine operand: {@code addr = base + sum_l i_l * stride_l (+ r for each replica r)}; a run-time start s_d
     * adds {@code s_d * start_strides[d]}, or the sum over {@code start_terms[d]} of
     * {@code (floor(s_d / divisor) mod modulus) * stride} ([divisor, modulus, stride], modulus 0 for none);
     * {@code swizzle} [bits, base, shift] when the layout is swizzled.
     */
    public record Access(long base, Map<String, Long> startStrides,
                         @MayBeAbsent Map<String, List<List<Long>>> startTerms, List<Long> replicas, String layout,
                         @MayBeAbsent List<Long> swizzle) {}

    /** A gemm matrix: an {@link Access} with one stride per logical dim ({@code m}, {@code n}, {@code k}). */
    public record GemmAccess(long base, Map<String, Long> startStrides,
                             @MayBeAbsent Map<String, List<List<Long>>> startTerms, @MayBeAbsent Long m,
                             @MayBeAbsent Long n, @MayBeAbsent Long k, List<Long> replicas, String layout) {}

    /**
     * An operand of a register-tiled CUDA plan: in registers or memory, its thread terms
     * ([divisor, modulus, stride] of the thread index) and, in registers, the slots per thread; run-time starts as
     * in {@link Access} (a register operand's slot moves by them); {@code swizzle} [bits, base, shift] when a memory
     * operand's layout is swizzled (each access at swz(address)).
     */
    public record RegisterAccess(boolean register, long base, Map<String, Long> startStrides,
                                 @MayBeAbsent Map<String, List<List<Long>>> startTerms, List<Long> replicas,
                                 List<List<Long>> threadTerms, @MayBeAbsent Long slots, String layout,
                                 @MayBeAbsent List<Long> swizzle) {}

    /** An operand of a warp-shuffle reduction: its register slots per thread, moved by run-time starts. */
    public record SlotAccess(long base, long slots, Map<String, Long> startStrides, List<Long> replicas,
                             String layout, @MayBeAbsent Map<String, List<List<Long>>> startTerms) {}

    /**
     * An operand addressed from its layout's digits: row-major {@code row_strides} of the buffer, and per shard
     * iter [extent, stride, below] ({@code addr = base + sum ((x / below) mod extent) * stride (+ r)}).
     */
    public record DigitOperand(long base, List<Long> rowStrides, List<List<Long>> iters, List<Long> replicas) {}

    /** A {@link DigitOperand} of a gemm with the buffer dim of each logical dim ({@code m}, {@code n}, {@code k}). */
    public record GemmDigitOperand(long base, List<Long> rowStrides, List<List<Long>> iters, List<Long> replicas,
                                   Map<String, Integer> dims) {}

    /** A {@link DigitOperand} with the buffer dim that each region loop drives. */
    public record CudaDigitOperand(long base, List<Long> rowStrides, List<List<Long>> iters, List<Long> replicas,
                                   List<Integer> dims) {}

    /** A shared-memory matrix operand of wgmma/tcgen05: its swizzle and descriptor strides (bytes >> 4). */
    public record SharedOperand(String role, long swizzle, long sbo, long lbo,
                                @MayBeAbsent Map<String, Long> startStrides,
                                @MayBeAbsent Map<String, List<List<Long>>> startTerms) {}

    /** One MMA step of a tile: the A and B fragment (or descriptor) offsets. */
    public record OperandStep(long a, long b) {}

    /** A Trainium loop or instruction dim: its name, extent and, per tensor, the buffer dims it moves. */
    public record TrnLoop(String kind, String name, long extent, Map<String, Map<String, Long>> index) {}
}
