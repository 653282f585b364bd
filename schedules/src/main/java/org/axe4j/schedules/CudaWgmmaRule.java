package org.axe4j.schedules;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Point;
import org.axe4j.layout.Shape;
import org.axe4j.layout.Swizzle;
import org.axe4j.layout.TileOf;

/**
 * {@code gemm_async} on sm_90a at warpgroup scope as {@code wgmma.mma_async.sync.aligned.m64nNk16} (f16/bf16
 * operands in shared memory, f32 accumulator in registers): C (M x N) += A (M x K) B (N x K)^T, both operands
 * K-major.
 *
 * <p>C's register layout must be a tile (tile-of) of the wgmma accumulator fragment over (64, n) for an
 * instruction width n (the widest multiple of 8 up to 256 dividing N for which it is), with an outer layout on
 * registers only: block (i, j) holds its n/2 accumulators from slot outer(i, j) * n/2 on.
 *
 * <p>A and B are read through 64-bit shared-memory matrix descriptors (start address, leading and stride byte
 * offsets, swizzle mode). The mode comes from the operand's swizzle: none, or {@code Swizzle<s,3,3>} on element
 * addresses (16-byte units, rows of W = 8 * 2^s elements: 32, 64, 128 bytes for s = 1, 2, 3). For every
 * instruction tile (rows r in [0, R), R = 64 for A and n for B; columns c in [0, 16)) the layout's address before
 * the swizzle must be the descriptor's: {@code start + (r % 8) * 8 + (c % 8) + (r / 8) * SBO + (c / 8) * LBO}
 * without swizzle (8x8 core matrices), {@code start + (r % 8) * W + c + (r / 8) * SBO} with one, where start is
 * the tile's first address, SBO the distance of 8-row groups and LBO of core-matrix columns. This is checked by
 * enumerating every element of every tile; a swizzled tile must also start on a swizzle-row boundary with its
 * 8-row groups on swizzle-atom boundaries, and the buffer be aligned to the swizzle period (8 W elements), since
 * the hardware swizzles absolute shared addresses while the layout swizzles offsets into the buffer.
 *
 * <p>Per output block the K steps issue one instruction each (the first overwrites unless {@code accum}); all
 * instructions are fenced before, committed as one group and waited for (the accumulators are then final).
 */
public final class CudaWgmmaRule implements Rule {
    public static final CudaWgmmaRule INSTANCE = new CudaWgmmaRule();

    static final String ARCH = "sm_90a";
    static final long MAX_N = 256;

    private CudaWgmmaRule() {}

    public String variant() {
        return "axe4j-cuda-wgmma";
    }

    public int priority() {
        return 10;
    }

    public boolean acceptsSwizzle() {
        return true;
    }

    public Map<String, Object> plan(Request call) {
        if (!CudaRules.TARGET_KIND.equals(call.target())) {
            throw Declined.of("target kind %s is not cuda", call.target());
        }
        JsonElement arch = call.params().get("arch");
        String archName = arch == null || arch.isJsonNull() ? "(none)" : arch.getAsString();
        if (!ARCH.equals(archName)) {
            throw Declined.of("gemm_async: wgmma needs arch %s, the target's is %s", ARCH, archName);
        }
        if (!call.scope().equals("warpgroup") || CudaRules.requireCudaScope(call) != 128) {
            throw Declined.of("gemm_async: wgmma runs at warpgroup scope with all 128 threads, not %s scope",
                    call.scope());
        }
        Operand c = call.operand("C");
        Operand a = call.operand("A");
        Operand b = call.operand("B");
        JsonObject storage = call.params().has("storage") ? call.params().getAsJsonObject("storage") : new JsonObject();
        require(storage, c, "local");
        require(storage, a, "shared");
        require(storage, b, "shared");
        if (!call.swizzle("C").isIdentity()) {
            throw Declined.of("gemm_async: accumulator %s has a swizzled layout", c);
        }
        if (c.elements() != Shape.of(c.shape()).size() || !c.layout().replica().isEmpty()) {
            throw Declined.of("gemm_async: accumulator %s must be a whole register tile without replicas (%s)", c,
                    c.layout());
        }
        String in = a.dtype();
        if (!(in.equals("float16") || in.equals("bfloat16")) || !b.dtype().equals(in)) {
            throw Declined.of("gemm_async: wgmma here multiplies float16 or bfloat16, not %s x %s", a.dtype(),
                    b.dtype());
        }
        if (!c.dtype().equals("float32")) {
            throw Declined.of("gemm_async: the wgmma accumulator is float32, not %s", c.dtype());
        }
        if (call.flag("trans_a") || call.flag("trans_b")) {
            throw Declined.of("gemm_async: MN-major operands (transA=%s, transB=%s) are not planned; A (M x K) and "
                    + "B (N x K) must be K-major", call.flag("trans_a"), call.flag("trans_b"));
        }
        long[] ce = c.loopExtents();
        long[] ae = a.loopExtents();
        long[] be = b.loopExtents();
        if (ce.length != 2 || ae.length != 2 || be.length != 2 || ae[0] != ce[0] || be[0] != ce[1]
                || ae[1] != be[1]) {
            throw Declined.of("gemm_async: shapes do not agree: C %s, A %s, B %s (C (M x N) += A (M x K) B (N x K)^T)",
                    c, a, b);
        }
        long m = ce[0];
        long n = ce[1];
        long k = ae[1];
        if (m % 64 != 0 || n % 8 != 0 || k % 16 != 0) {
            throw Declined.of("gemm_async: M=%d, N=%d, K=%d are not multiples of the m64nNk16 tile (64, 8, 16)", m,
                    n, k);
        }
        Accumulator acc = accumulator(c, m, n);
        Descriptor da = Descriptor.of(call, a, 64, k);
        Descriptor db = Descriptor.of(call, b, acc.width, k);
        List<Map<String, Object>> tiles = new ArrayList<>();
        for (long i = 0; i < m / 64; i++) {
            for (long j = 0; j < n / acc.width; j++) {
                Map<String, Object> tile = new LinkedHashMap<>();
                long first = acc.base(i, j);
                List<Long> slots = new ArrayList<>();
                for (long s = 0; s < acc.width / 2; s++) {
                    slots.add(first + s);
                }
                tile.put("d", slots);
                List<Map<String, Object>> steps = new ArrayList<>();
                for (long kk = 0; kk < k / 16; kk++) {
                    Map<String, Object> step = new LinkedHashMap<>();
                    step.put("a", da.start(i, kk));
                    step.put("b", db.start(j, kk));
                    steps.add(step);
                }
                tile.put("steps", steps);
                tiles.add(tile);
            }
        }
        String ptx = in.equals("float16") ? "f16" : "bf16";
        Map<String, Object> plan = new LinkedHashMap<>();
        plan.put("kind", "cuda-wgmma");
        plan.put("instruction", "wgmma.mma_async.sync.aligned.m64n" + acc.width + "k16.f32." + ptx + "." + ptx);
        plan.put("accum", call.flag("accum"));
        plan.put("registers", c.layout().spanOn(Axis.M));
        plan.put("A", da.describe());
        plan.put("B", db.describe());
        plan.put("tiles", tiles);
        plan.put("notes", List.of((m / 64) * (n / acc.width) * (k / 16) + " x m64n" + acc.width + "k16 (" + m + "x"
                + n + "x" + k + "), accumulator outer layout " + acc.outer + "; A " + da.summary() + "; B "
                + db.summary()));
        return plan;
    }

    private static void require(JsonObject storage, Operand o, String scope) {
        String s = storage.has(o.role()) ? storage.get(o.role()).getAsString() : "global";
        if (!s.startsWith(scope)) {
            throw Declined.of("gemm_async: %s is in %s memory; wgmma wants %s", o, s, scope);
        }
    }

    private record Accumulator(long width, Layout outer, Shape outerShape) {
        long base(long i, long j) {
            return outer.apply(outerShape, i, j).get(0).get(Axis.M) * (width / 2);
        }
    }

    /** The widest instruction n whose accumulator fragment C is a tile of, outer layout on registers only. */
    private static Accumulator accumulator(Operand c, long m, long n) {
        String last = "";
        for (long w = Math.min(MAX_N, n); w >= 8; w -= 8) {
            if (n % w != 0) {
                continue;
            }
            TileOf.Match match = TileOf.explainOuter(c.layout(), Shape.of(m, n), MmaAtoms.wgmmaAccumulator(w),
                    MmaAtoms.wgmmaAccumulatorShape(w));
            if (!match.isPresent()) {
                last = match.reason();
                continue;
            }
            Shape outerShape = Shape.of(m / 64, n / w);
            boolean registersOnly = true;
            for (long i = 0; i < outerShape.dim(0) && registersOnly; i++) {
                for (long j = 0; j < outerShape.dim(1) && registersOnly; j++) {
                    List<Point> p = match.layout().get().apply(outerShape, i, j);
                    registersOnly = p.size() == 1 && p.get(0).coords().entrySet().stream()
                            .allMatch(e -> e.getKey().equals(Axis.M) || e.getValue() == 0);
                }
            }
            if (registersOnly) {
                return new Accumulator(w, match.layout().get(), outerShape);
            }
            last = "outer layout " + match.layout().get() + " is not on registers only";
        }
        throw Declined.of("gemm_async: accumulator layout %s of %s is not a tile of the wgmma m64nNk16 accumulator "
                + "fragment for any N dividing %d: %s", c.layout(), c, n, last);
    }

    /** A K-major operand's descriptor fields, and each instruction tile's start (elements from the data start). */
    private record Descriptor(Operand operand, long rows, long mode, long width, long sbo, long lbo,
            Map<List<Long>, Long> starts, Map<Integer, Long> startStrides) {

        /** Checks every instruction tile (rows x 16) of {@code o} against the descriptor's address map. */
        static Descriptor of(Request call, Operand o, long rows, long k) {
            AffineAccess.requireMemoryOnly(o);
            if (o.elementBytes() != 2) {
                throw Declined.of("gemm_async: %s has %d-byte elements; the descriptor walk here is for 16-bit ones",
                        o, o.elementBytes());
            }
            Swizzle z = call.swizzle(o.role());
            long mode;
            if (z.isIdentity()) {
                mode = 0;
            } else if (z.base() == 3 && z.shift() == 3 && z.bits() >= 1 && z.bits() <= 3) {
                mode = z.bits();
            } else {
                throw Declined.of("gemm_async: %s is swizzled as %s; wgmma reads Swizzle<1..3,3,3> (32/64/128-byte "
                        + "rows of 16-byte units) or none", o, z);
            }
            long width = mode == 0 ? 8 : 8L << mode; // elements per swizzle row (core-matrix row without swizzle)
            long blocks = o.loopExtents()[0] / rows;
            Map<List<Long>, Long> starts = new LinkedHashMap<>();
            long sbo = -1;
            long lbo = -1;
            for (long i = 0; i < blocks; i++) {
                for (long kk = 0; kk < k / 16; kk++) {
                    long start = address(o, i * rows, kk * 16);
                    long s = rows > 8 ? address(o, i * rows + 8, kk * 16) - start : 8 * width;
                    long l = mode == 0 ? address(o, i * rows, kk * 16 + 8) - start : 0;
                    if (sbo >= 0 && (s != sbo || l != lbo)) {
                        throw Declined.of("gemm_async: instruction tiles of %s have different strides (8-row groups "
                                + "%d and %d, core-matrix columns %d and %d elements apart)", o, sbo, s, lbo, l);
                    }
                    sbo = s;
                    lbo = l;
                    for (long r = 0; r < rows; r++) {
                        for (long c = 0; c < 16; c++) {
                            long want = mode == 0
                                    ? start + (r % 8) * 8 + (c % 8) + (r / 8) * sbo + (c / 8) * lbo
                                    : start + (r % 8) * width + c + (r / 8) * sbo;
                            long got = address(o, i * rows + r, kk * 16 + c);
                            if (got != want) {
                                throw Declined.of("gemm_async: element (%d, %d) of %s is at %d, the wgmma descriptor "
                                        + "(%s, start %d, 8-row groups %d apart%s) reads it from %d", i * rows + r,
                                        kk * 16 + c, o, got, modeName(mode), start, sbo,
                                        mode == 0 ? ", core-matrix columns " + lbo + " apart" : "", want);
                            }
                        }
                    }
                    if (start % 8 != 0) {
                        throw Declined.of("gemm_async: instruction tile (%d, %d) of %s starts at element %d, not on "
                                + "16 bytes", i, kk, o, start);
                    }
                    if (mode != 0 && ((start / width) % 8 != 0 || start % width + 16 > width)) {
                        throw Declined.of("gemm_async: instruction tile (%d, %d) of %s starts at element %d, not in "
                                + "the first row of a %s atom (%d elements)", i, kk, o, start, modeName(mode),
                                8 * width);
                    }
                    starts.put(List.of(i, kk), start);
                }
            }
            if (sbo % 8 != 0 || lbo % 8 != 0 || sbo < 0 || lbo < 0 || sbo / 8 >= (1 << 14) || lbo / 8 >= (1 << 14)) {
                throw Declined.of("gemm_async: %s: byte offsets %d and %d do not fit the descriptor's 14-bit "
                        + "16-byte fields", o, 2 * sbo, 2 * lbo);
            }
            if (mode != 0 && sbo % (8 * width) != 0) {
                throw Declined.of("gemm_async: %s: 8-row groups %d elements apart are not on %s atom boundaries",
                        o, sbo, modeName(mode));
            }
            long align = alignment(call, o);
            long need = mode == 0 ? 16 : 16 * width;
            if (align < need) {
                throw Declined.of("gemm_async: %s is aligned to %d bytes; the %s descriptor needs %d (declare the "
                        + "buffer with align=%d)", o, align, modeName(mode), need, need);
            }
            // a run-time start (a pipeline stage, a warpgroup's rows) must keep every tile on the same boundaries
            Map<Integer, Long> startStrides = new LinkedHashMap<>();
            boolean symbolic = false;
            for (boolean b : o.symbolic()) {
                symbolic |= b;
            }
            if (symbolic) {
                startStrides.putAll(AffineAccess.of(o).startStrides());
                if (!call.runTimeStartsKeep(o, startStrides, need / o.elementBytes())) {
                    throw Declined.of("gemm_async: %s starts at run-time indices (elements per unit: %s) that may "
                            + "move it off the %s period (%d bytes)", o, startStrides, modeName(mode), need);
                }
            }
            return new Descriptor(o, rows, mode, width, sbo, lbo, starts, startStrides);
        }

        long start(long block, long kk) {
            return starts.get(List.of(block, kk));
        }

        Map<String, Object> describe() {
            Map<String, Object> d = new LinkedHashMap<>();
            d.put("role", operand.role());
            d.put("swizzle", mode); // CUtensorMapSwizzle: 0 none, 1 32B, 2 64B, 3 128B
            d.put("sbo", sbo / 8); // descriptor fields: bytes >> 4, i.e. 16-bit elements / 8
            d.put("lbo", mode == 0 ? lbo / 8 : 1);
            Map<String, Long> strides = new LinkedHashMap<>();
            startStrides.forEach((dim, stride) -> strides.put(Integer.toString(dim), stride));
            d.put("start_strides", strides); // elements per unit of each run-time start
            return d;
        }

        String summary() {
            return modeName(mode) + ", 8-row groups " + 2 * sbo + " B apart" + (mode == 0 ? ", core-matrix columns "
                    + 2 * lbo + " B apart" : "");
        }
    }

    static String modeName(long mode) {
        return mode == 0 ? "no swizzle" : (8 << mode) * 2 + "-byte swizzle";
    }

    /** Memory address (elements from the data start, before any swizzle) of region element (r, c). */
    private static long address(Operand o, long r, long c) {
        int[] dims = o.loopDims();
        long[] coord = o.start().clone();
        coord[dims[0]] += r;
        coord[dims[1]] += c;
        return o.elemOffset() + o.layout().apply(Shape.of(o.shape()), coord).get(0).get(Axis.M);
    }

    private static long alignment(Request call, Operand o) {
        JsonObject align = call.params().has("align") ? call.params().getAsJsonObject("align") : new JsonObject();
        long bytes = align.has(o.role()) ? align.get(o.role()).getAsLong() : 0;
        long offsetBytes = o.elemOffset() * o.elementBytes();
        return offsetBytes == 0 ? bytes : Math.min(bytes, Long.lowestOneBit(offsetBytes));
    }
}
