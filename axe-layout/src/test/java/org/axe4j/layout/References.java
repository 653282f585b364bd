package org.axe4j.layout;

import java.util.List;
import java.util.TreeSet;

/**
 * The brute-force references of the algebra's tests, for tests outside this package (the command-line tool's
 * fuzz test): each decides by enumeration, never by the construction it checks.
 */
public final class References {
    private References() {}

    /** The table of {@code outer (x) inner} by definition ({@link TileOracle#expected}). */
    public static List<TreeSet<Point>> tile(Layout outer, Shape outerShape, Layout inner, Shape innerShape) {
        return TileOracle.expected(outer, outerShape, inner, innerShape, true);
    }

    /** Whether the shard of {@code l} is additively separable over {@code shape}: exactly when group succeeds. */
    public static boolean separable(Layout l, Shape shape) {
        return GroupTest.separable(l, shape);
    }

    /** Whether some layout equals {@code l} on {@code box}: exactly when slice succeeds (boxes up to 96 elements). */
    public static boolean sliceExists(Layout l, Shape shape, Region box) {
        return SliceTest.representable(SliceTest.restrictedShard(l, shape, box));
    }
}
