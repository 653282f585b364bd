package org.axe4j.schedules.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Iter;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Property;
import org.axe4j.layout.Shape;
import org.axe4j.layout.Swizzle;
import org.axe4j.schedules.Decision;
import org.axe4j.schedules.Modular;
import org.axe4j.schedules.Operand;
import org.axe4j.schedules.Request;
import org.junit.jupiter.api.Test;

/**
 * The TMA plan, walked box by box the way the hardware walks it (box coordinates in tensor-map order -> global
 * address through the map's dims and strides, -> shared address through the box's row-major order and the
 * swizzle), moves exactly the region's element pairs of the two layouts; every limit of the tensor map holds; and
 * on simple strided 2-D copies the rule declines exactly when no box of any shape reproduces the copy.
 */
class CudaTmaRuleTest {
    static final String TMA = "axe4j-cuda-tma";
    /** Cases per property: each enumerates whole tiles element by element. */
    static final int CASES = Math.min(Property.CASES, 800);

    /** A copy_async request at thread scope for sm_90a; {@code load}: global -> shared with an mbar. */
    static Request call(Operand dst, Operand src, boolean load, Swizzle swizzle) {
        return call(dst, src, load, swizzle, load ? "[\"mbar\"]" : "[]");
    }

    /** The same with the call's config keys as a JSON array. */
    static Request call(Operand dst, Operand src, boolean load, Swizzle swizzle, String config) {
        StringBuilder sb = new StringBuilder("{\"op\":\"copy_async\",\"target\":\"cuda\",\"scope\":\"thread\","
                + "\"operands\":[");
        List<Operand> ops = List.of(dst, src);
        for (int i = 0; i < 2; i++) {
            Operand o = ops.get(i);
            sb.append(i == 0 ? "" : ",").append("{\"role\":\"").append(o.role()).append("\",\"name\":\"")
                    .append(o.name()).append("\",\"dtype\":\"").append(o.dtype()).append("\",\"shape\":")
                    .append(Arrays.toString(o.shape())).append(",\"start\":").append(Arrays.toString(o.start()))
                    .append(",\"extent\":").append(Arrays.toString(o.extent())).append('}');
        }
        sb.append("],\"params\":{\"threads\":1,\"arch\":\"sm_90a\",\"config\":").append(config)
                .append(",\"storage\":{\"dst\":\"").append(load ? "shared.dyn" : "global").append("\",\"src0\":\"")
                .append(load ? "global" : "shared.dyn").append("\"}}}");
        List<Swizzle> swizzles = load ? Arrays.asList(swizzle, null) : Arrays.asList(null, swizzle);
        return Request.fromJson(sb.toString(), List.of(dst.layout(), src.layout()), swizzles);
    }

    static Decision decide(Operand shared, Operand global, boolean load, Swizzle swizzle) {
        Operand s = rename(shared, load ? "dst" : "src0");
        Operand g = rename(global, load ? "src0" : "dst");
        return CudaDispatch.decide(TMA, load ? call(s, g, true, swizzle) : call(g, s, false, swizzle));
    }

    static Operand rename(Operand o, String role) {
        return new Operand(role, o.name(), o.dtype(), o.shape(), o.start(), o.extent(), o.layout(), o.elemOffset(),
                o.symbolic());
    }

    /** "shared<->global" for every element the plan's boxes move; asserts coordinates stay inside the map. */
    static List<String> walk(Map<String, Object> plan, Swizzle swizzle) {
        return walk(plan, swizzle, null);
    }

    /**
     * As {@link #walk(Map, Swizzle)}, a run-time start (map dim start -1) at {@code globalStart}: its coordinate is
     * {@code floor(start / step)}, as the emitter computes it.
     */
    static List<String> walk(Map<String, Object> plan, Swizzle swizzle, long[] globalStart) {
        return walk(plan, swizzle, globalStart, false);
    }

    /**
     * As {@link #walk(Map, Swizzle, long[])}; with {@code clip}, box elements whose coordinates fall outside the map
     * are dropped (TMA fills them with zeros on a load and does not store them) instead of failing the test.
     */
    @SuppressWarnings("unchecked")
    static List<String> walk(Map<String, Object> plan, Swizzle swizzle, long[] globalStart, boolean clip) {
        List<Map<String, Object>> dims = (List<Map<String, Object>>) plan.get("dims");
        Map<String, Map<String, Object>> access = (Map<String, Map<String, Object>>) plan.get("access");
        long sharedBase = (Long) access.get((String) plan.get("shared")).get("base");
        long globalBase = (Long) plan.get("global_base");
        int rank = dims.size();
        long[] box = new long[rank];
        long boxElements = 1;
        for (int j = 0; j < rank; j++) {
            box[j] = (Long) dims.get(j).get("box");
            boxElements *= box[j];
            assertTrue(box[j] >= 1 && box[j] <= 256, "box " + Arrays.toString(box));
            if (j > 0) {
                assertEquals(0, (Long) dims.get(j).get("stride") * bytes(plan) % 16, "stride of dim " + j);
            }
        }
        assertEquals(1L, dims.get(0).get("stride"));
        assertTrue(rank <= 5);
        assertEquals(0, box[0] * bytes(plan) % 16, "inner box bytes");
        List<String> out = new ArrayList<>();
        for (Map<String, Object> issue : (List<Map<String, Object>>) plan.get("issues")) {
            List<Long> inc = (List<Long>) issue.get("coords");
            long start = sharedBase + (Long) issue.get("shared");
            for (long flat = 0; flat < boxElements; flat++) {
                long g = globalBase;
                long s = start;
                long rest = flat;
                long pitch = 1;
                boolean inside = true;
                for (int j = 0; j < rank; j++) {
                    long c = rest % box[j]; // dim 0 fastest
                    rest /= box[j];
                    long first = (Long) dims.get(j).get("start");
                    if (first < 0) {
                        first = Math.floorDiv(globalStart[((Long) dims.get(j).get("dim")).intValue()],
                                (Long) dims.get(j).get("step"));
                    }
                    long coord = first + inc.get(j) + c;
                    boolean in = coord >= 0 && coord < (Long) dims.get(j).get("extent");
                    assertTrue(in || clip, "coordinate " + coord + " of dim " + j + " outside the map: " + plan);
                    inside &= in;
                    g += coord * (Long) dims.get(j).get("stride");
                    s += c * pitch;
                    pitch *= box[j];
                }
                if (inside) {
                    out.add(swizzle.apply(s) + "<->" + g);
                }
            }
        }
        return out;
    }

    static long bytes(Map<String, Object> plan) {
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> dims = (List<Map<String, Object>>) plan.get("dims");
        long boxElements = dims.stream().mapToLong(d -> (Long) d.get("box")).reduce(1, (a, b) -> a * b);
        return (Long) plan.get("box_bytes") / boxElements;
    }

    /** The copy by enumeration: region element i of both operands, "swz(shared address)<->global address". */
    static List<String> expected(Operand shared, Operand global, Swizzle swizzle) {
        List<String> out = new ArrayList<>();
        for (long flat = 0; flat < shared.elements(); flat++) {
            long s = address(shared, flat);
            long g = address(global, flat);
            out.add(swizzle.apply(s) + "<->" + g);
        }
        return out;
    }

    /** Address of the flat-th region element (row-major over the region's loop extents). */
    static long address(Operand o, long flat) {
        int[] dims = o.loopDims();
        long[] ext = o.loopExtents();
        long[] coord = o.start().clone();
        for (int k = dims.length - 1; k >= 0; k--) {
            coord[dims[k]] += flat % ext[k];
            flat /= ext[k];
        }
        return o.elemOffset() + o.layout().apply(Shape.of(o.shape()), coord).get(0).get(Axis.M);
    }

    static Layout strided(long[] extents, long[] strides) {
        List<Iter> it = new ArrayList<>();
        for (int k = 0; k < extents.length; k++) {
            it.add(new Iter(extents[k], strides[k], Axis.M));
        }
        return Layout.of(it, List.of(), Map.of());
    }

    /** Row-major over {@code shape} with the innermost pitch padded by {@code pad} elements. */
    static Layout padded(long[] shape, long pad) {
        long[] strides = new long[shape.length];
        long next = 1;
        for (int k = shape.length - 1; k >= 0; k--) {
            strides[k] = next;
            next *= shape[k] + (k == shape.length - 1 ? pad : 0);
        }
        return strided(shape, strides);
    }

    /** (rows, cols) as column blocks of w: S[(rows, cols/w, w):(w, rows*w, 1)], the no-swizzle MMA atom tiling. */
    static Layout columnBlocks(long rows, long cols, long w) {
        return strided(new long[] {rows, cols / w, w}, new long[] {w, rows * w, 1});
    }

    @Test
    void boxesWalkExactlyTheRegionOfBothLayouts() {
        int[] counts = new int[4]; // accepted, several boxes, swizzled, declined
        Property.forAll("cuda tma plan = layout maps", CASES, r -> {
            String dtype = new String[] {"float16", "float32", "int8"}[r.nextInt(3)];
            int bytes = dtype.equals("float32") ? 4 : dtype.equals("float16") ? 2 : 1;
            long rows = new long[] {8, 16, 32}[r.nextInt(3)];
            long cols = new long[] {16, 32, 64, 128, 256}[r.nextInt(5)] / bytes * 2;
            long[] tile = {rows, cols};
            Swizzle swizzle = Swizzle.IDENTITY;
            Layout s;
            int kind = r.nextInt(6);
            if (kind == 0) {
                s = padded(tile, 0);
            } else if (kind == 5) {
                // the two row halves one half apart (a gap of one box between them): one box per half
                s = strided(new long[] {2, rows / 2, cols}, new long[] {rows * cols, cols, 1});
            } else if (kind == 1) {
                s = padded(tile, 16 / bytes * r.nextInt(3));
            } else {
                // swizzle rows of 32, 64 or 128 bytes (or a blocked tile without swizzle)
                int mode = 1 + r.nextInt(3);
                long w = (16L << mode) / bytes;
                if (cols % w != 0) {
                    w = cols;
                }
                s = columnBlocks(rows, cols, w);
                if (kind >= 3 && w * bytes == 16L << mode) {
                    swizzle = new Swizzle(mode, Long.numberOfTrailingZeros(16 / bytes), 3);
                }
            }
            long gRows = rows * (1 + r.nextInt(3));
            long gCols = cols * (1 + r.nextInt(2)) + (r.nextInt(4) == 0 ? 16 / bytes : 0);
            long[] gShape = {gRows, gCols};
            Layout g = r.nextInt(6) == 0 ? strided(gShape, new long[] {1, gRows})
                    : padded(gShape, r.nextInt(4) == 0 ? r.nextInt(3) * 8 / bytes : 0);
            long[] gStart = {r.nextInt((int) (gRows - rows + 1)) / 8 * 8,
                    r.nextBoolean() ? 0 : (gCols - cols) / 2};
            Operand shared = new Operand("dst", "S", dtype, tile, new long[2], tile, s);
            Operand global = new Operand("src0", "G", dtype, gShape, gStart, tile, g);
            boolean load = r.nextBoolean();
            Decision d = decide(shared, global, load, swizzle);
            if (!d.accepted()) {
                counts[3]++;
                assertTrue(d.reason().startsWith("copy_async: "), d.reason());
                return;
            }
            counts[0]++;
            if (((List<?>) d.planJson().get("issues")).size() > 1) {
                counts[1]++;
            }
            if (!swizzle.isIdentity()) {
                counts[2]++;
                assertEquals((long) swizzle.bits(), d.planJson().get("swizzle"));
            }
            assertEquals(load ? "g2s" : "s2g", d.planJson().get("direction"));
            List<String> got = walk(d.planJson(), swizzle);
            List<String> want = expected(shared, global, swizzle);
            Collections.sort(got);
            Collections.sort(want);
            assertEquals(want, got, d.planJson().toString());
        });
        assertTrue(counts[0] > CASES / 4, "accepted " + counts[0]);
        assertTrue(counts[1] > CASES / 20, "several boxes " + counts[1]);
        assertTrue(counts[2] > CASES / 20, "swizzled " + counts[2]);
        assertTrue(counts[3] > CASES / 20, "declined " + counts[3]);
    }

    /**
     * A load whose global start in one dim is known only at run time as {@code c n + b}: when accepted, the boxes
     * walked at every value the start takes move exactly the region of both layouts; a tile at a multiple of its
     * extent ({@code bx * W}, {@code kt * BK}) whose constant plan exists gets the same boxes at run time.
     */
    @Test
    void runTimeGlobalStartsWalkTheRegionAtEveryValue() {
        int[] counts = new int[3]; // accepted, tile-aligned compared with the constant plan, declined
        Property.forAll("cuda tma plan at run-time starts = layout maps", CASES, r -> {
            String dtype = r.nextBoolean() ? "float16" : "float32";
            int bytes = dtype.equals("float32") ? 4 : 2;
            long rows = new long[] {8, 16, 32}[r.nextInt(3)];
            long cols = new long[] {32, 64, 128}[r.nextInt(3)] / bytes * 2;
            long[] tile = {rows, cols};
            Swizzle swizzle = Swizzle.IDENTITY;
            Layout s = padded(tile, 0);
            int mode = 1 + r.nextInt(3);
            long w = (16L << mode) / bytes;
            if (r.nextBoolean() && cols % w == 0 && cols > w) {
                s = columnBlocks(rows, cols, w); // several swizzle rows: the K dim is cut into boxes
                swizzle = new Swizzle(mode, Long.numberOfTrailingZeros(16 / bytes), 3);
            }
            long[] gShape = {rows * (1 + r.nextInt(4)), cols * (1 + r.nextInt(4))};
            Layout g = padded(gShape, r.nextInt(3) == 0 ? 16 / bytes : 0);
            int d = r.nextInt(2);
            long[] gStart = {r.nextInt((int) (gShape[0] - rows + 1)) / 8 * 8, r.nextInt((int) (gShape[1] - cols + 1))};
            if (r.nextBoolean()) {
                gStart[d] = gStart[d] / tile[d] * tile[d];
            }
            long c = new long[] {1, 8, 16, tile[d], 2 * tile[d], 64}[r.nextInt(6)];
            Modular start = new Modular(c, gStart[d]);
            Operand shared = new Operand("dst", "S", dtype, tile, new long[2], tile, s);
            Operand global = new Operand("src0", "G", dtype, gShape, gStart, tile, g);
            Operand rt = global.withRunTimeStart(d, start);
            String json = CudaRunTimeStartsTest.request("copy_async", "thread", 1, List.of(shared, rt))
                    .replace("\"params\":{", "\"params\":{\"arch\":\"sm_90a\",\"config\":[\"mbar\"],");
            Decision run = CudaDispatch.decide(TMA, Request.fromJson(json, List.of(s, g), Arrays.asList(swizzle,
                    null)));
            List<Long> values = start.valuesIn(0, gShape[d] - tile[d] + 1);
            Decision constant = decide(shared, global, true, swizzle);
            if (c % tile[d] == 0 && gStart[d] % tile[d] == 0 && constant.accepted()) {
                counts[1]++;
                assertTrue(run.accepted(), "a tile at " + start + " x its extent lost its TMA: " + run.reason());
                assertEquals(boxes(constant.planJson()), boxes(run.planJson()));
                assertEquals(((List<?>) constant.planJson().get("issues")).size(),
                        ((List<?>) run.planJson().get("issues")).size());
            }
            if (!run.accepted()) {
                counts[2]++;
                assertTrue(run.reason().startsWith("copy_async: "), run.reason());
                return;
            }
            counts[0]++;
            for (long v : values) {
                long[] sv = gStart.clone();
                sv[d] = v;
                Operand at = new Operand("src0", "G", dtype, gShape, sv, tile, g);
                List<String> got = walk(run.planJson(), swizzle, sv);
                List<String> want = expected(shared, at, swizzle);
                Collections.sort(got);
                Collections.sort(want);
                assertEquals(want, got, rt + " at " + v + ": " + run.planJson());
            }
        });
        assertTrue(counts[0] > CASES / 4, Arrays.toString(counts));
        assertTrue(counts[1] > CASES / 10, Arrays.toString(counts));
        assertTrue(counts[2] > CASES / 20, Arrays.toString(counts));
    }

    @SuppressWarnings("unchecked")
    static List<Object> boxes(Map<String, Object> plan) {
        return ((List<Map<String, Object>>) plan.get("dims")).stream().map(m -> m.get("box")).map(Object.class::cast)
                .toList();
    }

    /**
     * Strided 2-D copies of a whole tile at coordinate 0 of both buffers: a TMA exists iff some box (b0 | inner
     * extent, b1 | outer extent, each <= 256) placed over the tile, one box per instruction, is row-major in
     * shared memory with every box start 128-byte aligned, its inner run a multiple of 16 bytes, the inner dim
     * contiguous in both layouts and the global pitch a multiple of 16 bytes. Checked by enumerating every box.
     */
    @Test
    void declinesExactlyWhenNoBoxReproducesASimpleStridedCopy() {
        int[] counts = new int[2];
        Property.forAll("cuda tma accepts iff a box exists", CASES, r -> {
            String dtype = r.nextBoolean() ? "float16" : "float32";
            int bytes = dtype.equals("float32") ? 4 : 2;
            long rows = new long[] {1, 2, 4, 8, 16, 24, 512}[r.nextInt(7)];
            // a dim over 256 needs several boxes along it; kept to small tiles to enumerate quickly
            long cols = rows == 512 ? new long[] {4, 8, 16}[r.nextInt(3)]
                    : new long[] {4, 8, 12, 16, 32, 48, 64, rows <= 2 ? 512 : 40}[r.nextInt(8)];
            long[] shape = {rows, cols};
            Layout s = layout2d(r, shape);
            Layout g = layout2d(r, shape);
            Operand shared = new Operand("dst", "S", dtype, shape, new long[2], shape, s);
            Operand global = new Operand("src0", "G", dtype, shape, new long[2], shape, g);
            Decision d = decide(shared, global, true, Swizzle.IDENTITY);
            boolean exists = someBoxWorks(s, g, shape, bytes);
            assertEquals(exists, d.accepted(), s + " <- " + g + " " + dtype + ": " + d.reason());
            counts[exists ? 0 : 1]++;
            if (exists) {
                List<String> got = walk(d.planJson(), Swizzle.IDENTITY);
                List<String> want = expected(shared, global, Swizzle.IDENTITY);
                Collections.sort(got);
                Collections.sort(want);
                assertEquals(want, got);
            }
        });
        assertTrue(counts[0] > CASES / 5 && counts[1] > CASES / 5, Arrays.toString(counts));
    }

    /** Row-major or column-major, pitch padded by 0..8 elements. */
    static Layout layout2d(Random r, long[] shape) {
        long pad = new long[] {0, 0, 4, 8}[r.nextInt(4)];
        if (r.nextInt(4) == 0) {
            return strided(shape, new long[] {1, shape[0] + pad});
        }
        return strided(shape, new long[] {shape[1] + pad, 1});
    }

    static boolean someBoxWorks(Layout s, Layout g, long[] shape, int bytes) {
        for (int inner = 0; inner < 2; inner++) {
            int outer = 1 - inner;
            long ni = shape[inner];
            long no = shape[outer];
            if (ni > 1 && stride(g, shape, inner) != 1) {
                continue;
            }
            if (no > 1 && (stride(g, shape, outer) * bytes) % 16 != 0) {
                continue;
            }
            for (long b0 = 1; b0 <= Math.min(ni, 256); b0++) {
                for (long b1 = 1; b1 <= Math.min(no, 256); b1++) {
                    if (ni % b0 == 0 && no % b1 == 0 && (b0 * bytes) % 16 == 0
                            && boxesFit(s, shape, inner, b0, b1, bytes)) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    /** Every box of b0 (inner dim) x b1 is row-major from its first element, which is 128-byte aligned. */
    static boolean boxesFit(Layout s, long[] shape, int inner, long b0, long b1, int bytes) {
        for (long o0 = 0; o0 < shape[1 - inner]; o0 += b1) {
            for (long i0 = 0; i0 < shape[inner]; i0 += b0) {
                long first = at(s, shape, inner, o0, i0);
                if ((first * bytes) % 128 != 0) {
                    return false;
                }
                for (long o = 0; o < b1; o++) {
                    for (long i = 0; i < b0; i++) {
                        if (at(s, shape, inner, o0 + o, i0 + i) != first + o * b0 + i) {
                            return false;
                        }
                    }
                }
            }
        }
        return true;
    }

    static long at(Layout l, long[] shape, int inner, long outerIndex, long innerIndex) {
        long[] c = new long[2];
        c[inner] = innerIndex;
        c[1 - inner] = outerIndex;
        return l.apply(Shape.of(shape), c).get(0).get(Axis.M);
    }

    static long stride(Layout l, long[] shape, int dim) {
        long[] c = new long[2];
        c[dim] = 1;
        return l.apply(Shape.of(shape), c).get(0).get(Axis.M) - l.apply(Shape.of(shape), 0, 0).get(0).get(Axis.M);
    }

    @Test
    void swizzled128ByteTileIsOneThreeDimensionalBox() {
        // fp16 64 x 128 as two column blocks of 64 x 64 in 128-byte rows (Swizzle<3,3,3>), global row-major
        // 256 x 512: the blocks follow each other in shared memory, so one box (64 cols, 64 rows, 2 blocks) whose
        // third dim cuts the global column dim at 64 covers the tile
        Layout s = columnBlocks(64, 128, 64);
        long[] tile = {64, 128};
        Operand shared = new Operand("dst", "A_smem", "float16", tile, new long[2], tile, s);
        Operand global = new Operand("src0", "A", "float16", new long[] {256, 512}, new long[] {64, 128}, tile,
                padded(new long[] {256, 512}, 0));
        Swizzle swizzle = new Swizzle(3, 3, 3);
        Decision d = decide(shared, global, true, swizzle);
        assertTrue(d.accepted(), d.reason());
        assertEquals(3L, d.planJson().get("swizzle"));
        assertEquals(1, ((List<?>) d.planJson().get("issues")).size());
        assertEquals("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes",
                d.planJson().get("instruction"));
        List<String> got = walk(d.planJson(), swizzle);
        List<String> want = expected(shared, global, swizzle);
        Collections.sort(got);
        Collections.sort(want);
        assertEquals(want, got);
    }

    @Test
    void aCtaMaskMulticastsLoadsAndIsRefusedOnStores() {
        long[] tile = {64, 64};
        Operand shared = new Operand("dst", "B_smem", "float16", tile, new long[2], tile, padded(tile, 0));
        Operand global = new Operand("src0", "B", "float16", new long[] {256, 64}, new long[] {64, 0}, tile,
                padded(new long[] {256, 64}, 0));
        Decision d = CudaDispatch.decide(TMA, call(shared, global, true, Swizzle.IDENTITY,
                "[\"cta_mask\",\"mbar\"]"));
        assertTrue(d.accepted(), d.reason());
        assertEquals("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster",
                d.planJson().get("instruction"));
        assertEquals(true, d.planJson().get("multicast"));
        assertTrue(d.planJson().get("notes").toString().contains("multicast: the box lands at the same shared offset"));
        d = CudaDispatch.decide(TMA, call(shared, global, true, Swizzle.IDENTITY, "[\"cta_group\",\"mbar\"]"));
        assertTrue(d.accepted(), d.reason());
        assertEquals(false, d.planJson().get("multicast"));
        Operand src = new Operand("src0", "D_smem", "float16", tile, new long[2], tile, padded(tile, 0));
        Operand dst = new Operand("dst", "D", "float16", new long[] {256, 64}, new long[] {64, 0}, tile,
                padded(new long[] {256, 64}, 0));
        d = CudaDispatch.decide(TMA, call(dst, src, false, Swizzle.IDENTITY, "[\"cta_mask\"]"));
        assertFalse(d.accepted());
        assertTrue(d.reason().contains("cta_mask multicasts loads into the cluster's CTAs; a TMA store has none"),
                d.reason());
        d = CudaDispatch.decide(TMA, call(shared, global, true, Swizzle.IDENTITY, "[\"mbar\",\"other\"]"));
        assertTrue(d.reason().contains("does not implement the config key other (only cta_group, cta_mask, mbar)"),
                d.reason());
    }

    @Test
    void declinesNameTheOpTheLayoutsAndTheFailedLimit() {
        long[] tile = {32, 32};
        Operand global = new Operand("src0", "A", "float16", tile, new long[2], tile, padded(tile, 0));
        Operand transposed = new Operand("dst", "A_smem", "float16", tile, new long[2], tile,
                strided(tile, new long[] {1, 32}));
        Decision d = decide(transposed, global, true, Swizzle.IDENTITY);
        assertFalse(d.accepted());
        assertTrue(d.reason().contains("copy_async: the region's shared-contiguous loop (extent 32) moves the global "
                + "address by 32 elements; TMA's innermost box dim must be contiguous in global memory"), d.reason());
        assertTrue(d.reason().contains("S[(32,32):(1,32)]") && d.reason().contains("S[(32,32):(32,1)]"),
                d.reason());

        Operand narrow = new Operand("dst", "A_smem", "float16", new long[] {32, 4}, new long[2],
                new long[] {32, 4}, padded(new long[] {32, 4}, 0));
        Operand g4 = new Operand("src0", "A", "float16", tile, new long[2], new long[] {32, 4}, padded(tile, 0));
        d = decide(narrow, g4, true, Swizzle.IDENTITY);
        assertTrue(d.reason().contains("the innermost box dim is 4 elements = 8 bytes, not a multiple of 16"),
                d.reason());

        Operand wrongSwizzle = new Operand("dst", "A_smem", "float16", tile, new long[2], tile, padded(tile, 0));
        d = decide(wrongSwizzle, global, true, new Swizzle(2, 2, 3));
        assertTrue(d.reason().contains("TMA swizzles 16-byte units: Swizzle<B,3,3> for float16"), d.reason());

        // row halves 128 bytes apart beyond each other: aligned, but not whole boxes apart (tile-of fails)
        Operand gapped = new Operand("dst", "A_smem", "float16", tile, new long[2], tile,
                strided(new long[] {2, 16, 32}, new long[] {16 * 32 + 64, 32, 1}));
        d = decide(gapped, global, true, Swizzle.IDENTITY);
        assertTrue(d.reason().contains("copy_async: the shared tile dst=A_smem[0:32, 0:32] float16 "
                + "S[(2,16,32):(576,32,1)] is not whole TMA boxes [32, 16]: "), d.reason());

        long[] big = {8, 8, 8, 8, 8, 8};
        Layout sixD = padded(big, 0);
        Operand s6 = new Operand("dst", "S", "float32", big, new long[6], big, strided(big,
                new long[] {8, 64, 512, 4096, 32768, 1}));
        Operand g6 = new Operand("src0", "G", "float32", big, new long[6], big, sixD);
        d = decide(s6, g6, true, Swizzle.IDENTITY);
        assertTrue(d.reason().contains("copy_async: the tensor map of src0=G[0:8, 0:8, 0:8, 0:8, 0:8, 0:8] float32 "
                + "S[(8,8,8,8,8,8):(32768,4096,512,64,8,1)] needs 6 dims (extents [8, 8, 8, 8, 8, 8]), more than "
                + "TMA's 5"), d.reason());

        d = CudaDispatch.decide(TMA, Request.fromJson(CudaRulesTest.request("copy_async", "thread", 1,
                List.of(wrongSwizzle, global)).replace("\"params\":{", "\"params\":{\"arch\":\"sm_90a\","),
                List.of(wrongSwizzle.layout(), global.layout())));
        assertTrue(d.reason().contains("a TMA load completes on an mbarrier; pass mbar="), d.reason());
        d = CudaDispatch.decide(TMA, Request.fromJson(CudaRulesTest.request("copy_async", "thread", 1,
                List.of(wrongSwizzle, global)).replace("\"params\":{", "\"params\":{\"arch\":\"sm_80\","),
                List.of(wrongSwizzle.layout(), global.layout())));
        assertTrue(d.reason().contains("TMA needs sm_90 or newer; the target arch is 'sm_80'"), d.reason());
        d = CudaDispatch.decide(TMA, Request.fromJson(CudaRulesTest.request("copy_async", "warp", 32,
                List.of(wrongSwizzle, global)), List.of(wrongSwizzle.layout(), global.layout())));
        assertTrue(d.reason().contains("TMA is issued by one thread; execution scope warp has 32 threads"),
                d.reason());
    }

    /** A k-loop into a ring of stages: global column start and shared stage are loop variables. */
    static Request runTime(Layout stage, Swizzle swizzle) {
        return runTime(stage, swizzle, "");
    }

    /** As {@link #runTime(Layout, Swizzle)}, {@code modulus} the params' start_modulus entry ("" for none). */
    static Request runTime(Layout stage, Swizzle swizzle, String modulus) {
        String json = "{\"op\":\"copy_async\",\"target\":\"cuda\",\"scope\":\"thread\",\"operands\":["
                + "{\"role\":\"dst\",\"name\":\"A_smem\",\"dtype\":\"float16\",\"shape\":[2,64,64],"
                + "\"start\":[null,0,0],\"extent\":[1,64,64]},"
                + "{\"role\":\"src0\",\"name\":\"A\",\"dtype\":\"float16\",\"shape\":[128,256],"
                + "\"start\":[64,null],\"extent\":[64,64]}],"
                + "\"params\":{\"threads\":1,\"arch\":\"sm_100a\",\"config\":[\"mbar\"]," + modulus
                + "\"storage\":{\"dst\":\"shared.dyn\",\"src0\":\"global\"}}}";
        return Request.fromJson(json, List.of(stage, padded(new long[] {128, 256}, 0)),
                Arrays.asList(swizzle, null));
    }

    @Test
    void runTimeStartsBecomeRunTimeCoordinatesAndSharedOffsets() {
        Decision d = CudaDispatch.decide(TMA, runTime(strided(new long[] {2, 64, 64}, new long[] {4096, 64, 1}),
                new Swizzle(3, 3, 3)));
        assertTrue(d.accepted(), d.reason());
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> dims = (List<Map<String, Object>>) d.planJson().get("dims");
        assertEquals(-1L, dims.get(0).get("start")); // the column: read from the loop variable at run time
        assertEquals(1L, dims.get(0).get("dim"));
        assertEquals(64L, dims.get(1).get("start"));
        @SuppressWarnings("unchecked")
        Map<String, Map<String, Object>> access = (Map<String, Map<String, Object>>) d.planJson().get("access");
        assertEquals(Map.of("0", 4096L), access.get("dst").get("start_strides"));

        // 64B-swizzled column blocks of 32 cut the global column dim at 32: a column start nothing is known of may
        // fall anywhere in a block, so its coordinate in the inner map dim is not fixed
        Layout blocks = strided(new long[] {2, 64, 2, 32}, new long[] {4096, 32, 2048, 1});
        d = CudaDispatch.decide(TMA, runTime(blocks, new Swizzle(2, 3, 3)));
        assertFalse(d.accepted());
        assertTrue(d.reason().contains("copy_async: global dim 1 of src0=A[64:128, s1:s1+64] float16 "
                + "S[(128,256):(256,1)] starts at a run-time index known as 1n, but the tensor map splits it (map dim "
                + "0: step 1, extent 32) and that start's coordinate in it is not fixed"), d.reason());
        // the k-loop's start kt * 64 (TVM: 64 n): the inner coordinate is 0, the outer one floor(kt * 64 / 32)
        d = CudaDispatch.decide(TMA, runTime(blocks, new Swizzle(2, 3, 3),
                "\"start_modulus\":{\"dst\":[[1,0],null,null],\"src0\":[null,[64,0]]},"));
        assertTrue(d.accepted(), d.reason());
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> cut = (List<Map<String, Object>>) d.planJson().get("dims");
        assertEquals(0L, cut.get(0).get("start"));
        assertEquals(32L, cut.get(0).get("box"));
        assertEquals(-1L, cut.get(2).get("start"));
        assertEquals(32L, cut.get(2).get("step"));
        assertEquals(2L, cut.get(2).get("box"));
    }

    /**
     * Edge tiles: a tile-sized region at run-time tile starts over a tensor that is no multiple of the tile (even
     * smaller than one tile, down to 1 x 8) is one plan whose boxes, walked at every start inside the tensor with
     * coordinates past the map's dims dropped (TMA's clipping), move exactly the region's elements that lie inside;
     * the map covers the tensor and no more.
     */
    @Test
    void edgeTilesRunPastTheEndAndTheBoxesClipThere() {
        Property.forAll("cuda tma edge tiles = the layout maps inside the tensor", CASES / 4, r -> {
            long rows = new long[] {8, 16, 64}[r.nextInt(3)];
            long cols;
            Layout s;
            Swizzle swizzle;
            if (r.nextBoolean()) {
                cols = 128;   // two 128-byte swizzle rows of 64 fp16: a box loop per row block
                s = columnBlocks(rows, cols, 64);
                swizzle = new Swizzle(3, 3, 3);
            } else {
                cols = new long[] {32, 64}[r.nextInt(2)];
                s = padded(new long[] {rows, cols}, 0);
                swizzle = Swizzle.IDENTITY;
            }
            long[] tile = {rows, cols};
            long[] gShape = {1 + r.nextInt((int) (3 * rows)), 8 * (1 + r.nextInt((int) (3 * cols / 8)))};
            Layout g = padded(gShape, 0);
            Operand shared = new Operand("dst", "S", "float16", tile, new long[2], tile, s);
            Operand global = new Operand("src0", "G", "float16", gShape, new long[2], tile, g, 0,
                    new Modular[] {new Modular(rows, 0), new Modular(cols, 0)});
            String json = CudaRunTimeStartsTest.request("copy_async", "thread", 1, List.of(shared, global))
                    .replace("\"params\":{", "\"params\":{\"arch\":\"sm_90a\",\"config\":[\"mbar\"],");
            Decision run = CudaDispatch.decide(TMA, Request.fromJson(json, List.of(s, g), Arrays.asList(swizzle,
                    null)));
            assertTrue(run.accepted(), global + ": " + run.reason());
            @SuppressWarnings("unchecked")
            List<Long> extents = ((List<Map<String, Object>>) run.planJson().get("dims")).stream()
                    .map(m -> (Long) m.get("extent")).toList();
            assertEquals(gShape[0] * gShape[1], extents.stream().reduce(1L, (a, b) -> a * b),
                    "the map covers the tensor, no more: " + extents);
            for (long r0 = 0; r0 < gShape[0]; r0 += rows) {
                for (long c0 = 0; c0 < gShape[1]; c0 += cols) {
                    long[] at = {r0, c0};
                    List<String> got = walk(run.planJson(), swizzle, at, true);
                    List<String> want = new ArrayList<>();
                    for (long i = 0; i < rows; i++) {
                        for (long j = 0; j < cols; j++) {
                            if (r0 + i < gShape[0] && c0 + j < gShape[1]) {
                                long sa = s.apply(Shape.of(tile), new long[] {i, j}).get(0).get(Axis.M);
                                want.add(swizzle.apply(sa) + "<->" + ((r0 + i) * gShape[1] + c0 + j));
                            }
                        }
                    }
                    Collections.sort(got);
                    Collections.sort(want);
                    assertEquals(want, got, global + " at " + Arrays.toString(at) + ": " + run.planJson());
                }
            }
        });
    }

    @Test
    void onlyClippingRulesTakeARegionWiderThanItsTensor() {
        Layout s = padded(new long[] {64, 64}, 0);
        Layout g = padded(new long[] {16, 64}, 0);
        Operand shared = new Operand("dst", "S", "float16", new long[] {64, 64}, new long[2], new long[] {64, 64}, s);
        Operand global = new Operand("src0", "G", "float16", new long[] {16, 64}, new long[2], new long[] {64, 64}, g,
                0, new Modular[] {new Modular(64, 0), null});
        String json = CudaRunTimeStartsTest.request("copy_async", "thread", 1, List.of(shared, global))
                .replace("\"params\":{", "\"params\":{\"arch\":\"sm_90a\",\"config\":[\"mbar\"],");
        Request call = Request.fromJson(json, List.of(s, g), Arrays.asList(null, null));
        assertTrue(CudaDispatch.decide(TMA, call).accepted());
        Decision cp = CudaDispatch.decide("axe4j-cuda-cp-async", call);
        assertFalse(cp.accepted());
        assertTrue(cp.reason().contains("is 64 wide in dim 0 of size 16, so it runs past the end; axe4j-cuda-cp-async"
                + " does not clip there (a TMA copy does)"), cp.reason());
    }
}
