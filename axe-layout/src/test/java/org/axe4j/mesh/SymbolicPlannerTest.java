package org.axe4j.mesh;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Random;
import org.axe4j.layout.AxeException;
import org.junit.jupiter.api.Test;

/** Named redistributions: the lower bound where the element-wise planner missed it, uneven shards, scale. */
class SymbolicPlannerTest {
    private static String request(String mesh, String shape, String src, String dst) {
        return "{\"mesh\": {\"shape\": " + mesh + "}, \"global_shape\": " + shape + ", \"element_bytes\": 4, \"src\": "
                + src + ", \"dst\": " + dst + "}";
    }

    private static String pl(String placements) {
        return "{\"placements\": \"" + placements + "\"}";
    }

    private static Plan both(String req, long symbolicBytes, long elementBytes) {
        Plan plan = MeshRequest.plan(req);
        assertEquals(Plan.SYMBOLIC, plan.planner());
        assertEquals(symbolicBytes, plan.bytesTotal(), plan::explain);
        assertEquals(symbolicBytes, plan.minimumBytes(), plan::explain);
        assertTrue(plan.atMinimum());
        Plan oracle = ElementPlanner.plan(plan.src(), plan.dst(), plan.elementBytes());
        assertEquals(elementBytes, oracle.bytesTotal(), oracle::explain);
        PlannerTest.checkDelivers(plan, new Random(7), req);
        return plan;
    }

    /** 2x4 [P,R] -> [R,S(1)]: slice before reducing, reduce in the column that needs it, forward. */
    @Test
    void partialReplicatedToShardReducesOnlyWhereNeeded() {
        Plan plan = both(request("[2, 4]", "[16, 24]", pl("[Partial(), Replicate()]"), pl("[Replicate(), Shard(1)]")),
                3_072, 12_288);
        assertEquals("reduce_scatter", plan.steps().get(0).kindText());
        assertEquals(List.of(0), plan.steps().get(0).meshDims());
    }

    /** 3x2 [R,P] -> [S(0),S(1)]: each element reduced once, in the group holding its needer. */
    @Test
    void replicatedPartialToShardsReducesEachElementOnce() {
        both(request("[3, 2]", "[12, 24]", pl("[Replicate(), Partial()]"), pl("[Shard(0), Shard(1)]")), 1_152, 3_456);
    }

    /** Data replicated on ranks {0, 1}, needed on {2, 3}: both holders send, half each. */
    @Test
    void replicatedHoldersShareTheSending() {
        Plan plan = both(request("[4]", "[256]", "{\"layout\": \"S[256:1] + R[2:1@gpuid]\"}",
                "{\"layout\": \"S[256:1] + R[2:1@gpuid] + 2@gpuid\"}"), 2_048, 2_048);
        long[] sent = new long[4];
        for (int r = 0; r < 4; r++) {
            sent[r] = plan.rankSteps().get(r).get(0).sendSize() * 4;
        }
        assertEquals("[1024, 1024, 0, 0]", java.util.Arrays.toString(sent), plan::explain);
    }

    /**
     * Cases the element-wise planner left above the bound: copies of a partial group over another mesh dim (each
     * copy all-reduced on its own), and a destination held by one rank of the group.
     */
    @Test
    void partialSourcesReachTheBoundAndShareTheWork() {
        Plan copies = both(request("[4, 2]", "[16, 8]", pl("[Partial(), Replicate()]"), pl("[Replicate(), Replicate()]")),
                5_120, 6_144);
        // both column groups reduce half of the tensor
        assertTrue(copies.bytesReceived(0, 0) > 0 && copies.bytesReceived(1, 0) > 0, copies::explain);
        both(request("[4]", "[16, 8]", pl("[Partial()]"), "{\"placements\": \"[Replicate()]\", \"held_at\": [[0, 0]]}"),
                1_536, 1_920);
    }

    /** The plan's size depends on cells and ranks, not on the tensor: 1024^2 and 16384^2 plans are alike. */
    @Test
    void planSizeDoesNotGrowWithTheTensor() {
        for (String places : List.of("[Shard(0)]|[Shard(1)]", "[Partial()]|[Shard(0)]", "[Shard(1)]|[Replicate()]")) {
            String[] sd = places.split("\\|");
            int small = PlanJson.write(MeshRequest.plan(request("[8]", "[1024, 1024]", pl(sd[0]), pl(sd[1])))).length();
            int big = PlanJson.write(MeshRequest.plan(request("[8]", "[16384, 16384]", pl(sd[0]), pl(sd[1])))).length();
            assertTrue(big < 1.3 * small, places + ": " + small + " vs " + big + " bytes");
        }
    }

    /** 50,257 rows over 4 ranks, padded like torch.chunk: blocks of 12,565 rows, the last one 12,562. */
    @Test
    void unevenRowsArePlanned() {
        Plan plan = MeshRequest.plan(request("[4]", "[50257, 768]", pl("[Shard(0)]"), pl("[Replicate()]")));
        assertEquals(Plan.SYMBOLIC, plan.planner());
        assertEquals(List.of(50_260L, 768L), plan.src().paddedShape().dims());
        assertEquals(12_565L * 768, plan.srcSize(0));
        assertEquals(12_562L * 768, plan.srcSize(3));
        assertEquals(3L * 50_257 * 768 * 4, plan.bytesTotal());
        assertTrue(plan.atMinimum());
        assertTrue(plan.explain().contains("padded shapes: src (50260,768)"), plan.explain());
        String shards = MeshRequest.localShards("{\"mesh\": {\"shape\": [4]}, \"global_shape\": [50257, 768],"
                + " \"tensor\": {\"placements\": \"[Shard(0)]\"}}");
        assertTrue(shards.contains("\"region\":\"[37695:50257, 0:768]\""), shards);
        // the same, as an explicit padded layout
        Plan explicit = MeshRequest.plan(request("[4]", "[50257, 768]",
                "{\"layout\": \"S[(4,12565,768):(1@gpuid,768,1)]\", \"padded_shape\": [50260, 768]}",
                pl("[Shard(1)]")));
        assertTrue(explicit.atMinimum(), explicit::explain);
        assertEquals(3L * 50_257 * 192 * 4, explicit.bytesTotal());
    }

    /**
     * Radices that do not chain ([2,3,4] against [2,2,6]): the range they split differently is one composite digit,
     * enumerated; still symbolic and at the bound. Past 2^16 composite values: element by element when small
     * (at most 2^26 elements), else a clear error.
     */
    @Test
    void radicesThatDoNotChainAreEnumeratedFallBackOrAreRefused() {
        Plan plan = MeshRequest.plan(request("[2]", "[24]", "{\"layout\": \"S[(2,3,4):(1@gpuid,4,1)]\"}",
                "{\"layout\": \"S[(2,2,6):(1@gpuid,6,1)]\"}"));
        assertEquals(Plan.SYMBOLIC, plan.planner());
        PlannerTest.checkDelivers(plan, new Random(3), "composite");
        long m = 1L << 15;
        Plan fallback = MeshRequest.plan(request("[2]", "[" + 24 * m + "]",
                "{\"layout\": \"S[(2,3," + 4 * m + "):(1@gpuid," + 4 * m + ",1)]\"}",
                "{\"layout\": \"S[(2,2," + 6 * m + "):(1@gpuid," + 6 * m + ",1)]\"}"));
        assertEquals(Plan.ELEMENT, fallback.planner());
        assertTrue(fallback.explain().contains("planner: element (the source radix"), fallback.explain());
        assertTrue(fallback.atMinimum());
        long big = 1L << 22;
        AxeException e = assertThrows(AxeException.class, () -> MeshRequest.plan(request("[2]", "[" + 24 * big + "]",
                "{\"layout\": \"S[(2,3," + 4 * big + "):(1@gpuid," + 4 * big + ",1)]\"}",
                "{\"layout\": \"S[(2,2," + 6 * big + "):(1@gpuid," + 6 * big + ",1)]\"}")));
        assertTrue(e.getMessage().contains("no common refinement") && e.getMessage().contains("2^26"), e.getMessage());
    }

    /**
     * Uneven blocks that do not nest (rows over 4 ranks against rows over 2): the dimension is one composite
     * digit, cut into segments between the block boundaries; planned at the bound, the plan independent of the rows.
     */
    @Test
    void unevenBlocksThatDoNotNestArePlanned() {
        String small = request("[2, 2]", "[9, 4]", pl("[Shard(0), Shard(0)]"), pl("[Shard(0), Replicate()]"));
        Plan plan = MeshRequest.plan(small);
        assertEquals(List.of(12L, 4L), plan.src().paddedShape().dims());
        assertEquals(List.of(10L, 4L), plan.dst().paddedShape().dims());
        PlannerTest.checkDelivers(plan, new Random(5), small);
        assertEquals(BruteForce.minimumElements(plan.src(), plan.dst()) * 4, plan.bytesTotal());
        long t0 = System.nanoTime();
        Plan rows = MeshRequest.plan(request("[2, 2]", "[50257, 768]", pl("[Shard(0), Shard(0)]"),
                pl("[Shard(0), Replicate()]")));
        String json = PlanJson.write(rows);
        System.out.printf("50257x768 rows over 4 -> over 2 (blocks do not nest): %.0f ms, plan JSON %d bytes%n",
                (System.nanoTime() - t0) / 1e6, json.length());
        assertTrue(rows.atMinimum());
        assertEquals(Plan.SYMBOLIC, rows.planner());
        assertTrue(json.length() < 100_000, "plan JSON " + json.length() + " bytes");
    }

    /** Layout errors are found per cell, with the element and rank named. */
    @Test
    void badLayoutsAreRejectedByName() {
        String mesh = "{\"mesh\": {\"shape\": [4]}, \"global_shape\": [8], \"tensor\": ";
        String outside = assertThrows(AxeException.class, () -> MeshRequest.localShards(
                "{\"mesh\": {\"shape\": [4]}, \"global_shape\": [16], \"tensor\": {\"layout\": \"S[(8,2):(1@gpuid,1)]\"}}"))
                .getMessage();
        assertTrue(outside.contains("outside the mesh") && outside.contains("[8]"), outside);
        String overlap = assertThrows(AxeException.class, () -> MeshRequest.localShards(mesh
                + "{\"layout\": \"S[(4,2):(1@gpuid,0)]\"}}")).getMessage();
        assertTrue(overlap.contains("overlapping data"), overlap);
        String partial = assertThrows(AxeException.class, () -> MeshRequest.plan(request("[4]", "[8]",
                "{\"layout\": \"S[(4,2):(1@gpuid,1)]\", \"partial_dims\": [0]}", pl("[Replicate()]")))).getMessage();
        assertTrue(partial.contains("partial group"), partial);
        String negative = assertThrows(AxeException.class, () -> MeshRequest.localShards(mesh
                + "{\"layout\": \"S[(4,2):(1@gpuid,-1)]\"}}")).getMessage();
        assertTrue(negative.contains("local offset m=-1"), negative);
        long big = 1L << 33;
        String unproven = assertThrows(AxeException.class, () -> MeshRequest.localShards(
                "{\"mesh\": {\"shape\": [2]}, \"global_shape\": [" + 2 * big + "], \"tensor\": {\"layout\": \"S[(2,"
                        + big + "):(1@gpuid,1)] + R[2:1]\"}}")).getMessage();
        assertTrue(unproven.contains("cannot prove"), unproven);
    }

    /** More than 2^22 cells is refused with both layouts named (here a device digit of stride 0). */
    @Test
    void tooManyCellsAreRefusedByName() {
        String e = assertThrows(AxeException.class, () -> MeshRequest.plan(request("[2]", "[8388608]",
                "{\"layout\": \"S[8388608:0@gpuid]\"}", "{\"layout\": \"S[8388608:1] + R[2:1@gpuid]\"}")))
                .getMessage();
        assertTrue(e.contains("cells") && e.contains("S[8388608:0@gpuid]") && e.contains("2^22"), e);
    }

    /** A destination holding two copies on each rank (a replica on m) gets both written, from one arrival. */
    @Test
    void memoryReplicasAreAllWritten() {
        Plan plan = both(request("[2]", "[16]", pl("[Shard(0)]"), "{\"layout\": \"S[16:1] + R[(2,2):(1@gpuid,16)]\"}"),
                64, 64);
        assertEquals(32, plan.dstSize(0));
    }

    /** Plan size and time do not grow with the tensor: 16384^2 and 2^34 elements, no enumeration. */
    @Test
    void largeTensorsArePlannedWithoutEnumeration() {
        long t0 = System.nanoTime();
        Plan plan = MeshRequest.plan(request("[8]", "[16384, 16384]", pl("[Shard(0)]"), pl("[Shard(1)]")));
        String json = PlanJson.write(plan);
        double ms = (System.nanoTime() - t0) / 1e6;
        System.out.printf("16384^2 float32 S(0)->S(1) on 8 ranks: planned and written in %.1f ms, plan JSON %d bytes%n",
                ms, json.length());
        assertTrue(json.length() < 1_000_000, "plan JSON " + json.length() + " bytes");
        assertEquals(7L * 16384 * 16384 / 8 * 4, plan.bytesTotal());
        for (String dst : List.of("[Shard(1)]", "[Replicate()]")) {
            for (String src : List.of("[Shard(0)]", "[Partial()]")) {
                long s0 = System.nanoTime();
                Plan huge = MeshRequest.plan(request("[8]", "[131072, 131072]", pl(src), pl(dst)));
                String text = PlanJson.write(huge);
                System.out.printf("2^34 elements %s->%s on 8 ranks: %.1f ms, plan JSON %d bytes, %d bytes moved%n", src,
                        dst, (System.nanoTime() - s0) / 1e6, text.length(), huge.bytesTotal());
                assertTrue(text.length() < 1_000_000, "plan JSON " + text.length() + " bytes");
                assertTrue(huge.atMinimum());
                assertEquals(src.contains("Shard") ? 1L << 31 : 1L << 34, huge.srcSize(0));
            }
        }
        Plan cyclic = MeshRequest.plan(request("[8]", "[1048576]", "{\"layout\": \"S[(131072,8):(1,1@gpuid)]\"}",
                pl("[Shard(0)]")));
        String text = PlanJson.write(cyclic);
        System.out.printf("1M-element cyclic -> block on 8 ranks: plan JSON %d bytes%n", text.length());
        assertTrue(text.length() < 200_000, "plan JSON " + text.length() + " bytes");
        assertTrue(cyclic.atMinimum());
    }
}
