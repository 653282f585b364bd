package org.axe4j.layout.interop;

import java.util.List;
import org.axe4j.layout.AxeException;

/**
 * A distributed tensor's sharding: one {@link Placement} per dimension of a {@link DeviceMesh}, as in
 * PyTorch DTensor. Text form of the placements: {@code [Shard(0), Replicate()]}.
 */
public record ShardingSpec(DeviceMesh mesh, List<Placement> placements) {
    public ShardingSpec {
        placements = List.copyOf(placements);
        if (placements.size() != mesh.rank()) {
            throw new AxeException(AxeException.Kind.INVALID, "sharding spec " + placements + " has "
                    + placements.size() + " placements but mesh " + mesh + " has " + mesh.rank() + " dimensions");
        }
    }

    /** Reads the placements of {@code mesh} from {@code [Shard(0), Replicate()]}. */
    public static ShardingSpec parse(DeviceMesh mesh, String placements) {
        return new ShardingSpec(mesh, Placement.parseList(placements));
    }

    public static ShardingSpec of(DeviceMesh mesh, Placement... placements) {
        return new ShardingSpec(mesh, List.of(placements));
    }

    /** {@code [Shard(0), Replicate()]}. */
    public String placementsText() {
        return Placement.text(placements);
    }

    /** {@code [Shard(0), Replicate()] on (2,2):(2@gpuid,1@gpuid)}. */
    @Override
    public String toString() {
        return placementsText() + " on " + mesh;
    }
}
