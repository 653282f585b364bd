/**
 * Dispatch rules for TIRx tile primitives, decided from Axe layouts: what every target shares.
 *
 * <p>TVM lowers a tile call ({@code Tx.copy(B, A)}, {@code Tx.sum(...)}, {@code Tx.gemm(...)}) by asking its
 * dispatch table, keyed by (op, target kind), for a PrimFunc whose body replaces the call. A {@link Rule} reads a
 * {@link Request} (the operands' buffer shapes, regions, dtypes and {@link org.axe4j.layout.Layout}s, each an
 * {@link Operand}) and either declines with the reason ({@link Declined}) or answers a typed plan
 * ({@link org.axe4j.schedules.plan}); {@link Decision} records which. {@link DispatchTable#forTarget} gives the
 * table of one target kind, whose rules live in one package each: {@link org.axe4j.schedules.cpu} ({@code llvm}),
 * {@link org.axe4j.schedules.cuda} ({@code cuda}) and {@link org.axe4j.schedules.trn} ({@code trn}).
 *
 * <p>The CPU and CUDA plans rest on one fact ({@link AffineAccess}): for a memory layout L, the address of element
 * c of a region is affine in loop counters, {@code addr(c) = base + sum_l i_l * stride_l (+ r for each replica r)},
 * whenever the region walks each digit of L either whole or inside one digit. For example, the 8x8 buffer stored
 * in 4x4 tiles, {@code S[(2,4,2,4):(32,4,16,1)]}, walks rows as (4: stride 4)(2: stride 32) and columns as
 * (4: stride 1)(2: stride 16); its region {@code [1:3, 4:8]} is the nest (2: 4)(4: 1) from base 20. Several
 * operands share one nest by refining their radices to a common one ({@link LoopNest}); start offsets known only
 * at run time add {@link RunTimeStarts} terms. {@link ElementwiseLoops}, {@link ReductionLoops} and
 * {@link PlanAccesses} build the loops and accesses that the element-wise and reduction rules of both targets use.
 *
 * <p>{@link SchedulesGlobals} exposes the tables to TVM as packed functions, which the Python package
 * {@code axe4j.dispatch} registers as dispatch cases and whose plans it turns into TIR. {@link RunExported} runs an
 * exported module from a plain JVM.
 */
package org.axe4j.schedules;
