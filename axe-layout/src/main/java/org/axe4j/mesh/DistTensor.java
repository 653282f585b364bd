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
public record DistTensor(DeviceMesh mesh, Shape globalShape, Layout layout, List<Integer> partialDims) {
    public DistTensor {
        partialDims = List.copyOf(new TreeSet<>(partialDims));
        if (!layout.admits(globalShape)) {
            throw new AxeException(AxeException.Kind.INVALID, "distributed tensor: layout " + layout + " (size "
                    + layout.size() + ") does not admit global shape " + globalShape + " (size " + globalShape.size() + ")");
        }
        for (int j : partialDims) {
            if (j < 0 || j >= mesh.rank()) {
                throw new AxeException(AxeException.Kind.INVALID, "distributed tensor: partial mesh dimension " + j
                        + " is outside mesh " + mesh);
            }
        }
    }

    public static DistTensor of(DeviceMesh mesh, Shape globalShape, Layout layout) {
        return new DistTensor(mesh, globalShape, layout, List.of());
    }

    /**
     * The tensor that DTensor placements describe; {@code partialDims} must be placed {@code Replicate()} in
     * {@code spec} (a partial mesh dimension neither splits nor copies: its ranks hold summands).
     */
    public static DistTensor fromSpec(ShardingSpec spec, Shape globalShape, List<Integer> partialDims) {
        return new DistTensor(spec.mesh(), globalShape, ShardingInterop.toAxe(spec, globalShape), partialDims);
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
        return layout + (isPartial() ? " partial over mesh dims " + partialDims : "") + " for " + globalShape + " on "
                + mesh;
    }
}
