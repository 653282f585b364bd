package org.axe4j.layout;

import java.util.List;

/**
 * A layout whose shard is split into consecutive blocks, one per dimension of a shape:
 * block {@code k} is {@code shard[seps[k] .. seps[k+1])} and its extents multiply to {@code S_k}.
 */
public record Grouped(Layout layout, Shape shape, List<Integer> seps) {
    public Grouped {
        seps = List.copyOf(seps);
        if (seps.size() != shape.rank() + 1 || seps.get(0) != 0 || seps.get(seps.size() - 1) != layout.shard().size()) {
            throw AxeException.invalid("block boundaries %s do not split layout %s into %d blocks",
                    seps, layout, shape.rank());
        }
        for (int k = 0; k < shape.rank(); k++) {
            long product = 1;
            for (Iter it : block(layout, seps, k)) {
                product *= it.extent();
            }
            if (product != shape.dim(k)) {
                throw AxeException.invalid("block %d of %s has extent %d, not shape %s dimension %d",
                        k, layout, product, shape, shape.dim(k));
            }
        }
    }

    private static List<Iter> block(Layout layout, List<Integer> seps, int k) {
        return layout.shard().subList(seps.get(k), seps.get(k + 1));
    }

    /** The iters of dimension {@code k}, outermost first. */
    public List<Iter> block(int k) {
        return block(layout, seps, k);
    }

    /** Dimension {@code k} alone: its block as a shard, no replicas, no offset. */
    public Layout blockLayout(int k) {
        return Layout.of(block(k), List.of(), java.util.Map.of());
    }
}
