package org.axe4j.mesh;

import java.util.List;

/** Local copies into the destination buffer: for every pair, {@code dst[pair.to] = buffer(from)[pair.from]}. */
public record Copy(String from, List<BoxPair> pairs) {
    public Copy {
        pairs = List.copyOf(pairs);
    }

    public long elements() {
        return pairs.stream().mapToLong(p -> p.from().size()).sum();
    }
}
