/**
 * Axe layouts and three neighbouring formalisms: CuTe {@code shape:stride} layouts, Triton linear
 * layouts, and distributed sharding specs (PyTorch DTensor / GSPMD placements over a device mesh).
 *
 * <h2>Directions</h2>
 *
 * <pre>
 *   Axe      L : logical index x (row-major over a shape)  ->  set of hardware points (sparse over axes)
 *   CuTe     c : coordinate of its top-level shape          ->  one integer       same direction as Axe
 *   Triton  ll : hardware bits (register, lane, warp, ...)  ->  logical bits      the OPPOSITE direction
 *   DTensor    : placements per mesh dimension; read as logical element -> (devices holding it, local offset),
 *                the same direction as Axe
 * </pre>
 *
 * <h2>CuTe ({@link org.axe4j.layout.interop.CuteInterop})</h2>
 *
 * As functions of a coordinate of the same shape, CuTe {@code (s0,s1):(d0,d1)} and Axe
 * {@code S[(s0,s1):(d0,d1)]} agree. Flat indices differ: CuTe unflattens colexicographically (first
 * mode fastest), Axe lexicographically (last iter fastest). So a nested mode, whose coordinate is read as a
 * flat index of its sub-modes, enters Axe with its sub-modes reversed; {@code toAxeFlat} reverses every leaf.
 * For {@code (2,3):(1,2)} (column-major, CuTe's "layout left"):
 *
 * <pre>
 *   flat index            0  1  2  3  4  5
 *   CuTe applyFlat        0  1  2  3  4  5      i -> (i mod 2, i div 2) -> i mod 2 + 2 (i div 2)
 *   Axe S[(2,3):(1,2)]    0  2  4  1  3  5      x -> (x div 3, x mod 3) -> (x div 3) + 2 (x mod 3)
 *   toAxeFlat = S[(3,2):(2,1)]   0  1  2  3  4  5
 *
 *   coordinate (r, c)     (0,0) (0,1) (0,2) (1,0) (1,1) (1,2)
 *   both                    0     2     4     1     3     5
 * </pre>
 *
 * {@code (2,(3,4)):(1,(2,6))} becomes {@code S[(2,4,3):(1,6,2)]} with shape (2,12). The way back groups the
 * Axe shard by the shape (after dropping unit iters and merging contiguous ones) and reverses each block; it
 * refuses replicas, offsets, several axes and shards that no split can group.
 *
 * <h2>Triton linear layouts ({@link org.axe4j.layout.interop.LinearInterop})</h2>
 *
 * A linear layout XORs one basis vector per set input bit. An Axe layout is bit-linear when the shape,
 * extents and strides are powers of two, there is no offset, and every axis's hardware bits are used by
 * exactly one iter and fill {@code [0, log2 span)}. A shard iter {@code (2^a, 2^b @X)} reading logical
 * bits {@code [q, q+a)} gives hardware bit {@code b+t} of {@code X} the basis of logical bit {@code q+t};
 * a replica iter's bits get basis 0 (broadcast). Example, shape (4,2):
 *
 * <pre>
 *   Axe  S[(4,2):(1@laneid,1@reg)] + R[2:4@laneid]
 *   ll   [reg: (0,1); laneid: (1,0) (2,0) (0,0)] -> (dim0:2, dim1:1)
 *
 *   logical (r, c)     hardware points L(r, c)                      ll(laneid, reg)
 *   (0,0)              {laneid:0, reg:0}  {laneid:4, reg:0}         ll(0,0) = ll(4,0) = (0,0)
 *   (2,1)              {laneid:2, reg:1}  {laneid:6, reg:1}         ll(2,1) = ll(6,1) = (2,1)
 *   (3,1)              {laneid:3, reg:1}  {laneid:7, reg:1}         ll(3,1) = ll(7,1) = (3,1)
 * </pre>
 *
 * For every logical {@code c} and hardware {@code p}: {@code p in L(c)} iff {@code ll(p) = c}. Back to Axe,
 * every non-zero basis must be a single output bit, no two alike, covering every output bit. What only one
 * side expresses: Axe's column-major 3x4 {@code S[(3,4):(1,3)]} (not bit-linear: paper Appendix G) and
 * Triton's XOR swizzles such as {@code lane=1 -> (1,1)} (in Axe a swizzle is a separate composition after
 * the layout, TIRx's {@code ComposeLayout}).
 *
 * <h2>Sharding specs ({@link org.axe4j.layout.interop.ShardingInterop})</h2>
 *
 * A {@link org.axe4j.layout.interop.DeviceMesh} puts each mesh dimension on a device axis; dimensions on the
 * same axis number devices row-major (the default: all on {@code gpuid}). {@code Shard(d)} on mesh
 * dimension {@code j} becomes a shard iter {@code (n_j, meshStride_j @axis_j)} at the head of tensor
 * dimension {@code d}'s block (several mesh dimensions sharding {@code d} split it in mesh order, the first
 * outermost, as DTensor does); {@code Replicate()} becomes a replica iter. Axis {@code m} addresses a
 * compact row-major buffer of the local shard shape. A 4x4 tensor on {@code DeviceMesh.of(2)}:
 *
 * <pre>
 *   [Shard(0)]       S[(2,2,4):(1@gpuid,4,1)]       row r on gpuid r div 2 at m = 4 (r mod 2) + c
 *   [Replicate()]    S[(4,4):(4,1)] + R[2:1@gpuid]  every element on gpuid 0 and 1 at m = 4 r + c
 *   [Shard(1)]       S[(4,2,2):(2,1@gpuid,1)]       column c on gpuid c div 2 at m = 2 r + (c mod 2)
 * </pre>
 *
 * The paper's 64x128 fully sharded layout {@code S[(2,32,2,64):(1@gpuid,128@m,2@gpuid,1@m)]} is
 * {@code [Shard(1), Shard(0)]} on {@code DeviceMesh.of(2,2)} with each 32x64 shard in a padded 32x128 local
 * buffer; the compact convention writes {@code 64@m}. Going back, every placement list is tried and compared
 * as a map; a layout whose devices match a spec but whose local buffer is not compact is refused with that
 * reason. Uneven division (DTensor's padded last chunk) is not representable.
 */
package org.axe4j.layout.interop;
