package org.axe4j.schedules.cpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Shape;
import org.axe4j.schedules.Decision;
import org.axe4j.schedules.Request;
import org.axe4j.schedules.RequestText;
import org.junit.jupiter.api.Test;

class GemmBlockingTest {
    /** 2 Sapphire-Rapids-class cores: 48 KiB L1d, 2 MiB L2. */
    static final CpuTarget AVX512 = new CpuTarget("sapphirerapids", "avx512", 512, 32, 2, 48 * 1024, 2048 * 1024);
    static final CpuTarget AVX2 = new CpuTarget("haswell", "avx2", 256, 16, 2, 48 * 1024, 2048 * 1024);

    @Test
    void avx512GetsAnEightByThirtyTwoTileAndBlocksFromItsCaches() {
        GemmBlocking b = GemmBlocking.choose(AVX512, 4, 1024, 1024, 1024, true);
        assertEquals(8, b.mu());
        assertEquals(32, b.nv());
        assertEquals(256, b.kc(), "2/3 of 48 KiB over 32 x 4 bytes per k");
        assertEquals(256, b.mc(), "a quarter of 2 MiB holds 512 rows; two blocks per core cut that to 256");
        assertEquals("u", b.parallelOver());
        assertTrue(b.reasons().get(0).startsWith("register tile 8x32 (AVX-512: 32 zmm registers, 16 32-bit lanes"),
                b.reasons().toString());
    }

    @Test
    void avx2KeepsTheSixBySixteenPlanWhateverItsCaches() {
        GemmBlocking b = GemmBlocking.choose(AVX2, 4, 1024, 1024, 1024, true);
        assertEquals(List.of(6L, 16L, 256L, 48L), List.of(b.mu(), b.nv(), b.kc(), b.mc()));
        assertTrue(b.reasons().get(0).contains("16 ymm registers"), b.reasons().toString());
        GemmBlocking unknown = GemmBlocking.choose(CpuTarget.UNKNOWN, 4, 1024, 1024, 1024, true);
        assertEquals(List.of(b.mu(), b.nv(), b.kc(), b.mc()), List.of(unknown.mu(), unknown.nv(), unknown.kc(),
                unknown.mc()));
    }

    @Test
    void theTileKeepsTwoVectorsPerRowForOtherElementWidths() {
        assertEquals(16, GemmBlocking.choose(AVX512, 8, 512, 512, 512, true).nv(), "fp64: 2 x 8 lanes");
        assertEquals(8, GemmBlocking.choose(AVX2, 8, 512, 512, 512, true).nv(), "fp64: 2 x 4 lanes");
    }

    @Test
    void aKDeeperThanOneBlockIsCutIntoEqualBlocks() {
        assertEquals(129, GemmBlocking.choose(AVX512, 4, 511, 769, 257, true).kc(), "257 = 129 + 128, not 256 + 1");
        assertEquals(200, GemmBlocking.choose(AVX512, 4, 64, 64, 200, true).kc());
        CpuTarget smallL1 = new CpuTarget("skylake-avx512", "avx512", 512, 32, 2, 32 * 1024, 1024 * 1024);
        assertEquals(128, GemmBlocking.choose(smallL1, 4, 1024, 1024, 1024, true).kc(), "2/3 of 32 KiB: 170 -> 128");
    }

    @Test
    void aShortUExtentRunsItsVPanelsInParallel() {
        GemmBlocking skinny = GemmBlocking.choose(AVX512, 4, 64, 4096, 4096, true);
        assertEquals(64, skinny.mc(), "one u block: splitting 64 rows over 2 cores leaves 4 tiles each at most");
        assertEquals("v", skinny.parallelOver());
        GemmBlocking row = GemmBlocking.choose(AVX512, 4, 1, 4096, 4096, true);
        assertEquals(List.of(1L, 32L), List.of(row.mu(), row.nv()));
        assertTrue(row.reasons().get(0).contains("clipped to the 1x32 accumulator"), row.reasons().toString());
        assertEquals("v", row.parallelOver());
        assertEquals("none", GemmBlocking.choose(AVX512, 4, 64, 4096, 4096, false).parallelOver());
        GemmBlocking avx2Skinny = GemmBlocking.choose(AVX2, 4, 8, 4096, 4096, true);
        assertEquals("v", avx2Skinny.parallelOver(), "one 8-row u block of 48");
    }

    @Test
    void eachCorePacksItsOwnPanelsWhileAKBlockOfVFitsHalfOfL2() {
        // 1024 columns x K block 256 x 4 bytes = 1 MiB = half of 2 MiB: one run of u blocks a core
        GemmBlocking fits = GemmBlocking.choose(AVX512, 4, 1024, 1024, 1024, true);
        assertEquals(2, fits.workers());
        assertTrue(fits.reasons().stream().anyMatch(r -> r.startsWith("one parallel region: each of 2 cores")
                && r.contains("1024 KiB, at most half the 2048 KiB L2")), fits.reasons().toString());
        // 1000 columns round up to 32 panels of 32: still 1 MiB
        assertEquals(2, GemmBlocking.choose(AVX512, 4, 1000, 1000, 1000, true).workers());
        // 1056 columns (33 panels) at K block 256 is past half of L2: V packed once per K block for both cores
        GemmBlocking past = GemmBlocking.choose(AVX512, 4, 1024, 1056, 1024, true);
        assertEquals(List.of("u", 0L), List.of(past.parallelOver(), past.workers()));
        assertFalse(past.reasons().stream().anyMatch(r -> r.startsWith("one parallel region")), past.reasons().toString());
        assertEquals(0, GemmBlocking.choose(AVX512, 4, 2048, 2048, 2048, true).workers(), "a 2 MiB K block of V");
        // v panels in parallel: a run of panels a core, whatever the size of V
        GemmBlocking skinny = GemmBlocking.choose(AVX512, 4, 64, 4096, 4096, true);
        assertEquals(List.of("v", 2L), List.of(skinny.parallelOver(), skinny.workers()));
        assertTrue(skinny.reasons().stream().anyMatch(r -> r.startsWith("one parallel region: each of 2 cores runs "
                + "its own v panels")), skinny.reasons().toString());
        // no parallel loop, no workers: a serial call, the row kernel
        assertEquals(0, GemmBlocking.choose(AVX512, 4, 1024, 1024, 1024, false).workers());
        assertEquals(0, GemmBlocking.choose(AVX512, 4, 4, 4096, 4096, true, true).workers());
        // never more runs than u blocks, and the AVX2 plan takes the same rule (6 x 16 tiles, 48-row blocks)
        assertEquals(2, GemmBlocking.choose(AVX2, 4, 512, 512, 512, true).workers());
        CpuTarget eightAvx2 = new CpuTarget("znver3", "avx2", 256, 16, 8, 32 * 1024, 512 * 1024);
        GemmBlocking few = GemmBlocking.choose(eightAvx2, 4, 96, 256, 512, true);
        assertEquals(List.of("u", 2L), List.of(few.parallelOver(), few.workers()), "2 blocks of 48 rows on 8 cores");
        assertEquals(0, GemmBlocking.choose(eightAvx2, 4, 96, 272, 512, true).workers(),
                "17 panels of 16 x 256 x 4 bytes: 272 KiB, past half of a 512 KiB L2");
    }

    @Test
    void moreCoresCutTheUBlocksFiner() {
        CpuTarget eight = new CpuTarget("sapphirerapids", "avx512", 512, 32, 8, 48 * 1024, 2048 * 1024);
        assertEquals(64, GemmBlocking.choose(eight, 4, 1024, 1024, 1024, true).mc(), "1024 / 16 blocks");
    }

    @Test
    void thePackedPanelsAreAxeLayoutsThatPutEachElementWhereTheMicroKernelReadsIt() {
        GemmBlocking b = GemmBlocking.choose(AVX512, 4, 64, 100, 48, true);
        Map<String, String> layouts = GemmPacking.layouts("B", "A", b, 100);
        long kc = b.kc();
        long nv = b.nv();
        long mu = b.mu();
        long panels = (100 + nv - 1) / nv;
        Layout v = Layout.parse(layouts.get("B"));
        Shape vShape = Shape.of(kc, panels * nv);
        for (long k : new long[] {0, 1, kc - 1}) {
            for (long col : new long[] {0, 31, 32, 99}) {
                long expected = (col / nv * kc + k) * nv + col % nv;
                assertEquals(expected, v.apply(vShape, k, col).get(0).get(Axis.M), "V(" + k + ", " + col + ")");
            }
        }
        Layout u = Layout.parse(layouts.get("A"));
        Shape uShape = Shape.of(b.mc(), kc);
        for (long row : new long[] {0, 7, 8, b.mc() - 1}) {
            for (long k : new long[] {0, 5, kc - 1}) {
                long expected = (row / mu * kc + k) * mu + row % mu;
                assertEquals(expected, u.apply(uShape, row, k).get(0).get(Axis.M), "U(" + row + ", " + k + ")");
            }
        }
        assertTrue(v.isShardInjective() && u.isShardInjective());
    }

    @Test
    void thePlanOfTheRuleNamesTheTargetsIsaAndDiffersBetweenAvx2AndAvx512() {
        String ops = RequestText.operand("D", 512, 512) + "," + RequestText.operand("A", 512, 512) + ","
                + RequestText.operand("B", 512, 512) + "," + RequestText.operand("C", 512, 512);
        List<Layout> ls = List.of(Layout.parse("S[(512,512):(512,1)]"), Layout.parse("S[(512,512):(512,1)]"),
                Layout.parse("S[(512,512):(512,1)]"), Layout.parse("S[(512,512):(512,1)]"));
        String avx512 = "\"cpu\":{\"mcpu\":\"sapphirerapids\",\"isa\":\"avx512\",\"vector_bits\":512,"
                + "\"vector_registers\":32,\"cores\":2,\"l1d_bytes\":49152,\"l2_bytes\":2097152}";
        String avx2 = "\"cpu\":{\"mcpu\":\"haswell\",\"isa\":\"avx2\",\"vector_bits\":256,"
                + "\"vector_registers\":16,\"cores\":2,\"l1d_bytes\":32768,\"l2_bytes\":262144}";
        Decision wide = CpuDispatch.decide("axe4j-cpu-gemm-blocked", Request.fromJson(RequestText.request("gemm",
                "thread", ops, "\"trans_a\":false,\"trans_b\":false," + avx512), ls));
        Decision narrow = CpuDispatch.decide("axe4j-cpu-gemm-blocked", Request.fromJson(RequestText.request("gemm",
                "thread", ops, "\"trans_a\":false,\"trans_b\":false," + avx2), ls));
        assertTrue(wide.accepted() && narrow.accepted());
        assertEquals(Map.of("u", 8L, "v", 32L), wide.planJson().get("tile"));
        assertEquals(Map.of("u", 6L, "v", 16L), narrow.planJson().get("tile"));
        assertEquals("avx512", wide.planJson().get("isa"));
        assertTrue(wide.planJson().get("notes").toString().contains("AVX-512: 32 zmm registers"), wide.planJson().toString());
        assertTrue(narrow.planJson().get("notes").toString().contains("AVX2 haswell: 16 ymm registers"),
                narrow.planJson().toString());
        assertFalse(narrow.planJson().get("notes").toString().contains("zmm"));
        assertNotEquals(wide.planJson().get("packing"), narrow.planJson().get("packing"));
        assertEquals(List.of(true, false), List.of(wide.planJson().get("prefetch_d"), narrow.planJson().get("prefetch_d")));
    }

    @Test
    void aOneRowGemmIsBlockedWithAOneRowTile() {
        String ops = RequestText.operand("D", 1, 64) + "," + RequestText.operand("A", 1, 32) + ","
                + RequestText.operand("B", 32, 64) + "," + RequestText.operand("C", 1, 64);
        List<Layout> ls = List.of(Layout.parse("S[(1,64):(64,1)]"), Layout.parse("S[(1,32):(32,1)]"),
                Layout.parse("S[(32,64):(64,1)]"), Layout.parse("S[(1,64):(64,1)]"));
        Decision d = CpuDispatch.decide("axe4j-cpu-gemm-blocked",
                Request.fromJson(RequestText.request("gemm", "thread", ops, "\"trans_a\":false,\"trans_b\":false"), ls));
        assertTrue(d.accepted(), d.reason());
        assertEquals(Map.of("u", 1L, "v", 16L), d.planJson().get("tile"));
        assertEquals("n", d.planJson().get("vector_dim"));
    }

    @Test
    void uptoEightRowsOverAStrideOneVTakeTheRowKernelInPageWideChunks() {
        GemmBlocking row = GemmBlocking.choose(AVX512, 4, 2, 4096, 4096, true, true);
        assertTrue(row.rowKernel());
        assertEquals(1024, row.nv(), "4 KiB of fp32");
        assertEquals("v", row.parallelOver());
        assertTrue(row.reasons().get(0).startsWith("row kernel: 2 rows of D accumulate in place over 4 chunks"),
                row.reasons().toString());
        assertTrue(row.reasons().get(0).endsWith("4 V rows per pass"), row.reasons().toString());
        assertTrue(row.reasons().get(0).contains("(one 4 KiB page of each V row)"), row.reasons().toString());
        // one fp32 row of D: two pages of each V row (8 KiB of D), while that leaves a chunk per core
        GemmBlocking one = GemmBlocking.choose(AVX512, 4, 1, 4096, 4096, true, true);
        assertEquals(List.of(2048L, "v"), List.of(one.nv(), one.parallelOver()), "2 chunks for 2 cores");
        assertTrue(one.reasons().get(0).contains("over 2 chunks of 2048 columns (two 4 KiB pages of each V row)"),
                one.reasons().toString());
        CpuTarget eightCores = new CpuTarget("sapphirerapids", "avx512", 512, 32, 8, 48 * 1024, 2048 * 1024);
        assertEquals(1024, GemmBlocking.choose(eightCores, 4, 1, 4096, 4096, true, true).nv(), "8 cores: one page");
        assertEquals(2048, GemmBlocking.choose(eightCores, 4, 1, 4096, 4096, false, true).nv(), "serial: two pages");
        assertEquals(1024, GemmBlocking.choose(AVX512, 4, 1, 2000, 4096, true, true).nv(),
                "2000 columns: two pages would leave one chunk for 2 cores");
        GemmBlocking half = GemmBlocking.choose(AVX512, 4, 8, 4096, 4096, true, true, 2);
        assertEquals(1024, half.nv(), "16-bit V into a float32 D: the D rows' chunk stays 4 KiB");
        assertTrue(half.reasons().get(0).contains("1024 columns (2 KiB of each 16-bit V row)"),
                half.reasons().toString());
        GemmBlocking narrow = GemmBlocking.choose(AVX512, 4, 1, 100, 4096, true, true);
        assertEquals(List.of(100L, "none"), List.of(narrow.nv(), narrow.parallelOver()), "one chunk: nothing to split");
        assertFalse(GemmBlocking.choose(AVX512, 4, 1, 4096, 4096, true, false).rowKernel(), "V strided along v");
        assertFalse(GemmBlocking.choose(AVX2, 4, 1, 4096, 4096, true, true).rowKernel(), "AVX2 keeps its plan");
        GemmBlocking eight = GemmBlocking.choose(AVX512, 4, 8, 4096, 4096, true, true);
        assertTrue(eight.rowKernel(), "8 rows: one tile's worth");
        assertTrue(eight.reasons().get(0).startsWith("row kernel: 8 rows of D"), eight.reasons().toString());
        assertFalse(GemmBlocking.choose(AVX512, 4, 9, 4096, 4096, true, true).rowKernel(), "9 rows: two tiles");
        assertEquals(List.of(8L, 32L), List.of(GemmBlocking.choose(AVX512, 4, 64, 4096, 4096, true, true).mu(),
                GemmBlocking.choose(AVX512, 4, 64, 4096, 4096, true, true).nv()), "64 rows: the packed tile");
    }

    @Test
    void uBlocksBalanceTheCoresTilesAgainstASimulatedStaticSplit() {
        // 1000 rows = 125 tiles on 2 cores: quarters (32, 32, 32, 29) give the cores 64 and 61 tiles, 21-tile blocks
        // 63 and 62
        assertEquals(21, GemmBlocking.balancedBlockTiles(125, 65, 2));
        assertEquals(168, GemmBlocking.choose(AVX512, 4, 1000, 1000, 1000, true).mc());
        assertEquals(256, GemmBlocking.choose(AVX512, 4, 1024, 1024, 1024, true).mc(), "1024 rows: quarters");
        assertEquals(504, GemmBlocking.choose(new CpuTarget("sapphirerapids", "avx512", 512, 32, 1, 48 * 1024,
                2048 * 1024), 4, 1000, 1000, 1000, true).mc(), "one core: two blocks");
        for (int cores : new int[] {2, 3, 4, 8}) {
            for (long tiles = 8; tiles <= 300; tiles += 7) {
                long limit = Math.max(1, (tiles + 2L * cores - 1) / (2L * cores));
                long chosen = GemmBlocking.balancedBlockTiles(tiles, 64, cores);
                long fewest = Long.MAX_VALUE;
                for (long t = 1; t <= Math.min(64, limit); t++) {
                    fewest = Math.min(fewest, mostLoadedCore(tiles, t, cores));
                }
                assertEquals(fewest, mostLoadedCore(tiles, chosen, cores), tiles + " tiles, " + cores + " cores");
                assertTrue(chosen <= Math.min(64, limit), tiles + " tiles, " + cores + " cores: " + chosen);
            }
        }
    }

    /** The most tiles one core runs when blocks of {@code t} tiles (the last short) go to cores in contiguous runs. */
    private static long mostLoadedCore(long tiles, long t, int cores) {
        List<Long> blocks = new ArrayList<>();
        for (long left = tiles; left > 0; left -= t) {
            blocks.add(Math.min(t, left));
        }
        int run = (blocks.size() + cores - 1) / cores;
        long most = 0;
        for (int c = 0; c < cores; c++) {
            long sum = 0;
            for (int b = c * run; b < Math.min(blocks.size(), (c + 1) * run); b++) {
                sum += blocks.get(b);
            }
            most = Math.max(most, sum);
        }
        return most;
    }
}
