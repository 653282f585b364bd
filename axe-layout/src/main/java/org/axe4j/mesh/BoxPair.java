package org.axe4j.mesh;

import java.util.Arrays;

/** Two boxes of equal extents: element i of {@code from} corresponds to element i of {@code to}. */
public record BoxPair(Box from, Box to) {
    public BoxPair {
        if (!Arrays.equals(from.extents(), to.extents())) {
            throw new IllegalArgumentException("box pair extents differ: " + from + " and " + to);
        }
    }
}
