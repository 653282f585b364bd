package org.axe4j.schedules.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Iter;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Point;
import org.axe4j.layout.Property;
import org.axe4j.layout.Shape;
import org.axe4j.layout.Swizzle;
import org.axe4j.schedules.Decision;
import org.axe4j.schedules.Operand;
import org.axe4j.schedules.Request;
import org.junit.jupiter.api.Test;

/**
 * The CUDA vector plan, run the way the emitter runs it (thread t takes chunks t, t + T, ...; a chunk is vec
 * elements of the innermost loop), copies exactly the region's elements, each from its source address to every
 * destination replica, and every vector access starts at a multiple of vec.
 */
class CudaRulesTest {

    static String request(String op, String scope, long threads, List<Operand> ops) {
        StringBuilder sb = new StringBuilder("{\"op\":\"" + op + "\",\"target\":\"cuda\",\"scope\":\"" + scope
                + "\",\"operands\":[");
        for (int i = 0; i < ops.size(); i++) {
            Operand o = ops.get(i);
            sb.append(i == 0 ? "" : ",").append("{\"role\":\"").append(o.role()).append("\",\"name\":\"")
                    .append(o.name()).append("\",\"dtype\":\"").append(o.dtype()).append("\",\"shape\":")
                    .append(java.util.Arrays.toString(o.shape())).append(",\"start\":")
                    .append(java.util.Arrays.toString(o.start())).append(",\"extent\":")
                    .append(java.util.Arrays.toString(o.extent())).append('}');
        }
        return sb.append("],\"params\":{\"threads\":").append(threads)
                .append(",\"storage\":{\"dst\":\"shared\",\"src0\":\"global\"}}}").toString();
    }

    /** A memory layout of {@code shape}: each dim split into one or two iters, strides a permuted (padded) order. */
    static Layout randomLayout(Random r, long[] shape) {
        List<Long> extents = new ArrayList<>();
        for (long n : shape) {
            long inner = n % 4 == 0 && r.nextBoolean() ? 4 : n % 2 == 0 && r.nextBoolean() ? 2 : 1;
            if (inner > 1 && inner < n) {
                extents.add(n / inner);
                extents.add(inner);
            } else {
                extents.add(n);
            }
        }
        List<Integer> order = new ArrayList<>();
        for (int k = 0; k < extents.size(); k++) {
            order.add(k);
        }
        if (r.nextInt(3) == 0) {
            Collections.shuffle(order, r);
        } else {
            Collections.reverse(order); // row-major: the usual case, where vectors are possible
        }
        long[] strides = new long[extents.size()];
        long next = 1;
        for (int k : order) {
            strides[k] = next;
            next *= extents.get(k) + (r.nextInt(4) == 0 ? r.nextInt(5) : 0);
        }
        List<Iter> shard = new ArrayList<>();
        for (int k = 0; k < extents.size(); k++) {
            shard.add(new Iter(extents.get(k), strides[k], Axis.M));
        }
        List<Iter> replica = r.nextInt(6) == 0 ? List.of(new Iter(2, next, Axis.M)) : List.of();
        Map<Axis, Long> offset = r.nextInt(4) == 0 ? Map.of(Axis.M, (long) r.nextInt(9)) : Map.of();
        return Layout.of(shard, replica, offset);
    }

    @Test
    void vectorPlanCopiesEveryRegionElementOnceWithAlignedAccesses() {
        int[] counts = new int[3]; // accepted, vec > 1, declined
        Property.forAll("cuda vector plan = layout maps", r -> {
            int rank = 1 + r.nextInt(2);
            long[] shape = new long[rank];
            long[] start = new long[rank];
            long[] extent = new long[rank];
            for (int d = 0; d < rank; d++) {
                shape[d] = new long[] {4, 8, 12, 16, 6, 32}[r.nextInt(6)];
                boolean whole = r.nextBoolean();
                start[d] = whole ? 0 : r.nextInt((int) shape[d]);
                extent[d] = whole ? shape[d] : 1 + r.nextInt((int) (shape[d] - start[d]));
            }
            String dtype = r.nextBoolean() ? "float32" : "float16";
            Operand dst = new Operand("dst", "S", dtype, shape, start, extent, randomLayout(r, shape));
            Operand src = new Operand("src0", "G", dtype, shape, start, extent, randomLayout(r, shape));
            long threads = new long[] {1, 4, 32, 128}[r.nextInt(4)];
            // sometimes the shared destination is swizzled: Swizzle<B,M,S> on its addresses
            int b = 1 + r.nextInt(3);
            Swizzle swz = r.nextInt(3) == 0 ? new Swizzle(b, r.nextInt(4), (r.nextBoolean() ? 1 : -1) * (b + r.nextInt(3)))
                    : Swizzle.IDENTITY;
            Request call = Request.fromJson(request("copy", threads == 1 ? "thread" : "warp", threads,
                    List.of(dst, src)), List.of(dst.layout(), src.layout()), java.util.Arrays.asList(swz, null));
            Decision d = CudaDispatch.decide("axe4j-cuda-vector", call);
            if (!d.accepted()) {
                counts[2]++;
                assertTrue(d.reason().contains("crosses a digit") || d.reason().contains("one address"), d.reason());
                return;
            }
            counts[0]++;
            long vec = (Long) d.planJson().get("vec");
            if (vec > 1) {
                counts[1]++;
            }
            assertEquals(threads, (Long) d.planJson().get("threads"));
            if (!swz.isIdentity()) {
                assertTrue(vec <= 1L << swz.base(), "vec " + vec + " crosses a swizzle unit of " + swz);
            }
            List<String> got = simulate(d.planJson(), dst, src, vec, swz);
            List<String> expected = new ArrayList<>();
            Shape s = Shape.of(shape);
            long[] coord = new long[rank];
            for (long flat = 0; flat < dst.elements(); flat++) {
                long rest = flat;
                for (int k = rank - 1; k >= 0; k--) {
                    coord[k] = start[k] + rest % extent[k];
                    rest /= extent[k];
                }
                List<Long> dsts = new ArrayList<>();
                for (long p : points(dst.layout(), s, coord)) {
                    dsts.add(swz.apply(p));
                }
                Collections.sort(dsts);
                expected.add(dsts + "<-" + points(src.layout(), s, coord).get(0));
            }
            Collections.sort(expected);
            Collections.sort(got);
            assertEquals(expected, got, d.planJson().toString());
        });
        assertTrue(counts[0] > Property.CASES / 2, "accepted " + counts[0]);
        assertTrue(counts[1] > Property.CASES / 10, "vectorized " + counts[1]);
    }

    private static List<Long> points(Layout l, Shape s, long[] coord) {
        List<Long> out = new ArrayList<>();
        for (Point p : l.apply(s, coord)) {
            out.add(p.get(Axis.M));
        }
        Collections.sort(out);
        return out;
    }

    @SuppressWarnings("unchecked")
    private static List<String> simulate(Map<String, Object> plan, Operand dst, Operand src, long vec, Swizzle swz) {
        List<Map<String, Object>> loops = (List<Map<String, Object>>) plan.get("loops");
        Map<String, Map<String, Object>> access = (Map<String, Map<String, Object>>) plan.get("access");
        List<Long> z = (List<Long>) access.get("dst").get("swizzle");
        Swizzle planned = z == null ? Swizzle.IDENTITY : new Swizzle(z.get(0).intValue(), z.get(1).intValue(),
                z.get(2).intValue());
        assertEquals(swz, planned, "the plan's swizzle of dst");
        long threads = (Long) plan.get("threads");
        long chunks = (Long) plan.get("chunks");
        long rounds = (Long) plan.get("rounds");
        List<String> out = new ArrayList<>();
        for (long t = 0; t < threads; t++) {
            for (long f = 0; f < rounds; f++) {
                long c = f * threads + t;
                if (c >= chunks) {
                    continue;
                }
                long[] addr = {(Long) access.get("dst").get("base"), (Long) access.get("src0").get("base")};
                long below = 1;
                long[] inner = {0, 0};
                for (int l = loops.size() - 1; l >= 0; l--) {
                    long e = (Long) loops.get(l).get("extent");
                    Map<String, Long> st = (Map<String, Long>) loops.get(l).get("strides");
                    long counter = (c * vec / below) % e;
                    addr[0] += counter * st.get("dst");
                    addr[1] += counter * st.get("src0");
                    if (l == loops.size() - 1) {
                        inner = new long[] {st.get("dst"), st.get("src0")};
                    }
                    below *= e;
                }
                if (vec > 1) {
                    assertEquals(0, Math.floorMod(swz.apply(addr[0]), vec), "dst vector at " + addr[0] + " of width "
                            + vec);
                    assertTrue(inner[1] == 0 || Math.floorMod(addr[1], vec) == 0, "src vector at " + addr[1]);
                }
                for (long j = 0; j < vec; j++) {
                    List<Long> dsts = new ArrayList<>();
                    for (Object rep : (List<Object>) access.get("dst").get("replicas")) {
                        dsts.add(planned.apply(addr[0] + (Long) rep) + j * inner[0]); // as the emitter: swz(start) + j
                    }
                    Collections.sort(dsts);
                    out.add(dsts + "<-" + (addr[1] + j * inner[1]));
                }
            }
        }
        return out;
    }

    @Test
    void registerTilesBeyondThreadScopeAndOtherTargetsAreDeclined() {
        long[] shape = {32, 4};
        Operand dst = new Operand("dst", "r", "float32", shape, new long[2], shape, Layout.parse("S[(32,4):(4,1)]"));
        Operand src = new Operand("src0", "g", "float32", shape, new long[2], shape, Layout.parse("S[(32,4):(4,1)]"));
        String json = request("copy", "warp", 32, List.of(dst, src)).replace("\"dst\":\"shared\"", "\"dst\":\"local\"");
        Decision d = CudaDispatch.decide("axe4j-cuda-vector", Request.fromJson(json, List.of(dst.layout(),
                src.layout())));
        assertFalse(d.accepted());
        assertTrue(d.reason().contains("local (register) buffer at warp scope"), d.reason());
        Decision none = CudaDispatch.decide("axe4j-cuda-vector", Request.fromJson(request("copy", "warp", 0,
                List.of(dst, src)), List.of(dst.layout(), src.layout())));
        assertTrue(none.reason().contains("0 active threads"), none.reason());
        Decision cpu = CudaDispatch.decide("axe4j-cuda-vector", Request.fromJson(request("copy", "warp", 32,
                List.of(dst, src)).replace("\"cuda\"", "\"llvm\""), List.of(dst.layout(), src.layout())));
        assertTrue(cpu.reason().contains("target kind llvm is not cuda"), cpu.reason());
    }
}
