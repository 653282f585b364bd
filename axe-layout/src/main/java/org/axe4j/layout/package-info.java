/**
 * The Axe layout algebra.
 *
 * <h2>What a layout is</h2>
 * An Axe layout maps a logical index to a <em>set</em> of points in a space of named hardware axes:
 * <pre>
 *   L(x) = { D(x) + r + O  |  r in R }
 * </pre>
 * {@code D} (the shard) is an ordered list of iters {@code (e, s@a)}; the flat index {@code x} is read
 * as mixed-radix digits {@code d_k} with the last iter fastest, and iter {@code k} contributes
 * {@code d_k * s_k} on axis {@code a_k}. {@code R} (the replicas) adds every combination of its iters, so
 * one logical element may live in several places (a value broadcast to two warps, a tensor replicated
 * on two GPUs). {@code O} shifts everything.
 *
 * <h2>A worked table</h2>
 * {@code S[(8,2,4,2):(4@laneid,1@warpid,1@laneid,1@reg)] + R[2:4@warpid] + 5@warpid} over shape (8,16):
 * <pre>
 *   coordinate   flat x   digits (d0,d1,d2,d3)   D(x)                         L(x)
 *   (0,0)        0        (0,0,0,0)              {}                           {warpid:5}, {warpid:9}
 *   (0,1)        1        (0,0,0,1)              {reg:1}                      {reg:1, warpid:5}, {reg:1, warpid:9}
 *   (2,9)        41       (2,1,0,1)              {laneid:8, reg:1, warpid:1}  {laneid:8, reg:1, warpid:6}, {.. warpid:10}
 * </pre>
 * Rows go to lanes 0,4,...,28, the two column halves to consecutive warps, columns within a half to
 * lanes (fast) and a register pair (fastest); the replica puts a second copy four warps further.
 *
 * <h2>The operations</h2>
 * <ul>
 *   <li>{@link org.axe4j.layout.LayoutText}: the text form, parsed and printed.</li>
 *   <li>{@link org.axe4j.layout.Layout#apply}, {@link org.axe4j.layout.Layout#inverse}: the map and its
 *       backward map; sizes and spans per axis.</li>
 *   <li>{@link org.axe4j.layout.Canonicalize}, {@link org.axe4j.layout.Equivalence}: the canonical form
 *       (rules D0, DZ, D1, C0, CZ, C1, C2) and an exact test of map equality.</li>
 *   <li>{@link org.axe4j.layout.Group}: split a shard into one block per dimension of a shape.</li>
 *   <li>{@link org.axe4j.layout.Tile}, {@link org.axe4j.layout.TileOf}, {@link org.axe4j.layout.DirectSum}:
 *       the Kronecker product {@code f(z) = f_A(x) * span(B) + f_B(y)}, its two recognisers, and the sum
 *       without span scaling.</li>
 *   <li>{@link org.axe4j.layout.Slice}: a layout equal to {@code L(b + y)} on a box {@link org.axe4j.layout.Region}.</li>
 *   <li>{@link org.axe4j.layout.ReplicaSet}: the distinct replica displacements, counted and enumerated lazily;
 *       {@link org.axe4j.layout.Budget}: the caps a request runs under (points, bytes, time).</li>
 * </ul>
 * Every operation states its contract over the whole domain ("for every x: result(x) == ..."), and
 * its tests check exactly that by enumerating the set-valued map (the test oracle).
 *
 * <h2>Relation to neighbouring formalisms</h2>
 * A CuTe layout {@code (s0,s1):(d0,d1)} is an Axe layout on one axis without replicas and offset,
 * read colexicographically; a Triton linear layout is the GF(2) inverse of a power-of-two Axe layout;
 * a DTensor sharding spec is an Axe layout with device axes in {@code D} (shard) and {@code R} (replicate).
 */
package org.axe4j.layout;
