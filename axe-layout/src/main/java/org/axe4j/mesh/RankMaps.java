package org.axe4j.mesh;

import java.util.List;

/**
 * One rank's buffers: source and destination buffer sizes (the span of the offsets the layout uses, holes
 * included), and which local offsets hold which global elements (logical row-major flat indices, padding left
 * out) as box pairs {@code (local box, global box)}. {@code naiveSrc} is what the rank contributes to the naive
 * gather-to-rank-0 baseline: each element's lowest-rank holder, or every member of that holder's partial group.
 */
public record RankMaps(long srcSize, long dstSize, List<BoxPair> srcGlobal, List<BoxPair> dstGlobal,
        List<BoxPair> naiveSrc) {
    public RankMaps {
        srcGlobal = List.copyOf(srcGlobal);
        dstGlobal = List.copyOf(dstGlobal);
        naiveSrc = List.copyOf(naiveSrc);
    }
}
