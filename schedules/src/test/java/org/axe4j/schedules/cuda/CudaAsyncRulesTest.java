package org.axe4j.schedules.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.axe4j.layout.Axis;
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
 * The cp.async plan, run the way the emitter runs it, copies exactly the region's elements global -> shared;
 * every instruction moves 4, 8 or 16 bytes from and to addresses aligned to that size; declines name the reason.
 */
class CudaAsyncRulesTest {

    static Request call(String scope, long threads, Operand dst, Operand src) {
        return call(scope, threads, dst, src, Swizzle.IDENTITY);
    }

    /** The request with {@code swizzle} on the shared destination (identity: none). */
    static Request call(String scope, long threads, Operand dst, Operand src, Swizzle swizzle) {
        return Request.fromJson(CudaRulesTest.request("copy_async", scope, threads, List.of(dst, src)),
                List.of(dst.layout(), src.layout()), java.util.Arrays.asList(swizzle, null));
    }

    @Test
    void cpAsyncPlanCopiesEveryRegionElementWithAlignedFourEightOrSixteenByteChunks() {
        int[] counts = new int[4]; // accepted, 16-byte chunks, declined for size, accepted swizzled
        Property.forAll("cuda cp.async plan = layout maps", r -> {
            int rank = 1 + r.nextInt(2);
            long[] shape = new long[rank];
            long[] start = new long[rank];
            long[] extent = new long[rank];
            for (int d = 0; d < rank; d++) {
                shape[d] = new long[] {4, 8, 16, 32, 64, 12}[r.nextInt(6)];
                boolean whole = r.nextInt(3) > 0;
                start[d] = whole ? 0 : r.nextInt((int) shape[d]);
                extent[d] = whole ? shape[d] : 1 + r.nextInt((int) (shape[d] - start[d]));
            }
            String dtype = r.nextBoolean() ? "float32" : "float16";
            int bytes = dtype.equals("float32") ? 4 : 2;
            Operand dst = new Operand("dst", "S", dtype, shape, start, extent, CudaRulesTest.randomLayout(r, shape));
            Operand src = new Operand("src0", "G", dtype, shape, start, extent, CudaRulesTest.randomLayout(r, shape));
            long threads = new long[] {1, 32, 128}[r.nextInt(3)];
            // a swizzle of 16-byte units (M = log2(16 / bytes)) or of narrower ones, flipped by the rows above
            Swizzle swizzle = r.nextInt(3) > 0 ? Swizzle.IDENTITY
                    : new Swizzle(1 + r.nextInt(3), r.nextInt(4), 3 + r.nextInt(2));
            Decision d = CudaDispatch.decide("axe4j-cuda-cp-async", call(threads == 1 ? "thread" : "cta", threads,
                    dst, src, swizzle));
            if (!d.accepted()) {
                boolean size = d.reason().contains("cp.async moves 4, 8 or 16 bytes");
                counts[2] += size ? 1 : 0;
                assertTrue(size || d.reason().contains("crosses a digit") || d.reason().contains("one address"),
                        d.reason());
                return;
            }
            counts[0]++;
            long vec = (Long) d.planJson().get("vec");
            long chunkBytes = (Long) d.planJson().get("bytes");
            assertEquals(vec * bytes, chunkBytes);
            assertTrue(List.of(4L, 8L, 16L).contains(chunkBytes), d.planJson().toString());
            assertEquals(chunkBytes == 16 ? "cp.async.cg.shared.global" : "cp.async.ca.shared.global",
                    d.planJson().get("instruction"));
            if (chunkBytes == 16) {
                counts[1]++;
            }
            if (!swizzle.isIdentity()) {
                counts[3]++;
                assertTrue(vec <= 1L << swizzle.base(), "chunk of " + vec + " crosses a swizzle unit: " + swizzle);
            }
            List<String> got = simulate(d.planJson(), vec, swizzle);
            List<String> expected = new ArrayList<>();
            Shape s = Shape.of(shape);
            long[] coord = new long[rank];
            for (long flat = 0; flat < dst.elements(); flat++) {
                long rest = flat;
                for (int k = rank - 1; k >= 0; k--) {
                    coord[k] = start[k] + rest % extent[k];
                    rest /= extent[k];
                }
                for (Point p : dst.layout().apply(s, coord)) {
                    expected.add(swizzle.apply(p.get(Axis.M)) + "<-" + src.layout().apply(s, coord).get(0).get(Axis.M));
                }
            }
            Collections.sort(expected);
            Collections.sort(got);
            assertEquals(expected, got, d.planJson().toString());
        });
        assertTrue(counts[0] > Property.CASES / 3, "accepted " + counts[0]);
        assertTrue(counts[1] > Property.CASES / 10, "16-byte chunks " + counts[1]);
        assertTrue(counts[2] > 0, "declined for chunk size " + counts[2]);
        assertTrue(counts[3] > 0, "accepted with a swizzled destination " + counts[3]);
    }

    /**
     * Thread t issues chunks t, t + T, ...: one cp.async per chunk and dst replica, to swz(dst) as the emitter
     * writes it; the instruction fills vec consecutive elements from there. Returns "dst<-src" per element.
     */
    @SuppressWarnings("unchecked")
    private static List<String> simulate(Map<String, Object> plan, long vec, Swizzle swizzle) {
        List<Map<String, Object>> loops = (List<Map<String, Object>>) plan.get("loops");
        Map<String, Map<String, Object>> access = (Map<String, Map<String, Object>>) plan.get("access");
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
                long dst = (Long) access.get("dst").get("base");
                long src = (Long) access.get("src0").get("base");
                long below = 1;
                for (int l = loops.size() - 1; l >= 0; l--) {
                    long e = (Long) loops.get(l).get("extent");
                    Map<String, Long> st = (Map<String, Long>) loops.get(l).get("strides");
                    long counter = (c * vec / below) % e;
                    dst += counter * st.get("dst");
                    src += counter * st.get("src0");
                    below *= e;
                }
                assertEquals(0, Math.floorMod(src, vec), "src chunk at " + src + " of width " + vec);
                for (Object rep : (List<Object>) access.get("dst").get("replicas")) {
                    long at = swizzle.apply(dst + (Long) rep);
                    assertEquals(0, Math.floorMod(at, vec), "dst chunk at " + at + " of width " + vec);
                    for (long j = 0; j < vec; j++) {
                        out.add((at + j) + "<-" + (src + j));
                    }
                }
            }
        }
        return out;
    }

    @Test
    void declinesNameTheOperandsAndTheReason() {
        long[] shape = {8, 8};
        Layout rowMajor = Layout.parse("S[(8,8):(8,1)]");
        // fp16 transposed: one 2-byte element per chunk, below cp.async's 4 bytes (fp32 would take 4-byte .ca)
        Operand s = new Operand("dst", "A_smem", "float16", shape, new long[2], shape, Layout.parse("S[(8,8):(1,8)]"));
        Operand g = new Operand("src0", "A", "float16", shape, new long[2], shape, rowMajor);
        Decision transposed = CudaDispatch.decide("axe4j-cuda-cp-async", call("warp", 32, s, g));
        assertFalse(transposed.accepted());
        assertTrue(transposed.reason().contains("cp.async moves 4, 8 or 16 bytes"), transposed.reason());
        assertTrue(transposed.reason().contains("S[(8,8):(1,8)]") && transposed.reason().contains("A_smem"),
                transposed.reason());
        assertTrue(transposed.reason().contains("both must move by 1"), transposed.reason());
        Operand s32 = new Operand("dst", "A_smem", "float32", shape, new long[2], shape, Layout.parse("S[(8,8):(1,8)]"));
        Operand g32 = new Operand("src0", "A", "float32", shape, new long[2], shape, rowMajor);
        Decision narrow = CudaDispatch.decide("axe4j-cuda-cp-async", call("warp", 32, s32, g32));
        assertTrue(narrow.accepted(), narrow.reason());
        assertEquals("cp.async.ca.shared.global", narrow.planJson().get("instruction"));
        assertEquals(4L, narrow.planJson().get("bytes"));

        long[] half = {8, 7};
        Operand hs = new Operand("dst", "H", "float16", half, new long[2], half, Layout.parse("S[(8,7):(7,1)]"));
        // rows of 7 fp16 at a pitch of 9 in global: no 4-byte chunk stays inside a row and aligned
        Operand hg = new Operand("src0", "G", "float16", half, new long[2], half, Layout.parse("S[(8,7):(9,1)]"));
        Decision odd = CudaDispatch.decide("axe4j-cuda-cp-async", call("warp", 32, hs, hg));
        assertFalse(odd.accepted());
        assertTrue(odd.reason().contains("1 element(s) = 2 bytes"), odd.reason());

        Operand g2 = new Operand("src0", "A", "float32", shape, new long[2], shape, rowMajor);
        Operand s2 = new Operand("dst", "B", "float32", shape, new long[2], shape, rowMajor);
        String json = CudaRulesTest.request("copy_async", "warp", 32, List.of(s2, g2))
                .replace("\"dst\":\"shared\"", "\"dst\":\"global\"").replace("\"src0\":\"global\"", "\"src0\":\"shared\"");
        Decision back = CudaDispatch.decide("axe4j-cuda-cp-async", Request.fromJson(json, List.of(rowMajor, rowMajor)));
        assertTrue(back.reason().contains("cp.async copies global -> shared only"), back.reason());

        String configured = CudaRulesTest.request("copy_async", "thread", 1, List.of(s2, g2))
                .replace("\"params\":{", "\"params\":{\"config\":[\"mbar\"],");
        Decision mbar = CudaDispatch.decide("axe4j-cuda-cp-async", Request.fromJson(configured,
                List.of(rowMajor, rowMajor)));
        assertTrue(mbar.reason().contains("does not implement the config [\"mbar\"]"), mbar.reason());

        Operand hs2 = new Operand("dst", "H", "float16", shape, new long[2], shape, rowMajor);
        Operand hg2 = new Operand("src0", "G", "float16", shape, new long[2], shape, rowMajor);
        Decision unit = CudaDispatch.decide("axe4j-cuda-cp-async", call("warp", 32, hs2, hg2, new Swizzle(1, 0, 3)));
        assertTrue(unit.reason().contains("the shared tile's Swizzle<1,0,3> moves units of 1 element(s) whole"),
                unit.reason());

        Decision ok = CudaDispatch.decide("axe4j-cuda-cp-async", call("warp", 32, s2, g2));
        assertTrue(ok.accepted(), ok.reason());
        assertEquals(16L, ok.planJson().get("bytes"));
        assertEquals(4L, ok.planJson().get("vec"));
        assertEquals(16L, ok.planJson().get("chunks"));
    }
}
