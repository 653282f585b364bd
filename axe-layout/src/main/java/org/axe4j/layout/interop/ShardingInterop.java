package org.axe4j.layout.interop;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.TreeMap;
import org.axe4j.layout.AxeException;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Equivalence;
import org.axe4j.layout.Iter;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Result;
import org.axe4j.layout.Shape;

/**
 * Distributed sharding specs (DTensor placements over a device mesh) and Axe layouts with device axes.
 *
 * <pre>
 *   tensor dim d of size G_d, sharded by mesh dims j_1 < j_2 < ... (in mesh order, the first outermost,
 *   as DTensor splits left to right), n_d = product of their sizes, local size l_d = G_d / n_d:
 *     block d  = (n_{j_1}, meshStride_{j_1} @ axis_{j_1}) (n_{j_2}, ...) ... (l_d, w_d @ m)
 *   local buffer: compact row-major over (l_0, ..., l_{r-1}):  w_d = l_{d+1} * ... * l_{r-1}
 *   replicas: (n_j, meshStride_j @ axis_j) for every mesh dim j placed Replicate(), in mesh order
 * </pre>
 *
 * So global coordinate g is held by device(i) for every mesh coordinate i whose sharding digits select the
 * chunk containing g (the replicated mesh indices are free), at local offset = row-major index of
 * {@code g mod l} in the local shape. Uneven division (DTensor pads the last chunk) is not representable.
 *
 * <p>Example: a 64x128 tensor on {@code DeviceMesh.of(2,2)} (gpuid strides 2, 1) with
 * {@code [Replicate(), Shard(0)]} is {@code S[(2,32,128):(1@gpuid,128,1)] + R[2:2@gpuid]}, the paper's second
 * mesh layout; {@code [Shard(1), Shard(0)]} is {@code S[(2,32,2,64):(1@gpuid,64,2@gpuid,1)]}, whose local
 * 32x64 buffer is compact (the paper prints {@code 128@m}: the same shards in a padded 32x128 buffer).
 */
public final class ShardingInterop {
    /** Above this many candidate placements, {@link #tryFromAxe} refuses to search. */
    static final long CANDIDATE_LIMIT = 1L << 16;

    private ShardingInterop() {}

    /** The Axe layout of {@code spec} for a tensor of {@code globalShape}; NOT_REPRESENTABLE if a division is uneven. */
    public static Layout toAxe(ShardingSpec spec, Shape globalShape) {
        DeviceMesh mesh = spec.mesh();
        int rank = globalShape.rank();
        List<List<Integer>> shardedBy = new ArrayList<>();
        for (int d = 0; d < rank; d++) {
            shardedBy.add(new ArrayList<>());
        }
        List<Iter> replica = new ArrayList<>();
        for (int j = 0; j < mesh.rank(); j++) {
            Placement p = spec.placements().get(j);
            if (p instanceof Placement.Shard s) {
                if (s.dim() >= rank) {
                    throw new AxeException(AxeException.Kind.INVALID, "sharding spec " + spec + " places mesh dimension "
                            + j + " on tensor dimension " + s.dim() + " but shape " + globalShape + " has rank " + rank);
                }
                shardedBy.get(s.dim()).add(j);
            } else {
                replica.add(new Iter(mesh.dim(j), mesh.stride(j), mesh.axis(j)));
            }
        }
        long[] local = new long[rank];
        for (int d = 0; d < rank; d++) {
            long n = 1;
            for (int j : shardedBy.get(d)) {
                n *= mesh.dim(j);
            }
            if (globalShape.dim(d) % n != 0) {
                throw new AxeException(AxeException.Kind.NOT_REPRESENTABLE, "sharding spec " + spec + " splits dimension "
                        + d + " of shape " + globalShape + " (size " + globalShape.dim(d) + ") over " + n + " devices of"
                        + " mesh dimensions " + shardedBy.get(d) + ": uneven division (DTensor pads the last chunk),"
                        + " which an Axe layout cannot express");
            }
            local[d] = globalShape.dim(d) / n;
        }
        List<Iter> shard = new ArrayList<>();
        long w = Shape.of(local).size();
        for (int d = 0; d < rank; d++) {
            for (int j : shardedBy.get(d)) {
                shard.add(new Iter(mesh.dim(j), mesh.stride(j), mesh.axis(j)));
            }
            w /= local[d];
            shard.add(new Iter(local[d], w, Axis.M));
        }
        return new Layout(shard, replica, new TreeMap<>());
    }

    /** {@link #tryFromAxe} as an optional. */
    public static Optional<ShardingSpec> fromAxe(Layout l, Shape globalShape, DeviceMesh mesh) {
        return tryFromAxe(l, globalShape, mesh).toOptional();
    }

    /**
     * The sharding spec over {@code mesh} whose {@link #toAxe} induces the same map as {@code l}, or why none
     * does. Every placement list is tried ({@code Replicate()} first, so a size-1 mesh dimension reads as
     * replicated) and compared by {@link Equivalence#equivalent}. When the devices match but the memory axis does
     * not, the reason says so and shows the compact layout.
     */
    public static Result<ShardingSpec> tryFromAxe(Layout l, Shape globalShape, DeviceMesh mesh) {
        if (!l.admits(globalShape)) {
            throw new AxeException(AxeException.Kind.INVALID, "sharding conversion: shape " + globalShape + " (size "
                    + globalShape.size() + ") is not admitted by layout " + l + " (size " + l.size() + ")");
        }
        for (Axis a : l.axes()) {
            if (!a.isMemory() && !mesh.axes().contains(a)) {
                return Result.absent("layout " + l + " uses axis " + a + ", which is neither the memory axis m nor"
                        + " an axis of mesh " + mesh);
            }
        }
        int rank = globalShape.rank();
        long candidates = 1;
        for (int j = 0; j < mesh.rank(); j++) {
            candidates = Math.multiplyExact(candidates, rank + 1);
            if (candidates > CANDIDATE_LIMIT) {
                throw new AxeException(AxeException.Kind.INVALID, "sharding conversion: mesh " + mesh + " and rank "
                        + rank + " give more than " + CANDIDATE_LIMIT + " placement lists to try");
            }
        }
        Layout deviceOnly = withoutMemory(l);
        ShardingSpec deviceMatch = null;
        for (long code = 0; code < candidates; code++) {
            ShardingSpec spec = candidate(mesh, rank, code);
            Layout t;
            try {
                t = toAxe(spec, globalShape);
            } catch (AxeException uneven) {
                continue;
            }
            if (Equivalence.equivalent(l, t)) {
                return Result.of(spec);
            }
            if (deviceMatch == null && Equivalence.equivalent(deviceOnly, withoutMemory(t))) {
                deviceMatch = spec;
            }
        }
        if (deviceMatch != null) {
            return Result.absent("layout " + l + " places the tensor on the devices as " + deviceMatch.placementsText()
                    + " does, but its memory axis m is not the compact row-major local buffer of that spec: "
                    + toAxe(deviceMatch, globalShape));
        }
        return Result.absent("no placements over mesh " + mesh + " reproduce layout " + l + " for shape "
                + globalShape + " (tried " + candidates + " placement lists)");
    }

    /** Candidate {@code code} in base rank+1, mesh dim 0 slowest: digit 0 = Replicate(), digit d+1 = Shard(d). */
    private static ShardingSpec candidate(DeviceMesh mesh, int rank, long code) {
        Placement[] p = new Placement[mesh.rank()];
        for (int j = mesh.rank() - 1; j >= 0; j--) {
            int digit = (int) (code % (rank + 1));
            code /= rank + 1;
            p[j] = digit == 0 ? new Placement.Replicate() : new Placement.Shard(digit - 1);
        }
        return new ShardingSpec(mesh, List.of(p));
    }

    /** The layout's device part: strides on m set to 0 and the m offset dropped. */
    private static Layout withoutMemory(Layout l) {
        List<List<Iter>> parts = new ArrayList<>();
        for (List<Iter> part : List.of(l.shard(), l.replica())) {
            List<Iter> out = new ArrayList<>();
            for (Iter it : part) {
                out.add(it.axis().isMemory() ? new Iter(it.extent(), 0, Axis.M) : it);
            }
            parts.add(out);
        }
        TreeMap<Axis, Long> offset = new TreeMap<>(l.offset());
        offset.remove(Axis.M);
        return new Layout(parts.get(0), parts.get(1), offset);
    }
}
