/**
 * The dispatch rules of target kind {@code trn} (Trainium, emitted as NKI), in the table {@link TrnDispatch}.
 *
 * <p>On-chip memory is two Axe axes ({@link TrainiumMemory}): partitions {@code P} and free bytes {@code F}, PSUM
 * further cut into banks. Every instruction reads or writes a P x F box; {@link TrnTiles} finds from an operand's
 * layout how long a run of one logical dim stays such a box, {@link TrnMapPlan} the instruction tile of copies,
 * element-wise ops and reductions along F, and {@link TrnGemmRule} the largest legal {@code nc_matmul} tile.
 * Transposes ({@link TrnTransposePlan}) and sums along partitions ({@link TrnPartitionSum}) go through the
 * TensorEngine. Every on-chip tile is checked against the SBUF and PSUM limits before a plan is answered.
 */
package org.axe4j.schedules.trn;
