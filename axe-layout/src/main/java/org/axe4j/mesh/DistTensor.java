package org.axe4j.mesh;

import java.util.List;
import java.util.TreeSet;
import org.axe4j.layout.AxeException;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Shape;
import org.axe4j.layout.interop.DeviceMesh;
import org.axe4j.layout.interop.ShardingInterop;
import org.axe4j.layout.interop.ShardingSpec;

/**
 * A distributed tensor: a global shape and an Axe layout over the mesh's device axes and the memory axis
 * {@code m}. Global element x (row-major flat index) lives at every point of {@code L(x)}: the device part
 * names the rank, the {@code m} part the offset in that rank's local buffer. Device iters in the shard split
 * the tensor (sharded), device iters in the replica copy it (replicated).
 *
 * <p>{@code partialDims} lists mesh dimensions whose ranks hold summands instead of copies (DTensor's
 * {@code Partial()}): the true value of an element is the sum over those dimensions' ranks. The layout must give
 * every rank of such a group the same elements (a replica over that dimension, in Axe terms).
 */
public record DistTensor(DeviceMesh mesh, Shape globalShape, Layout layout, List<Integer> partialDims,
        Shape paddedShape) {
    public DistTensor {
        partialDims = List.copyOf(new TreeSet<>(partialDims));
        if (paddedShape.rank() != globalShape.rank()) {
            throw new AxeException(AxeException.Kind.INVALID, "distributed tensor: padded shape " + paddedShape
                    + " and global shape " + globalShape + " differ in rank");
        }
        for (int d = 0; d < globalShape.rank(); d++) {
            if (paddedShape.dim(d) < globalShape.dim(d)) {
                throw new AxeException(AxeException.Kind.INVALID, "distributed tensor: padded shape " + paddedShape
                        + " is smaller than global shape " + globalShape + " in dimension " + d);
            }
        }
        if (!layout.admits(paddedShape)) {
            throw new AxeException(AxeException.Kind.INVALID, "distributed tensor: layout " + layout + " (size "
                    + layout.size() + ") does not admit " + (paddedShape.equals(globalShape) ? "global" : "padded")
                    + " shape " + paddedShape + " (size " + paddedShape.size() + ")");
        }
        for (int j : partialDims) {
            if (j < 0 || j >= mesh.rank()) {
                throw new AxeException(AxeException.Kind.INVALID, "distributed tensor: partial mesh dimension " + j
                        + " is outside mesh " + mesh);
            }
        }
    }

    /** A tensor whose layout covers exactly the global shape (no padding). */
    public DistTensor(DeviceMesh mesh, Shape globalShape, Layout layout, List<Integer> partialDims) {
        this(mesh, globalShape, layout, partialDims, globalShape);
    }

    public static DistTensor of(DeviceMesh mesh, Shape globalShape, Layout layout) {
        return new DistTensor(mesh, globalShape, layout, List.of());
    }

    /**
     * The tensor that DTensor placements describe; {@code partialDims} must be placed {@code Replicate()} in
     * {@code spec} (a partial mesh dimension neither splits nor copies: its ranks hold summands). A dimension of
     * size g split over n devices in all is padded to {@code ceil(g / n) * n}, as {@code torch.chunk} and DTensor
     * do: every rank's block has {@code ceil(g / n)} slots, the last rank(s) hold fewer elements.
     */
    public static DistTensor fromSpec(ShardingSpec spec, Shape globalShape, List<Integer> partialDims) {
        long[] padded = globalShape.toArray();
        for (int j = 0; j < spec.mesh().rank(); j++) {
            if (spec.placements().get(j) instanceof org.axe4j.layout.interop.Placement.Shard s && s.dim() >= 0
                    && s.dim() < padded.length) {
                long n = 1;
                for (int i = 0; i < spec.mesh().rank(); i++) {
                    if (spec.placements().get(i) instanceof org.axe4j.layout.interop.Placement.Shard t
                            && t.dim() == s.dim()) {
                        n *= spec.mesh().dim(i);
                    }
                }
                padded[s.dim()] = (globalShape.dim(s.dim()) + n - 1) / n * n;
            }
        }
        Shape p = Shape.of(padded);
        return new DistTensor(spec.mesh(), globalShape, ShardingInterop.toAxe(spec, p), partialDims, p);
    }

    /** True when the layout covers a padded shape larger than the global shape (uneven sharding). */
    public boolean isPadded() {
        return !paddedShape.equals(globalShape);
    }

    public boolean isPartial() {
        return !partialDims.isEmpty();
    }

    /** Which rank holds which element at which local offset; validates the layout (see {@link Holdings}). */
    public Holdings holdings() {
        return Holdings.of(this);
    }

    @Override
    public String toString() {
        return layout + (isPartial() ? " partial over mesh dims " + partialDims : "") + " for " + globalShape
                + (isPadded() ? " padded to " + paddedShape : "") + " on " + mesh;
    }
}
