/**
 * The dispatch rules of target kind {@code llvm} (the CPU), in the table {@link CpuDispatch}.
 *
 * <p>Element-wise ops ({@link ElementwiseRules}) and reductions ({@link ReduceRule}) first try one loop nest in
 * which every operand's address is affine ({@link org.axe4j.schedules.AffineAccess}); the nest then gets its order
 * (the destination walks forwards), a vector loop (every operand moves by 0 or 1, 64 bytes of the widest element
 * per vector) and a parallel loop (a digit on the worker axis {@code cpu}, or size). Layouts no affine nest covers
 * fall back to the digits rules, which address every element from its layout's digits with div/mod. The GEMM
 * ({@link GemmRules}) blocks for the machine of the request ({@link CpuTarget}): a register tile, cache-sized K and
 * u blocks ({@link GemmBlocking}) and packed panels whose Axe layouts are {@link GemmPacking}'s.
 */
package org.axe4j.schedules.cpu;
