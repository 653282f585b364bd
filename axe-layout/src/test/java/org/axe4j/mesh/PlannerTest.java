package org.axe4j.mesh;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Random;
import org.axe4j.layout.AxeException;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Property;
import org.axe4j.layout.Shape;
import org.axe4j.layout.interop.DeviceMesh;
import org.junit.jupiter.api.Test;

class PlannerTest {
    static final int CASES = Integer.getInteger("axe4j.meshCases", 400);

    /** Holdings agree with the brute-force oracle on every rank and offset, holes included. */
    @Test
    void holdingsMatchEnumeration() {
        Property.forAll("holdings = enumeration", CASES, rnd -> {
            String req = RandomRedistributions.request(rnd);
            for (String key : List.of("src", "dst")) {
                DistTensor t = MeshRequest.tensor(MeshRequest.parse(req), key);
                Holdings h = t.holdings();
                Map<Integer, Map<Integer, Integer>> oracle = BruteForce.holdings(t);
                for (int r = 0; r < h.rankCount(); r++) {
                    Map<Integer, Integer> want = oracle.getOrDefault(r, Map.of());
                    int span = want.keySet().stream().mapToInt(o -> o + 1).max().orElse(0);
                    assertEquals(span, h.localSize(r), () -> "buffer size of rank in " + req);
                    for (int o = 0; o < span; o++) {
                        assertEquals(want.getOrDefault(o, -1), h.globalAt(r, o), "rank " + r + " offset " + o + " of " + t);
                    }
                }
            }
        });
    }

    /**
     * The symbolic plan delivers exactly what the destination layout says (simulated box by box), moves exactly
     * the brute-force lower bound (every class: replicated, sharded, partial, uneven), and never more than the
     * element-wise oracle, which also delivers exactly.
     */
    @Test
    void symbolicPlansDeliverAtTheMinimum() {
        Property.forAll("symbolic plan delivers at the minimum", CASES, rnd -> {
            String req = RandomRedistributions.request(rnd);
            Plan plan = symbolicAtTheMinimum(req, rnd);
            Plan oracle = ElementPlanner.plan(plan.src(), plan.dst(), plan.elementBytes());
            checkDelivers(oracle, rnd, req);
            assertEquals(oracle.minimumBytes(), plan.minimumBytes(), req);
            assertTrue(plan.bytesTotal() <= oracle.bytesTotal(), () -> "above the element-wise plan: " + req);
        });
    }

    /** The symbolic plan of {@code req}, checked to deliver exactly and to move the brute-force lower bound. */
    private static Plan symbolicAtTheMinimum(String req, Random rnd) {
        Plan plan = MeshRequest.plan(req);
        assertEquals(Plan.SYMBOLIC, plan.planner(), req);
        checkDelivers(plan, rnd, req);
        assertEquals(BruteForce.minimumElements(plan.src(), plan.dst()) * plan.elementBytes(), plan.bytesTotal(),
                () -> "not at the minimum:\n" + plan.explain() + "for " + req);
        return plan;
    }

    /**
     * Explicit layouts beyond placements (cyclic and block-cyclic device iters, buffers with gaps, replicas,
     * offsets, partial sources; radices that chain or not): planned symbolically, delivered exactly, at the
     * minimum, never above the element-wise oracle.
     */
    @Test
    void explicitLayoutsDeliverAtTheMinimum() {
        Property.forAll("explicit layouts deliver at the minimum", CASES, rnd -> {
            String req = RandomLayouts.request(rnd);
            Plan plan = symbolicAtTheMinimum(req, rnd);
            Plan oracle = ElementPlanner.plan(plan.src(), plan.dst(), plan.elementBytes());
            assertTrue(plan.bytesTotal() <= oracle.bytesTotal(), () -> "above the element-wise plan: " + req);
        });
    }

    /**
     * Uneven (padded) shards, partial or not, blocks nesting or not: planned symbolically, delivered exactly, at
     * the brute-force minimum.
     */
    @Test
    void unevenPlansDeliverAtTheMinimum() {
        Property.forAll("uneven plan delivers at the minimum", CASES, rnd -> {
            String req = RandomRedistributions.request(rnd, true);
            Plan plan = MeshRequest.plan(req);
            assertEquals(Plan.SYMBOLIC, plan.planner(), req);
            checkDelivers(plan, rnd, req);
            assertEquals(BruteForce.minimumElements(plan.src(), plan.dst()) * plan.elementBytes(), plan.bytesTotal(),
                    () -> "not at the minimum:\n" + plan.explain() + "for " + req);
        });
    }

    /** The symbolic local shards (sizes, element counts, regions) agree with the enumerated ones. */
    @Test
    void symbolicLocalShardsMatchEnumeration() {
        Property.forAll("local shards = enumeration", CASES, rnd -> {
            String req = RandomRedistributions.request(rnd);
            DistTensor t = MeshRequest.tensor(MeshRequest.parse(req), rnd.nextBoolean() ? "src" : "dst");
            List<LocalShard> sym = MeshRequest.localShards(t);
            List<LocalShard> enumerated = LocalShard.of(t.holdings());
            for (int r = 0; r < sym.size(); r++) {
                assertEquals(enumerated.get(r).bufferSize(), sym.get(r).bufferSize(), req);
                assertEquals(enumerated.get(r).elements(), sym.get(r).elements(), req);
                assertEquals(enumerated.get(r).regionText(), sym.get(r).regionText(), req);
            }
        });
    }

    static void checkDelivers(Plan plan, Random rnd, String what) {
        DistTensor src = plan.src();
        int total = (int) src.globalShape().size();
        double[] global = new double[total];
        for (int x = 0; x < total; x++) {
            global[x] = rnd.nextInt(1000) - 500;
        }
        int n = plan.rankCount();
        long p = 1;
        for (int j : src.partialDims()) {
            p *= src.mesh().dim(j);
        }
        // partial summands: member k < p-1 holds s_k(x), the last holds global - sum of the others
        double[][] summand = new double[(int) p][total];
        for (int x = 0; x < total; x++) {
            double rest = global[x];
            for (int k = 0; k < p - 1; k++) {
                summand[k][x] = rnd.nextInt(100) - 50;
                rest -= summand[k][x];
            }
            summand[(int) p - 1][x] = rest;
        }
        Map<Integer, Map<Integer, Integer>> srcOracle = BruteForce.holdings(src);
        double[][] in = new double[n][];
        for (int r = 0; r < n; r++) {
            in[r] = new double[(int) plan.srcSize(r)];
            int k = BruteForce.partialIndex(src, r);
            for (var e : srcOracle.getOrDefault(r, Map.of()).entrySet()) {
                in[r][e.getKey()] = summand[k][e.getValue()];
            }
        }
        Simulator sim = Simulator.run(plan, in);
        Map<Integer, Map<Integer, Integer>> dstOracle = BruteForce.holdings(plan.dst());
        for (int r = 0; r < n; r++) {
            for (var e : dstOracle.getOrDefault(r, Map.of()).entrySet()) {
                int rr = r;
                assertEquals(global[e.getValue()], sim.dst[r][e.getKey()], () -> "rank " + rr + " offset " + e.getKey()
                        + " element " + e.getValue() + " after\n" + plan.explain() + "for " + what);
            }
            int rr = r;
            assertEquals(sim.received[r] * plan.elementBytes(), plan.bytesReceived(r), () -> "bytes of rank " + rr + " in\n"
                    + plan.explain());
            checkGlobalMaps(plan, r, srcOracle.getOrDefault(r, Map.of()), dstOracle.getOrDefault(r, Map.of()), what);
        }
        assertTrue(plan.bytesTotal() >= plan.minimumBytes(), () -> "below the minimum?\n" + plan.explain());
        if (!src.isPartial()) {
            assertEquals(plan.minimumBytes(), plan.bytesTotal(), () -> "a non-partial plan moves the minimum\n" + plan.explain());
        }
    }

    /** src_global / dst_global list exactly the oracle's (offset, element) pairs of the rank. */
    private static void checkGlobalMaps(Plan plan, int r, Map<Integer, Integer> src, Map<Integer, Integer> dst, String what) {
        for (int l = 0; l < 2; l++) {
            Map<Integer, Integer> got = new java.util.HashMap<>();
            for (BoxPair pair : l == 0 ? plan.maps().get(r).srcGlobal() : plan.maps().get(r).dstGlobal()) {
                long[] at = pair.from().offsets();
                long[] x = pair.to().offsets();
                for (int i = 0; i < at.length; i++) {
                    got.put((int) at[i], (int) x[i]);
                }
            }
            assertEquals(l == 0 ? src : dst, got, "global map " + l + " of rank " + r + " for " + what);
        }
    }

    private static Plan plan(String mesh, String shape, String src, String dst) {
        return MeshRequest.plan("{\"mesh\": {\"shape\": " + mesh + "}, \"global_shape\": " + shape
                + ", \"element_bytes\": 4, \"src\": " + src + ", \"dst\": " + dst + "}");
    }

    private static String pl(String placements) {
        return "{\"placements\": \"" + placements + "\"}";
    }

    @Test
    void eachRedistributionKindPicksItsCollective() {
        Plan gather = plan("[4]", "[16, 8]", pl("[Shard(0)]"), pl("[Replicate()]"));
        assertEquals("all_gather", gather.steps().get(0).kindText());
        assertEquals(4L * 16 * 8 * 3 / 4 * 4, gather.bytesTotal());

        Plan slice = plan("[4]", "[16, 8]", pl("[Replicate()]"), pl("[Shard(1)]"));
        assertEquals(0, slice.steps().size());
        assertEquals(0, slice.bytesTotal());

        Plan a2a = plan("[4]", "[16, 8]", pl("[Shard(0)]"), pl("[Shard(1)]"));
        assertEquals("all_to_all", a2a.steps().get(0).kindText());
        assertEquals(16 * 8 * 3 / 4 * 4, a2a.bytesTotal());

        Plan rs = plan("[4]", "[16, 8]", pl("[Partial()]"), pl("[Shard(0)]"));
        assertEquals("reduce_scatter", rs.steps().get(0).kindText());
        assertEquals(1, rs.steps().size());
        assertEquals(rs.minimumBytes(), rs.bytesTotal());

        // reduce-scatter, then forward the reduced blocks (an all-gather): the all-reduce's bytes, in two steps
        Plan ar = plan("[4]", "[16, 8]", pl("[Partial()]"), pl("[Replicate()]"));
        assertEquals("reduce_scatter", ar.steps().get(0).kindText());
        assertEquals("all_gather", ar.steps().get(1).kindText());
        assertEquals(ar.minimumBytes(), ar.bytesTotal());

        Plan bcast = plan("[4]", "[16, 8]", "{\"placements\": \"[Replicate()]\", \"held_at\": [[0, 2]]}",
                pl("[Replicate()]"));
        assertEquals("broadcast", bcast.steps().get(0).kindText());
        assertEquals(2, bcast.rankSteps().get(0).get(0).root());

        // 2-D, mixed: gather along mesh dim 0 only; the tp dimension keeps its shards
        Plan mixed = plan("[2, 2]", "[8, 8]", pl("[Shard(0), Shard(1)]"), pl("[Replicate(), Shard(1)]"));
        assertEquals("all_gather", mixed.steps().get(0).kindText());
        assertEquals(List.of(0), mixed.steps().get(0).meshDims());
        assertEquals(2, mixed.rankSteps().get(0).get(0).group().length);

        Plan partial2d = plan("[2, 2]", "[8, 8]", pl("[Partial(), Shard(0)]"), pl("[Shard(1), Shard(0)]"));
        assertEquals("reduce_scatter", partial2d.steps().get(0).kindText());
        assertEquals(1, partial2d.steps().size());
        assertTrue(partial2d.explain().contains("reduce_scatter over mesh dims [0] (groups of 2)"), partial2d.explain());
    }

    @Test
    void localShardsNameShapeLayoutAndRegion() {
        String req = "{\"mesh\": {\"shape\": [2, 2]}, \"global_shape\": [64, 128],"
                + " \"tensor\": {\"placements\": \"[Shard(1), Shard(0)]\"}}";
        String out = MeshRequest.localShards(req);
        assertTrue(out.contains("\"local_shape\":[32,64]"), out);
        assertTrue(out.contains("\"local_layout\":\"S[(32,64):(64,1)]\""), out);
        // rank 1 = mesh (0, 1): rows 32..64 (dim 0 split by mesh dim 1), cols 0..64
        List<LocalShard> shards = MeshRequest.localShards(MeshRequest.tensor(MeshRequest.parse(req), "tensor"));
        assertEquals("[32:64, 0:64]", shards.get(1).regionText());
        assertEquals("[0:32, 64:128]", shards.get(2).regionText());
    }

    @Test
    void badLayoutsAreRejectedByName() {
        DeviceMesh mesh = DeviceMesh.of(4);
        AxeException overlap = assertThrows(AxeException.class, () -> DistTensor.of(mesh, Shape.of(8),
                Layout.parse("S[(4,2):(1@gpuid,0)]")).holdings());
        assertTrue(overlap.getMessage().contains("overlapping data") && overlap.getMessage().contains("rank 0"),
                overlap.getMessage());
        AxeException outside = assertThrows(AxeException.class, () -> DistTensor.of(mesh, Shape.of(16),
                Layout.parse("S[(8,2):(1@gpuid,1)]")).holdings());
        assertTrue(outside.getMessage().contains("outside the mesh") && outside.getMessage().contains("[8]"),
                outside.getMessage());
        AxeException axis = assertThrows(AxeException.class, () -> DistTensor.of(mesh, Shape.of(8),
                Layout.parse("S[(4,2):(1@tp,1)]")).holdings());
        assertTrue(axis.getMessage().contains("axis tp"), axis.getMessage());
        Layout shifted = Layout.parse("S[(4,2):(1@gpuid,1)]").withOffset(Map.of(org.axe4j.layout.Axis.M, -1L));
        AxeException negative = assertThrows(AxeException.class, () -> DistTensor.of(mesh, Shape.of(8), shifted)
                .holdings());
        assertTrue(negative.getMessage().contains("local offset m=-1"), negative.getMessage());
        AxeException partial = assertThrows(AxeException.class, () -> new DistTensor(mesh, Shape.of(8),
                Layout.parse("S[(4,2):(1@gpuid,1)]"), List.of(0)).holdings());
        assertTrue(partial.getMessage().contains("partial group"), partial.getMessage());
        AxeException shapes = assertThrows(AxeException.class, () -> plan("[4]", "[16, 8]", pl("[Shard(0)]"),
                "{\"placements\": \"[Partial()]\"}"));
        assertTrue(shapes.getMessage().contains("is partial"), shapes.getMessage());
    }

    @Test
    void requestNumbersAreExactAndByteCountsAreChecked() {
        String head = "{\"mesh\": {\"shape\": [2]}, \"global_shape\": [8], \"src\": " + pl("[Shard(0)]")
                + ", \"dst\": " + pl("[Replicate()]");
        // 2^32 + 4 once read as 4 (int truncation); 2.5 and 1e30 as 2 and a wrapped long.
        for (String bytes : List.of("4294967300", "2.5", "-1", "1e30")) {
            AxeException e = assertThrows(AxeException.class,
                    () -> MeshRequest.plan(head + ", \"element_bytes\": " + bytes + "}"), bytes);
            assertEquals(AxeException.Kind.INVALID, e.kind(), e.getMessage());
        }
        AxeException shape = assertThrows(AxeException.class, () -> MeshRequest.plan(head.replace("[8]", "[1e30]") + "}"));
        assertTrue(shape.getMessage().contains("global_shape must be a 64-bit integer"), shape.getMessage());
        Plan big = MeshRequest.plan(head + ", \"element_bytes\": 2147483647}");
        assertEquals(8L * 2147483647L, big.bytesTotal());
        assertEquals(big.bytesTotal(), big.minimumBytes());
    }
}
