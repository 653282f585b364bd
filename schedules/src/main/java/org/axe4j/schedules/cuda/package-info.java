/**
 * The dispatch rules of target kind {@code cuda}, in the table {@link CudaDispatch}.
 *
 * <p>Global and shared operands are affine in a loop nest ({@link org.axe4j.schedules.AffineAccess}) that the
 * scope's threads share in aligned chunks ({@link CudaRules}, {@link CudaAsyncRules} for {@code cp.async},
 * {@link CudaReduceRule}). Register operands are partitions of the region over the scope's threads
 * ({@link RegisterTile}): element-wise ops ({@link CudaRegisterRule}) and shuffle reductions
 * ({@link CudaShuffleReduceRule}) read thread and register digits off the layout. The matrix instructions are
 * recognised by tile-of against their operand fragments ({@link org.axe4j.targets.MatrixFragments}):
 * {@code ldmatrix}/{@code stmatrix} ({@link CudaMatrixRules}), {@code mma.sync} ({@link CudaMmaRule}), and, from
 * shared-memory descriptors ({@link SharedMatrixDescriptor}), {@code wgmma} ({@link CudaWgmmaRule}) and
 * {@code tcgen05.mma} ({@link CudaTcgen05Rule}) with their {@code gemm_async} config ({@link AsyncMmaConfig}).
 * {@link CudaTmaRule} derives a TMA tensor map (dims, strides, box, swizzle) from the two layouts of a copy.
 */
package org.axe4j.schedules.cuda;
