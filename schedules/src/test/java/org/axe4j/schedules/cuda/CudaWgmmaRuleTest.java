package org.axe4j.schedules.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Property;
import org.axe4j.layout.Shape;
import org.axe4j.layout.Swizzle;
import org.axe4j.schedules.Decision;
import org.axe4j.schedules.Modular;
import org.axe4j.schedules.Operand;
import org.axe4j.schedules.Request;
import org.axe4j.targets.MatrixFragments;
import org.junit.jupiter.api.Test;

/**
 * The wgmma plan, replayed as the hardware walks a shared-memory matrix descriptor (start, LBO, SBO in 16-byte
 * units, the swizzle applied to the address), reads every element of every instruction tile from the address the
 * operand's layout (and swizzle) gives it, for random K-major layouts: swizzled atoms with random K-block order and
 * row-group padding, and core-matrix layouts with random strides. Random permuted layouts are either declined or
 * replay exactly too.
 */
class CudaWgmmaRuleTest {

    @Test
    void acceptedPlansReadEveryElementFromItsAddress() {
        int[] counts = new int[3];
        Property.forAll("wgmma descriptors = layout addresses", 400, r -> {
            long m = 64L * (1 + r.nextInt(2));
            long n = 8L * (1 + r.nextInt(8)) * (r.nextBoolean() ? 1 : 4);
            long k = 16L * (1 + r.nextInt(4));
            int modeA = fitting(r.nextInt(4), k);
            int modeB = fitting(r.nextInt(4), k);
            boolean scramble = r.nextInt(4) == 0;
            Layout a = scramble ? CudaRulesTest.randomLayout(r, new long[] {m, k}) : layout(r, m, k, modeA);
            Layout b = layout(r, n, k, modeB);
            Swizzle za = scramble || modeA == 0 ? Swizzle.IDENTITY : new Swizzle(modeA, 3, 3);
            Swizzle zb = modeB == 0 ? Swizzle.IDENTITY : new Swizzle(modeB, 3, 3);
            long width = Math.min(n, 256);
            Request call = request(m, n, k, a, za, b, zb, accumulator(m, n, width));
            Decision d = CudaDispatch.TABLE.decide("axe4j-cuda-wgmma", call);
            if (!d.accepted()) {
                assertTrue(scramble, d.reason());
                counts[1]++;
                return;
            }
            counts[scramble ? 2 : 0]++;
            replay(d.planJson(), "A", a, za, m, k, 64);
            replay(d.planJson(), "B", b, zb, n, k, Long.parseLong(((String) d.planJson().get("instruction"))
                    .replaceAll(".*m64n(\\d+)k16.*", "$1")));
        });
        assertTrue(counts[0] > 200, "accepted " + counts[0]);
    }

    /**
     * FP8 operands (e4m3 or e5m2 each): k32 instructions over 16-element core-matrix rows and Swizzle<B,4,3>, and
     * every element of every instruction tile, read the hardware's way in bytes, is where the layout puts it.
     */
    @Test
    void eightBitPlansReadEveryElementFromItsAddress() {
        int[] counts = new int[1];
        String[] types = {"float8_e4m3fn", "float8_e5m2"};
        Property.forAll("wgmma fp8 descriptors = layout addresses", 200, r -> {
            long m = 64L * (1 + r.nextInt(2));
            long n = 8L * (1 + r.nextInt(8)) * (r.nextBoolean() ? 1 : 4);
            long k = 32L * (1 + r.nextInt(4));
            int modeA = fitting(r.nextInt(4), k, 16);
            int modeB = fitting(r.nextInt(4), k, 16);
            Layout a = layout(r, m, k, modeA, 16);
            Layout b = layout(r, n, k, modeB, 16);
            Swizzle za = modeA == 0 ? Swizzle.IDENTITY : new Swizzle(modeA, 4, 3);
            Swizzle zb = modeB == 0 ? Swizzle.IDENTITY : new Swizzle(modeB, 4, 3);
            String ta = types[r.nextInt(2)];
            String tb = types[r.nextInt(2)];
            Request call = request(m, n, k, a, za, b, zb, accumulator(m, n, Math.min(n, 256)), ta, tb);
            Decision d = CudaDispatch.TABLE.decide("axe4j-cuda-wgmma", call);
            assertTrue(d.accepted(), d.reason());
            String instruction = (String) d.planJson().get("instruction");
            assertTrue(instruction.matches("wgmma\\.mma_async\\.sync\\.aligned\\.m64n\\d+k32\\.f32\\."
                    + ta.substring(7, 11) + "\\." + tb.substring(7, 11)), instruction);
            counts[0]++;
            replay(d.planJson(), "A", a, za, m, k, 64, k, 0, 16);
            replay(d.planJson(), "B", b, zb, n, k, Long.parseLong(instruction.replaceAll(".*m64n(\\d+)k32.*", "$1")), k,
                    0, 16);
        });
        assertTrue(counts[0] == 200, "accepted " + counts[0]);
        Request mixed = request(64, 64, 64, core(64, 64, 16), Swizzle.IDENTITY, core(64, 64, 16), Swizzle.IDENTITY,
                accumulator(64, 64, 64), "float8_e4m3fn", "float16");
        Decision d = CudaDispatch.TABLE.decide("axe4j-cuda-wgmma", mixed);
        assertFalse(d.accepted());
        assertTrue(d.reason().contains("float8_e4m3fn/e5m2 by either, not float8_e4m3fn x float16"), d.reason());
    }

    /**
     * A K step of a wider K-major buffer at a run-time start ({@code kt * k}, K blocks of swizzle rows or core
     * matrices): accepted as at a constant start, and at every value the start takes, the descriptors moved by the
     * start terms read every element from the address the layout gives it.
     */
    @Test
    void aRunTimeKStartMovesTheDescriptorsToTheLayoutsAddresses() {
        int[] counts = new int[1];
        Property.forAll("wgmma descriptors at run-time K starts = layout addresses", 200, r -> {
            long m = 64;
            long n = 8L * (1 + r.nextInt(8));
            int mode = r.nextInt(4);
            long w = 8L << mode;
            long k = mode == 0 ? 16L * (1 + r.nextInt(2)) : Math.max(w, 16);
            long tiles = 2 + r.nextInt(3);
            long cols = k * tiles;
            Layout a = layout(r, m, cols, mode);
            Layout b = layout(r, n, cols, mode);
            Swizzle z = mode == 0 ? Swizzle.IDENTITY : new Swizzle(mode, 3, 3);
            Modular start = new Modular(k * (1 + r.nextInt(2)), 0);
            List<Operand> ops = List.of(
                    new Operand("C", "C", "float32", new long[] {m, n}, new long[2], new long[] {m, n},
                            accumulator(m, n, n)),
                    new Operand("A", "A", "float16", new long[] {m, cols}, new long[2], new long[] {m, k}, a)
                            .withRunTimeStart(1, start),
                    new Operand("B", "B", "float16", new long[] {n, cols}, new long[2], new long[] {n, k}, b)
                            .withRunTimeStart(1, start));
            Request base = request(m, n, k, core(m, k), Swizzle.IDENTITY, core(n, k), Swizzle.IDENTITY,
                    accumulator(m, n, n));
            Request call = new Request(base.op(), base.target(), base.scope(), ops, base.params(),
                    z.isIdentity() ? Map.of() : Map.of("A", z, "B", z));
            Decision d = CudaDispatch.TABLE.decide("axe4j-cuda-wgmma", call);
            assertTrue(d.accepted(), d.reason());
            counts[0]++;
            for (long v : start.valuesIn(0, cols - k + 1)) {
                replay(d.planJson(), "A", a, z, m, k, 64, cols, v);
                replay(d.planJson(), "B", b, z, n, k, n, cols, v);
            }
        });
        assertTrue(counts[0] == 200);
    }

    /** Every shared K-major tile MatrixFragments builds is one the descriptor walks, for every mode and size. */
    @Test
    @SuppressWarnings("unchecked")
    void mmaAtomsSharedTilesAreDescriptorWalkable() {
        for (int mode = 0; mode <= 3; mode++) {
            for (long k : new long[] {16, 32, 64, 128}) {
                long w = 8L << mode;
                if (mode > 0 && k > w && k % w != 0) {
                    continue;
                }
                org.axe4j.layout.SwizzledLayout a = MatrixFragments.sharedTileKMajor(64, k, mode);
                org.axe4j.layout.SwizzledLayout b = MatrixFragments.sharedTileKMajor(128, k, mode);
                Request call = request(64, 128, k, a.layout(), a.swizzle(), b.layout(), b.swizzle(),
                        accumulator(64, 128, 128));
                Decision d = CudaDispatch.TABLE.decide("axe4j-cuda-wgmma", call);
                assertTrue(d.accepted(), "mode " + mode + " k " + k + ": " + d.reason());
                replay(d.planJson(), "A", a.layout(), a.swizzle(), 64, k, 64);
                replay(d.planJson(), "B", b.layout(), b.swizzle(), 128, k, 128);
                assertEquals((long) mode, ((Map<String, Object>) d.planJson().get("A")).get("swizzle"));
            }
        }
    }

    @Test
    void declinesNameTheReason() {
        Layout rowMajor = Layout.parse("S[(64,32):(32,1)]");
        Request call = request(64, 64, 32, rowMajor, Swizzle.IDENTITY, core(64, 32), Swizzle.IDENTITY,
                accumulator(64, 64, 64));
        Decision d = CudaDispatch.TABLE.decide("axe4j-cuda-wgmma", call);
        assertFalse(d.accepted());
        assertTrue(d.reason().contains("the matrix descriptor (no swizzle"), d.reason());
        Request wrongAcc = request(64, 64, 32, core(64, 32), Swizzle.IDENTITY, core(64, 32), Swizzle.IDENTITY,
                Layout.parse("S[(64,32,2):(1@laneid,2,1)]"));
        d = CudaDispatch.TABLE.decide("axe4j-cuda-wgmma", wrongAcc);
        assertFalse(d.accepted());
        assertTrue(d.reason().contains("is not a tile of the wgmma m64nNk16 accumulator"), d.reason());
    }

    /** Config wait=N sets the wait_group depth (default 0); other config keys and depths outside 0..7 decline. */
    @Test
    void waitDepthComesFromTheConfig() {
        for (long wait = -1; wait <= 8; wait++) {
            Request call = request(64, 64, 32, core(64, 32), Swizzle.IDENTITY, core(64, 32), Swizzle.IDENTITY,
                    accumulator(64, 64, 64));
            com.google.gson.JsonArray keys = new com.google.gson.JsonArray();
            keys.add("wait");
            call.params().add("config", keys);
            call.params().addProperty("wait", wait);
            Decision d = CudaDispatch.TABLE.decide("axe4j-cuda-wgmma", call);
            if (wait < 0 || wait > 7) {
                assertFalse(d.accepted(), "wait " + wait);
                assertTrue(d.reason().contains("wait=" + wait + " is outside"), d.reason());
                continue;
            }
            assertTrue(d.accepted(), d.reason());
            assertEquals(wait, d.planJson().get("wait"));
            assertTrue(d.planJson().get("notes").toString().contains("wgmma.wait_group " + wait), d.planJson().toString());
        }
        Request plain = request(64, 64, 32, core(64, 32), Swizzle.IDENTITY, core(64, 32), Swizzle.IDENTITY,
                accumulator(64, 64, 64));
        assertEquals(0L, CudaDispatch.TABLE.decide("axe4j-cuda-wgmma", plain).planJson().get("wait"));
        com.google.gson.JsonArray other = new com.google.gson.JsonArray();
        other.add("mbar");
        plain.params().add("config", other);
        Decision d = CudaDispatch.TABLE.decide("axe4j-cuda-wgmma", plain);
        assertFalse(d.accepted());
        assertTrue(d.reason().contains("config key mbar is not implemented"), d.reason());
    }

    /** The swizzle mode, or none where K spans several swizzle rows without filling the last. */
    private static int fitting(int mode, long k) {
        return fitting(mode, k, 8);
    }

    /** As above for core-matrix rows of {@code u} elements (16 bytes: 8 of 16 bits, 16 of 8 bits). */
    private static int fitting(int mode, long k, long u) {
        long w = u << mode;
        return mode > 0 && k > w && k % w != 0 ? 0 : mode;
    }

    /** A K-major rows x k layout the descriptor can walk: swizzled atoms (mode > 0) or 8x8 core matrices. */
    private static Layout layout(Random r, long rows, long k, int mode) {
        return layout(r, rows, k, mode, 8);
    }

    /** As above for core-matrix rows of {@code u} elements. */
    private static Layout layout(Random r, long rows, long k, int mode, long u) {
        if (mode == 0) {
            return core(rows, k, u);
        }
        long w = u << mode;
        if (k <= w) { // one swizzle row holds the whole K; pad K up to the row width
            return Layout.parse("S[(" + rows + "," + k + "):(" + w + ",1)]");
        }
        long kb = k / w;
        long groupPad = r.nextInt(3) * 8 * w; // extra space between 8-row groups keeps them on atom boundaries
        boolean kOuter = r.nextBoolean();
        long rowGroups = rows / 8;
        long groupStride = kOuter ? 8 * w + groupPad : kb * 8 * w + groupPad;
        long kStride = kOuter ? rowGroups * groupStride : 8 * w;
        return Layout.parse("S[(" + rowGroups + ",8," + kb + "," + w + "):(" + groupStride + "," + w + "," + kStride
                + ",1)]");
    }

    private static Layout core(long rows, long k) {
        return core(rows, k, 8);
    }

    /** 8 x u core matrices (u elements = 16 bytes per row), K blocks of them inside each 8-row group. */
    private static Layout core(long rows, long k, long u) {
        return Layout.parse("S[(" + rows / 8 + ",8," + k / u + "," + u + "):(" + 8 * k + "," + u + "," + 8 * u + ",1)]");
    }

    private static Layout accumulator(long m, long n, long width) {
        long per = width / 2;
        long bn = n / width;
        return Layout.parse("S[(" + m / 64 + ",4,2,8," + bn + "," + width / 8 + ",4,2):(" + per * bn
                + ",1@wid_in_wg,2,4@laneid," + per + ",4,1@laneid,1)]");
    }

    /** Every element of every instruction tile, read the hardware's way, is where the layout puts it. */
    @SuppressWarnings("unchecked")
    private static void replay(Map<String, Object> plan, String role, Layout layout, Swizzle z, long rows, long k,
            long tileRows) {
        replay(plan, role, layout, z, rows, k, tileRows, k, 0);
    }

    /**
     * As above for the region of columns [col0, col0 + k) of a (rows x cols) buffer: the descriptor starts are moved
     * by what the region's run-time start adds at col0 (the emitter's offset), the layout read at col0 + c.
     */
    @SuppressWarnings("unchecked")
    private static void replay(Map<String, Object> plan, String role, Layout layout, Swizzle z, long rows, long k,
            long tileRows, long cols, long col0) {
        replay(plan, role, layout, z, rows, k, tileRows, cols, col0, 8);
    }

    /** As above for elements of 16 / u bytes (an instruction's K step is 2 u elements: 32 bytes). */
    @SuppressWarnings("unchecked")
    private static void replay(Map<String, Object> plan, String role, Layout layout, Swizzle z, long rows, long k,
            long tileRows, long cols, long col0, long u) {
        Map<String, Object> desc = (Map<String, Object>) plan.get(role);
        long moved = CudaRunTimeStartsTest.runTimeOffset(desc, new long[] {0, col0});
        long mode = (Long) desc.get("swizzle");
        long sbo = (Long) desc.get("sbo") * u; // 16-byte units -> elements
        long lbo = (Long) desc.get("lbo") * u;
        long width = u << mode;
        long step = 2 * u;
        Swizzle hw = mode == 0 ? Swizzle.IDENTITY : new Swizzle((int) mode, Long.numberOfTrailingZeros(u), 3);
        List<Map<String, Object>> tiles = (List<Map<String, Object>>) plan.get("tiles");
        long blocksB = role.equals("A") ? 1 : rows / tileRows;
        for (int t = 0; t < tiles.size(); t++) {
            List<Map<String, Object>> steps = (List<Map<String, Object>>) tiles.get(t).get("steps");
            long block = role.equals("A") ? t / (tiles.size() / (rows / tileRows)) : t % blocksB;
            for (int kk = 0; kk < steps.size(); kk++) {
                long start = (Long) steps.get(kk).get(role.toLowerCase()) + moved;
                for (long rr = 0; rr < tileRows; rr++) {
                    for (long c = 0; c < step; c++) {
                        long walk = mode == 0 ? start + (rr % 8) * u + (c % u) + (rr / 8) * sbo + (c / u) * lbo
                                : start + (rr % 8) * width + c + (rr / 8) * sbo;
                        long row = block * tileRows + rr;
                        long col = col0 + kk * step + c;
                        long expected = z.apply(layout.apply(Shape.of(rows, cols), row, col).get(0).get(Axis.M));
                        assertEquals(expected, hw.apply(walk), role + " (" + row + "," + col + ") " + plan.get("notes"));
                    }
                }
            }
        }
    }

    private static Request request(long m, long n, long k, Layout a, Swizzle za, Layout b, Swizzle zb, Layout c) {
        return request(m, n, k, a, za, b, zb, c, "float16", "float16");
    }

    private static Request request(long m, long n, long k, Layout a, Swizzle za, Layout b, Swizzle zb, Layout c,
            String typeA, String typeB) {
        List<Operand> ops = List.of(
                new Operand("C", "C", "float32", new long[] {m, n}, new long[2], new long[] {m, n}, c),
                new Operand("A", "A", typeA, new long[] {m, k}, new long[2], new long[] {m, k}, a),
                new Operand("B", "B", typeB, new long[] {n, k}, new long[2], new long[] {n, k}, b));
        JsonObject params = new JsonObject();
        params.addProperty("threads", 128);
        params.addProperty("arch", "sm_90a");
        params.addProperty("trans_a", false);
        params.addProperty("trans_b", false);
        params.addProperty("accum", false);
        JsonObject storage = new JsonObject();
        storage.addProperty("C", "local");
        storage.addProperty("A", "shared");
        storage.addProperty("B", "shared");
        params.add("storage", storage);
        JsonObject align = new JsonObject();
        align.addProperty("A", 1024);
        align.addProperty("B", 1024);
        params.add("align", align);
        Map<String, Swizzle> swizzles = new java.util.LinkedHashMap<>();
        if (!za.isIdentity()) {
            swizzles.put("A", za);
        }
        if (!zb.isIdentity()) {
            swizzles.put("B", zb);
        }
        return new Request("gemm_async", "cuda", "warpgroup", ops, params, swizzles);
    }
}
