package org.axe4j.layout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * {@link TileOf#outer} answers without rebuilding {@code A (x) B} when neither layout has replicas (the proof is in
 * the code). Here every such answer is put through the rebuild check it skips and through the definition by
 * enumeration, on tiles and near-tiles (a direct sum, another factor, a stride moved, two iters swapped, the offset
 * moved) whose replicas are dropped.
 */
class TileOfShortcutTest {
    @Test
    void replicaFreeAnswersPassTheRebuildCheckAndTheEnumeration() {
        int[] counts = new int[2]; // found, none
        Map<String, int[]> byKind = new TreeMap<>();
        Property.forAll("a replica-free outer(L, B) rebuilds L, checked and by enumeration", r -> {
            TileOfTest.Question q = TileOfTest.question(r);
            Layout l = q.l().withReplica(List.of());
            Layout b = TileOracle.rewrite(r, q.inner().withReplica(List.of()));
            Result<Layout> m = TileOf.outer(l, q.t(), b, q.tb());
            if (m.isPresent()) {
                Layout found = m.get();
                assertEquals(Result.of(found), TileOf.verified(l, Tile.tile(found, q.ta(), b, q.tb()), found),
                        q.kind() + ": " + found + " fails the rebuild check for " + l + " over " + b);
                assertEquals(Oracle.table(l), TileOracle.expected(found, q.ta(), b, q.tb(), true),
                        q.kind() + ": " + found + " does not rebuild " + l + " over " + b);
            } else {
                assertTrue(TileOracle.outerExists(l, q.t(), b, q.tb()) != TileOracle.Verdict.EXISTS,
                        q.kind() + ": " + l + " over " + b + " has an outer by enumeration, but: " + m.reason());
            }
            counts[m.isPresent() ? 0 : 1]++;
            byKind.computeIfAbsent(q.kind(), k -> new int[2])[m.isPresent() ? 0 : 1]++;
        });
        System.out.printf("replica-free tile-of outer: %d found, %d none%n", counts[0], counts[1]);
        byKind.forEach((kind, fn) -> System.out.printf("  %-14s found %5d  none %5d%n", kind, fn[0], fn[1]));
        // Both answers must be common, and the near-tiles must reach the shortcut too, or the checks prove little.
        assertTrue(counts[0] > Property.CASES / 5 && counts[1] > Property.CASES / 10, java.util.Arrays.toString(counts));
    }
}
