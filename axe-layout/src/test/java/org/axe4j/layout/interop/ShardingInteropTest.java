package org.axe4j.layout.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import java.util.TreeSet;
import org.axe4j.layout.AxeException;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Iter;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Oracle;
import org.axe4j.layout.Point;
import org.axe4j.layout.Property;
import org.axe4j.layout.Result;
import org.axe4j.layout.Shape;
import org.junit.jupiter.api.Test;

/** DTensor placements and Axe layouts: every element sits on exactly the devices DTensor says, at its local offset. */
class ShardingInteropTest {

    static DeviceMesh randomMesh(Random r) {
        int rank = 1 + r.nextInt(3);
        List<Long> shape = new ArrayList<>();
        List<Axis> axes = new ArrayList<>();
        String[] names = {"dp", "tp", "pp"};
        int style = r.nextInt(3); // all on gpuid, one axis each, or mixed
        for (int j = 0; j < rank; j++) {
            shape.add((long) (1 + r.nextInt(4)));
            axes.add(style == 0 ? DeviceMesh.GPUID : style == 1 ? Axis.of(names[j]) : Axis.of(names[r.nextInt(2)]));
        }
        return new DeviceMesh(shape, axes);
    }

    static ShardingSpec randomSpec(Random r, DeviceMesh mesh, int tensorRank) {
        List<Placement> p = new ArrayList<>();
        for (int j = 0; j < mesh.rank(); j++) {
            p.add(r.nextInt(3) == 0 ? new Placement.Replicate() : new Placement.Shard(r.nextInt(tensorRank)));
        }
        return new ShardingSpec(mesh, p);
    }

    /** A global shape every dimension of which divides evenly: (1..3) * (devices sharding it). */
    static Shape evenShape(Random r, ShardingSpec spec, int tensorRank) {
        long[] dims = new long[tensorRank];
        for (int d = 0; d < tensorRank; d++) {
            long n = 1;
            for (int j = 0; j < spec.mesh().rank(); j++) {
                if (spec.placements().get(j).equals(new Placement.Shard(d))) {
                    n *= spec.mesh().dim(j);
                }
            }
            dims[d] = n * (1 + r.nextInt(3));
        }
        return Shape.of(dims);
    }

    /**
     * DTensor's reading, computed directly: mesh dims sharding d split the current chunk of d one after the
     * other (mesh order); the device point is sum i_j * (product of later sizes on the same axis) @ axis_j.
     * Returns, per global flat index, the set of {device + m:local offset}.
     */
    static List<TreeSet<Point>> dtensorReference(ShardingSpec spec, Shape global) {
        DeviceMesh mesh = spec.mesh();
        int rank = global.rank();
        List<TreeSet<Point>> out = new ArrayList<>();
        for (long x = 0; x < global.size(); x++) {
            out.add(new TreeSet<>());
        }
        long[] meshShape = mesh.shape().stream().mapToLong(Long::longValue).toArray();
        for (long[] i : CuteGen.coordinates(meshShape)) {
            long[] start = new long[rank];
            long[] size = global.toArray();
            for (int j = 0; j < mesh.rank(); j++) {
                if (spec.placements().get(j) instanceof Placement.Shard s) {
                    size[s.dim()] /= meshShape[j];
                    start[s.dim()] += i[j] * size[s.dim()];
                }
            }
            TreeMap<Axis, Long> device = new TreeMap<>();
            for (int j = 0; j < mesh.rank(); j++) {
                long step = 1;
                for (int k = j + 1; k < mesh.rank(); k++) {
                    if (mesh.axes().get(k).equals(mesh.axes().get(j))) {
                        step *= meshShape[k];
                    }
                }
                device.merge(mesh.axes().get(j), i[j] * step, Long::sum);
            }
            for (long[] local : CuteGen.coordinates(size)) {
                long[] g = new long[rank];
                for (int d = 0; d < rank; d++) {
                    g[d] = start[d] + local[d];
                }
                TreeMap<Axis, Long> p = new TreeMap<>(device);
                p.put(Axis.M, Oracle.flat(size, local));
                out.get((int) Oracle.flat(global.toArray(), g)).add(new Point(p));
            }
        }
        return out;
    }

    @Test
    void everyElementIsOnTheDevicesDTensorSaysAtItsLocalRowMajorOffset() {
        Property.forAll("sharding toAxe = DTensor placement", seeded -> {
            Random random = new Random(seeded.nextLong() * 0x9E3779B97F4A7C15L);
            DeviceMesh mesh = randomMesh(random);
            int rank = 1 + random.nextInt(3);
            ShardingSpec spec = randomSpec(random, mesh, rank);
            Shape global = evenShape(random, spec, rank);
            Layout l = ShardingInterop.toAxe(spec, global);
            assertTrue(l.admits(global));
            assertEquals(dtensorReference(spec, global), Oracle.table(l), spec + " " + global + " -> " + l);
        });
    }

    @Test
    void fromAxeOfToAxeGivesTheSpecBack() {
        Property.forAll("sharding fromAxe(toAxe(spec))", seeded -> {
            Random random = new Random(seeded.nextLong() * 0x9E3779B97F4A7C15L);
            DeviceMesh mesh = randomMesh(random);
            int rank = 1 + random.nextInt(3);
            ShardingSpec spec = randomSpec(random, mesh, rank);
            Shape global = evenShape(random, spec, rank);
            Layout l = ShardingInterop.toAxe(spec, global);
            ShardingSpec back = ShardingInterop.tryFromAxe(l, global, mesh).orElseThrow();
            assertTrue(Oracle.sameMap(l, ShardingInterop.toAxe(back, global)), spec + " -> " + back);
            if (mesh.shape().stream().allMatch(n -> n > 1)) {
                assertEquals(spec, back);
            }
        });
    }

    @Test
    void fromAxeFindsASpecExactlyWhenOneReproducesTheLayout() {
        int[] accepted = {0};
        int[] refused = {0};
        Property.forAll("sharding fromAxe = brute-force search by enumeration", Math.max(100, Property.CASES / 10),
                seeded -> {
            Random random = new Random(seeded.nextLong() * 0x9E3779B97F4A7C15L);
            DeviceMesh mesh = randomMesh(random);
            int rank = 1 + random.nextInt(2);
            ShardingSpec spec = randomSpec(random, mesh, rank);
            Shape global = evenShape(random, spec, rank);
            Layout l = perturb(random, ShardingInterop.toAxe(spec, global));
            boolean expected = false;
            for (ShardingSpec c : allSpecs(mesh, rank)) {
                Layout t;
                try {
                    t = ShardingInterop.toAxe(c, global);
                } catch (AxeException uneven) {
                    continue;
                }
                expected |= Oracle.sameMap(l, t);
            }
            Result<ShardingSpec> got = ShardingInterop.tryFromAxe(l, global, mesh);
            assertEquals(expected, got.isPresent(), l + " over " + mesh + ": " + got);
            if (got.isPresent()) {
                accepted[0]++;
                assertTrue(Oracle.sameMap(l, ShardingInterop.toAxe(got.orElseThrow(), global)));
            } else {
                refused[0]++;
            }
        });
        assertTrue(accepted[0] > 10 && refused[0] > 10, accepted[0] + " accepted, " + refused[0] + " refused");
    }

    /** Sometimes unchanged; else one change: a stride, a swapped pair, a negated replica, an offset, a replica stride. */
    private static Layout perturb(Random r, Layout l) {
        List<Iter> d = new ArrayList<>(l.shard());
        List<Iter> rep = new ArrayList<>(l.replica());
        TreeMap<Axis, Long> offset = new TreeMap<>();
        switch (r.nextInt(6)) {
            case 0 -> { }
            case 1 -> {
                int k = r.nextInt(d.size());
                d.set(k, d.get(k).withStride(d.get(k).stride() * (1 + r.nextInt(2)) + r.nextInt(2)));
            }
            case 2 -> {
                int a = r.nextInt(d.size());
                int b = r.nextInt(d.size());
                Iter t = d.get(a);
                d.set(a, d.get(b));
                d.set(b, t);
            }
            case 3 -> {
                // A negative replica stride with the matching offset is the same map (rule C1).
                if (!rep.isEmpty()) {
                    Iter it = rep.get(0);
                    rep.set(0, it.withStride(-it.stride()));
                    offset.put(it.axis(), (it.extent() - 1) * it.stride());
                }
            }
            case 4 -> offset.put(r.nextBoolean() ? Axis.M : DeviceMesh.GPUID, 1L + r.nextInt(2));
            default -> {
                // A replica that steps one device further: usually no placement gives that set.
                if (!rep.isEmpty()) {
                    rep.set(0, rep.get(0).withStride(rep.get(0).stride() + 1));
                }
            }
        }
        return new Layout(d, rep, offset);
    }

    private static List<ShardingSpec> allSpecs(DeviceMesh mesh, int rank) {
        List<List<Placement>> acc = new ArrayList<>(List.of(List.of()));
        for (int j = 0; j < mesh.rank(); j++) {
            List<List<Placement>> next = new ArrayList<>();
            for (List<Placement> p : acc) {
                for (int d = -1; d < rank; d++) {
                    List<Placement> q = new ArrayList<>(p);
                    q.add(d < 0 ? new Placement.Replicate() : new Placement.Shard(d));
                    next.add(q);
                }
            }
            acc = next;
        }
        return acc.stream().map(p -> new ShardingSpec(mesh, p)).toList();
    }

    @Test
    void paperMeshExampleShardAndReplicate() {
        // AXE-SPEC 8.2, second layout: 64x128 on a 2x2 mesh, rows split over gpuid bit 0, replicated over bit 1.
        Layout paper = Layout.parse("S[(2,32,128):(1@gpuid,128@m,1@m)] + R[2:2@gpuid]");
        DeviceMesh mesh = DeviceMesh.of(2, 2); // gpuid = 2 * i0 + i1
        ShardingSpec spec = ShardingInterop.fromAxe(paper, Shape.of(64, 128), mesh).orElseThrow();
        assertEquals("[Replicate(), Shard(0)]", spec.placementsText());
        assertEquals(paper, ShardingInterop.toAxe(spec, Shape.of(64, 128)));
        assertEquals(dtensorReference(spec, Shape.of(64, 128)), Oracle.table(paper));
    }

    @Test
    void paperMeshExampleFullyShardedUsesAPaddedLocalBuffer() {
        // AXE-SPEC 8.2, first layout as printed: each device's 32x64 shard sits in a 32x128 buffer (row stride 128).
        Layout paper = Layout.parse("S[(2,32,2,64):(1@gpuid,128@m,2@gpuid,1@m)]");
        Shape global = Shape.of(64, 128);
        DeviceMesh mesh = DeviceMesh.of(2, 2);
        ShardingSpec spec = ShardingSpec.parse(mesh, "[Shard(1), Shard(0)]");
        Layout compact = ShardingInterop.toAxe(spec, global);
        assertEquals("S[(2,32,2,64):(1@gpuid,64,2@gpuid,1)]", compact.toString());
        // Same device for every element; the offsets differ by 64 per local row: m_paper = m_compact + 64 * row.
        List<TreeSet<Point>> a = Oracle.table(paper);
        List<TreeSet<Point>> b = Oracle.table(compact);
        for (int x = 0; x < a.size(); x++) {
            Point p = a.get(x).first();
            Point q = b.get(x).first();
            long localRow = (x / 128) % 32;
            assertEquals(p.get(DeviceMesh.GPUID), q.get(DeviceMesh.GPUID));
            assertEquals(p.get(Axis.M), q.get(Axis.M) + 64 * localRow);
        }
        Result<ShardingSpec> c = ShardingInterop.tryFromAxe(paper, global, mesh);
        assertFalse(c.isPresent());
        assertTrue(c.reason().contains("as [Shard(1), Shard(0)] does, but its memory axis m is not the"
                + " compact row-major local buffer"), c.reason());
        assertEquals(spec, ShardingInterop.fromAxe(compact, global, mesh).orElseThrow());
    }

    @Test
    void severalMeshDimsShardingOneTensorDimSplitInMeshOrder() {
        // Mesh (dp=2, tp=4), both Shard(0) on 16 rows: dp picks halves of 8 rows, tp quarters of those (2 rows).
        DeviceMesh mesh = DeviceMesh.named(List.of(2L, 4L), "dp", "tp");
        ShardingSpec spec = ShardingSpec.parse(mesh, "[Shard(0), Shard(0)]");
        Layout l = ShardingInterop.toAxe(spec, Shape.of(16, 3));
        assertEquals("S[(2,4,2,3):(1@dp,1@tp,3,1)]", l.toString());
        // Row 11 = 8 + 2*1 + 1: dp 1, tp 1, local row 1; column 2 -> offset 1*3 + 2 = 5.
        assertEquals(List.of(Point.of("dp", 1, "tp", 1, "m", 5)), l.apply(Shape.of(16, 3), 11, 2));
        assertEquals(spec, ShardingInterop.fromAxe(l, Shape.of(16, 3), mesh).orElseThrow());
    }

    @Test
    void unevenDivisionAndBadInputAreRefused() {
        DeviceMesh mesh = DeviceMesh.of(4);
        AxeException e = assertThrows(AxeException.class,
                () -> ShardingInterop.toAxe(ShardingSpec.parse(mesh, "[Shard(0)]"), Shape.of(6)));
        assertEquals(AxeException.Kind.NOT_REPRESENTABLE, e.kind());
        assertTrue(e.getMessage().contains("uneven division"), e.getMessage());
        assertThrows(AxeException.class, () -> ShardingInterop.toAxe(ShardingSpec.parse(mesh, "[Shard(2)]"), Shape.of(8)));
        assertThrows(AxeException.class, () -> ShardingSpec.parse(mesh, "[Shard(0), Replicate()]"));
        assertThrows(AxeException.class, () -> new DeviceMesh(List.of(2L), List.of(Axis.M)));
        Result<ShardingSpec> foreign = ShardingInterop.tryFromAxe(Layout.parse("S[(4,2):(1@laneid,1)]"),
                Shape.of(8), mesh);
        assertTrue(foreign.reason().contains("uses axis laneid"), foreign.reason());
        Result<ShardingSpec> none = ShardingInterop.tryFromAxe(Layout.parse("S[(2,4):(1,2@gpuid)]"), Shape.of(8),
                DeviceMesh.of(4));
        assertTrue(none.reason().startsWith("no placements over mesh (4):(1@gpuid)"),
                none.reason());
    }

    @Test
    void placementTextRoundTrips() {
        DeviceMesh mesh = DeviceMesh.named(List.of(2L, 2L, 2L), "dp", "tp", "tp");
        ShardingSpec spec = ShardingSpec.parse(mesh, " [ Shard(1),Replicate( ) , Shard(0)] ");
        assertEquals("[Shard(1), Replicate(), Shard(0)]", spec.placementsText());
        assertEquals(spec, ShardingSpec.parse(mesh, spec.placementsText()));
        assertEquals("[Shard(1), Replicate(), Shard(0)] on (2,2,2):(1@dp,2@tp,1@tp)", spec.toString());
        assertEquals(spec, ShardingSpec.parse(mesh, "[split(1), broadcast, split(0)]"));
        AxeException partial = assertThrows(AxeException.class, () -> ShardingSpec.parse(mesh, "[Partial(), Shard(0)]"));
        assertTrue(partial.getMessage().contains("unreduced partial values"), partial.getMessage());
        AxeException e = assertThrows(AxeException.class, () -> ShardingSpec.parse(mesh, "[Shard(1), Split(0), Shard(0)]"));
        assertEquals(AxeException.Kind.PARSE, e.kind());
        assertTrue(e.getMessage().contains("'Split(0)' at column 12"), e.getMessage());
    }
}
