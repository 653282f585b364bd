package org.axe4j.schedules.cpu;

import java.util.ArrayList;
import java.util.List;

/**
 * The blocked GEMM's sizes for one CPU target: the register tile {@code mu x nv}, the K block {@code kc}, the u block
 * {@code mc} and which loop runs in parallel, each with the reason {@code explain} shows.
 *
 * <p>AVX-512 (32 zmm registers): an 8 x 2-vector tile (8 x 32 fp32), 16 accumulators + 2 vectors of the v panel + 1
 * broadcast = 19 of 32 registers. At 1024^3 fp32 on 2 cores of an AVX-512 Xeon (LLVM: rocketlake) it ran at or above
 * 6 x 64, 12 x 32 and 14 x 32 (all within noise of one another) and 1.3x the 6 x 16 tile. The K block keeps one v
 * panel in 2/3 of L1d ({@code kc = 2/3 L1d / (nv * bytes)}, a multiple of 64, K split into equal blocks), the u
 * block's panels take a quarter of L2 ({@code mc = L2 / 4 / (kc * bytes)}), cut so each core gets two blocks when u
 * is long enough.
 *
 * <p>Any other ISA keeps the plan tuned on AVX2 (znver3): 6 x 2-vector tile (6 x 16 fp32, 12 of 16 ymm), kc = 256,
 * eight tiles per u block.
 *
 * <p>A u extent of at most one AVX-512 tile ({@link #ROW_KERNEL_MAX_U} rows: a skinny or GEMV-like GEMM) reads every
 * element of the moving operand V once. When V is stride-1 along v such a GEMM takes the row kernel: no register
 * tile, no packing, D's rows accumulate in place over chunks of one 4 KiB page of each V row (two for a single
 * fp32 row of D, where that leaves a chunk per core), k outermost, so V streams row by row and each of its pages is
 * visited once (a 1 x 128 tile visits each page 8 times, a K block of
 * rows apart: a TLB miss every 512 bytes).
 *
 * <p>Parallel over v panels, and over u blocks when a K block of V takes at most half of L2, each core packs the V
 * panels it reads itself ({@link #workers}): one parallel region, where packing them once for all cores takes two
 * per K block (pack, then compute) and, over u, leaves half the panels in the other core's L2.
 *
 * @param parallelOver {@code "u"} (u blocks), {@code "v"} (v panels or chunks) or {@code "none"}
 * @param rowKernel whether the plan is the row kernel ({@code nv} is then the chunk width)
 * @param workers the number of contiguous runs of u blocks or v panels (as {@code parallelOver}), each running every
 *     K block and packing the V panels it reads; 0 when V's panels are packed once per K block for all cores
 */
record GemmBlocking(long mu, long nv, long kc, long mc, String parallelOver, boolean rowKernel, long workers,
        List<String> reasons) {

    /** Rows of the AVX2 register tile: 6 x 2 ymm accumulators = 12 of 16 registers, leaving room for operands. */
    static final int AVX2_TILE_U = 6;

    /** Rows of the AVX-512 register tile: 8 x 2 zmm accumulators = 16 of 32 registers. */
    static final int AVX512_TILE_U = 8;

    /** Vector registers across a tile row: two loads of the v panel per broadcast of the u panel. */
    static final int VECTORS_PER_ROW = 2;

    /** AVX2 K block: a 256 x 16 fp32 v panel is 16 KiB, half a 32 KiB L1 data cache. */
    static final long AVX2_BLOCK_K = 256;

    /** AVX2 register tiles per u block: 8 x 6 rows x 256 x 4 bytes = 48 KiB of u panels, well inside L2. */
    static final long AVX2_TILES_PER_U_BLOCK = 8;

    /** A K block is a multiple of this many (the unrolled k loop's trip count stays even) and at most 8 of them. */
    static final long K_QUANTUM = 64;

    /** Below this many tiles per core's share of u, split the v panels among cores instead (u blocks too thin). */
    static final long MIN_TILES_PER_U_SHARE = 4;

    /**
     * u extents up to this take the row kernel when V is stride-1 along v. At M x 4096 x 4096 fp32 (same runs) it ran
     * 1.5-3x the 8 x 32 tile (B packed, K blocks of 1024) for M = 4 and 8, tied with the packed tile at 16 and ran
     * 0.3x it at 32.
     */
    static final long ROW_KERNEL_MAX_U = AVX512_TILE_U;

    /**
     * V rows the row kernel adds per pass over a D chunk: 4 page streams in flight and one load and store of D per
     * 4 k. At 1 and 8 x 4096 x 4096 fp32, 4 rows ran 1.4x one row (same run), 8 no faster than 4.
     */
    static final long ROW_KERNEL_K_ROWS = 4;

    /** The row kernel's chunk: one 4 KiB page of a V row. */
    static final long PAGE_BYTES = 4096;

    /**
     * The D bytes up to which a row-kernel chunk takes two pages of each V row, when that still leaves a chunk per
     * core. At 1 x 4096 x 4096 fp32 on 2 cores (D chunk 8 KiB) two pages ran 1.01-1.03 of numpy where one page ran
     * 0.92-0.96 (alternating runs); at 2 rows (16 KiB of D) they tied, at 4 rows (32 KiB) two pages ran 0.7x one.
     */
    static final long TWO_PAGE_CHUNK_MAX_D_BYTES = 8192;


    public GemmBlocking {
        reasons = List.copyOf(reasons);
    }

    /**
     * The sizes for a GEMM whose accumulator has {@code eu x ev} elements of {@code elementBytes} (the widest
     * operand), K deep; {@code parallelAllowed} when the work is large enough and the call allows a parallel region.
     */
    public static GemmBlocking choose(CpuTarget cpu, int elementBytes, long eu, long ev, long k,
            boolean parallelAllowed) {
        return choose(cpu, elementBytes, eu, ev, k, parallelAllowed, false);
    }

    /** As above; {@code vStrideOne} when the moving operand is stride-1 along v (the row kernel may then read it). */
    public static GemmBlocking choose(CpuTarget cpu, int elementBytes, long eu, long ev, long k,
            boolean parallelAllowed, boolean vStrideOne) {
        return choose(cpu, elementBytes, eu, ev, k, parallelAllowed, vStrideOne, elementBytes);
    }

    /**
     * As above; {@code vBytes} is the moving operand's own element size (2 for float16 or bfloat16 V into a float32
     * D), which the row kernel reads in place: its chunk stays {@code 4 KiB / elementBytes} columns (the D rows it
     * accumulates, in float32, fit L1), which is half a page of a 16-bit V row.
     */
    public static GemmBlocking choose(CpuTarget cpu, int elementBytes, long eu, long ev, long k,
            boolean parallelAllowed, boolean vStrideOne, int vBytes) {
        if (!cpu.wideVectors()) {
            return tunedOnAvx2(cpu, elementBytes, eu, ev, k, parallelAllowed);
        }
        if (vStrideOne && eu <= ROW_KERNEL_MAX_U) {
            return rows(cpu, elementBytes, vBytes, eu, ev, k, parallelAllowed);
        }
        return wide(cpu, elementBytes, eu, ev, k, parallelAllowed);
    }

    /** The row kernel: chunks of one page (or two: see above) of each V row, parallel over chunks. */
    private static GemmBlocking rows(CpuTarget cpu, int bytes, int vBytes, long eu, long ev, long k,
            boolean parallelAllowed) {
        long pageColumns = PAGE_BYTES / bytes;
        // two pages: D's chunk (eu rows, in D's bytes) stays small, and there are still chunks for every core
        boolean twoPages = eu * 2 * PAGE_BYTES <= TWO_PAGE_CHUNK_MAX_D_BYTES
                && (!parallelAllowed || ceil(ev, 2 * pageColumns) >= cpu.cores());
        long chunk = Math.min((twoPages ? 2 : 1) * pageColumns, ev);
        long chunks = ceil(ev, chunk);
        List<String> why = new ArrayList<>();
        long vRowBytes = chunk * vBytes;
        String perRow = vRowBytes == PAGE_BYTES ? "one 4 KiB page of each V row"
                : vRowBytes == 2 * PAGE_BYTES ? "two 4 KiB pages of each V row"
                : (vRowBytes / 1024) + " KiB of each " + (8 * vBytes) + "-bit V row";
        why.add("row kernel: " + eu + " row" + (eu == 1 ? "" : "s") + " of D accumulate in place over " + chunks
                + " chunks of " + chunk + " columns (" + perRow + "), k outermost, V read in place"
                + " (AVX-512, " + cpu.lanes(bytes) + " lanes a vector), " + ROW_KERNEL_K_ROWS + " V rows per pass");
        String over = "none";
        if (parallelAllowed && chunks >= 2) {
            why.add("parallel over " + chunks + " chunks (" + cpu.cores() + " cores)");
            over = "v";
        }
        return new GemmBlocking(eu, chunk, k, eu, over, true, 0, why);
    }

    private static GemmBlocking wide(CpuTarget cpu, int bytes, long eu, long ev, long k, boolean parallelAllowed) {
        int lanes = cpu.lanes(bytes);
        long mu = Math.min(AVX512_TILE_U, eu);
        long nv = Math.min((long) VECTORS_PER_ROW * lanes, ev);
        List<String> why = new ArrayList<>();
        why.add(tileReason(cpu, bytes, AVX512_TILE_U, VECTORS_PER_ROW * lanes, mu, nv));
        // kc: one v panel (kc x nv) in 2/3 of L1d; equal K blocks so the last is not a sliver
        long kcMax = Math.max(K_QUANTUM, Math.min(8 * K_QUANTUM,
                cpu.l1dBytes() * 2 / 3 / (nv * bytes) / K_QUANTUM * K_QUANTUM));
        long kBlocks = ceil(k, kcMax);
        long kc = ceil(k, kBlocks);
        why.add("K block " + kc + " (" + kBlocks + " equal blocks of at most " + kcMax + ": a " + kcMax + "x" + nv
                + " v panel is " + kib(kcMax * nv * bytes) + " KiB, 2/3 of the " + kib(cpu.l1dBytes())
                + " KiB L1d)");
        // mc: u panels of a block (mc x kc) in a quarter of L2; two blocks or more per core if that leaves each 4+
        // tiles, balanced across the cores (balancedBlockTiles)
        long mcCache = Math.max(mu, cpu.l2Bytes() / 4 / (kc * bytes) / mu * mu);
        long share = ceil(eu, 2L * cpu.cores());
        boolean splitU = share >= MIN_TILES_PER_U_SHARE * mu;
        long mc = splitU ? balancedBlockTiles(ceil(eu, mu), mcCache / mu, cpu.cores()) * mu
                : Math.min(mcCache, ceil(eu, mu) * mu);
        why.add(mc + "-row u blocks (the u panels of a block take at most a quarter of the " + kib(cpu.l2Bytes())
                + " KiB L2: " + mcCache + " rows" + (splitU ? "; two blocks or more per core for " + cpu.cores()
                + " cores, sized so the most loaded core runs the fewest tiles" : "") + ")");
        String over = parallel(eu, ev, mu, nv, mc, parallelAllowed, cpu, why);
        return new GemmBlocking(mu, nv, kc, mc, over, false, workers(over, eu, ev, mu, nv, kc, mc, bytes, cpu, why),
                why);
    }

    /**
     * The runs that pack V themselves (see {@link #workers}), one a core and at most one per u block or v panel: over
     * u blocks when a K block of V, {@code kc x round_up(ev, nv)}, takes at most half of L2; over v panels always (each
     * run packs only its own panels, and the short u block's panels, a few KiB, each); else 0. On 2 cores of an
     * AVX-512 Xeon (emeraldrapids, 2 MiB L2; alternated with the code before, same process, 2026-12-07): 256^3 went
     * from 0.99 to 1.24 of numpy, 512^3 from 0.99 to 1.12, 1000^3 from 0.99 to 1.02, 511x769x257 from 1.12 to 1.19,
     * 64x1000x1000 (over v) from 0.93 to 1.00 and 48x2048x512 from 1.08 to 1.12; 1024^3 and 64x4096x4096 did not move.
     * At 2048^3 and 4096^3 (K blocks of V of 2 and 4 MiB) packing once for both cores tied with packing per core.
     */
    private static long workers(String over, long eu, long ev, long mu, long nv, long kc, long mc, int bytes,
            CpuTarget cpu, List<String> why) {
        long panels = ceil(ev, nv);
        long vBlockBytes = kc * panels * nv * bytes;
        boolean overU = over.equals("u") && vBlockBytes <= cpu.l2Bytes() / 2;
        if (!overU && !over.equals("v")) {
            return 0;
        }
        long workers = Math.min(cpu.cores(), overU ? ceil(eu, mc) : panels);
        why.add("one parallel region: each of " + workers + " cores runs its own " + (overU ? "u blocks" : "v panels")
                + " through every K block, packing V into its own panels where V is packed per call"
                + (overU ? " (a K block of them is " + kib(vBlockBytes) + " KiB, at most half the "
                + kib(cpu.l2Bytes()) + " KiB L2)" : ""));
        return workers;
    }

    /**
     * Tiles per u block, at least two blocks a core: of the sizes up to {@code maxTiles}, the largest whose most loaded
     * core runs the fewest tiles, a parallel loop handing each core a contiguous run of {@code ceil(blocks / cores)}
     * blocks. At 1000 rows (125 tiles) on 2 cores a quarter each (32, 32, 32, 29) gives the cores 64 and 61 tiles;
     * blocks of 21 tiles give them 63 and 62.
     */
    static long balancedBlockTiles(long tiles, long maxTiles, int cores) {
        long best = 1;
        long bestLoad = Long.MAX_VALUE;
        for (long t = 1; t <= Math.min(Math.max(1, maxTiles), ceil(tiles, 2L * cores)); t++) {
            long load = Math.min(tiles, ceil(ceil(tiles, t), cores) * t);
            if (load <= bestLoad) {
                best = t;
                bestLoad = load;
            }
        }
        return best;
    }

    private static GemmBlocking tunedOnAvx2(CpuTarget cpu, int bytes, long eu, long ev, long k,
            boolean parallelAllowed) {
        // two vectors of 256 bits per row whatever the target (the plan measured on znver3)
        int lanes = Math.max(1, 256 / 8 / bytes);
        long mu = Math.min(AVX2_TILE_U, eu);
        long nv = Math.min((long) VECTORS_PER_ROW * lanes, ev);
        List<String> why = new ArrayList<>();
        why.add(tileReason(cpu, bytes, AVX2_TILE_U, VECTORS_PER_ROW * lanes, mu, nv));
        long kc = Math.min(AVX2_BLOCK_K, k);
        long mc = Math.min(AVX2_TILES_PER_U_BLOCK, ceil(eu, mu)) * mu;
        why.add("K block " + kc + ", " + mc + "-row u blocks (the AVX2 plan's constants: a 256-deep v panel is "
                + "half a 32 KiB L1d)");
        String over = parallel(eu, ev, mu, nv, mc, parallelAllowed, cpu, why);
        return new GemmBlocking(mu, nv, kc, mc, over, false, workers(over, eu, ev, mu, nv, kc, mc, bytes, cpu, why),
                why);
    }

    /** "u" when there are two u blocks or more, else "v" when there are two v panels or more, else "none". */
    private static String parallel(long eu, long ev, long mu, long nv, long mc, boolean allowed, CpuTarget cpu,
            List<String> why) {
        long uBlocks = ceil(eu, mc);
        long vPanels = ceil(ev, nv);
        if (!allowed) {
            return "none";
        }
        if (uBlocks >= 2) {
            why.add("parallel over " + uBlocks + " u blocks (" + cpu.cores() + " cores)");
            return "u";
        }
        if (vPanels >= 2) {
            why.add("one u block: parallel over its " + vPanels + " v panels (" + cpu.cores() + " cores)");
            return "v";
        }
        return "none";
    }

    private static String tileReason(CpuTarget cpu, int bytes, int rows, int cols, long mu, long nv) {
        int lanes = cpu.lanes(bytes);
        String clipped = mu < rows || nv < cols ? ", clipped to the " + mu + "x" + nv + " accumulator" : "";
        String isa = cpu.isa().equals("avx512") ? "AVX-512" : cpu.isa().toUpperCase();
        if (cpu.wideVectors()) {
            return "register tile " + rows + "x" + cols + " (" + isa + ": " + cpu.vectorRegisters() + " "
                    + cpu.registerName() + " registers, " + lanes + " " + (8 * bytes) + "-bit lanes; " + rows * 2
                    + " accumulators + 2 panel vectors + 1 broadcast" + clipped + ")";
        }
        String named = isa + (cpu.mcpu().isEmpty() ? "" : " " + cpu.mcpu());
        if (cpu.vectorBits() >= 256) {
            return "register tile " + rows + "x" + cols + " (" + named + ": " + cpu.vectorRegisters() + " "
                    + cpu.registerName() + " registers, " + lanes + " " + (8 * bytes) + "-bit lanes; " + rows * 2
                    + " accumulators + 2 panel vectors + 1 broadcast" + clipped + ")";
        }
        return "register tile " + rows + "x" + cols + " (" + named + ": no AVX-512, so the AVX2 plan, sized for 16 ymm"
                + " registers" + clipped + ")";
    }

    private static long ceil(long a, long b) {
        return (a + b - 1) / b;
    }

    private static long kib(long bytes) {
        return bytes / 1024;
    }
}
