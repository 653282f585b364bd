package org.axe4j.schedules;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code D = alpha * op(A) op(B) + beta * C} with op = transpose when {@code trans_a}/{@code trans_b}.
 *
 * <p>Each matrix region must have two non-unit dims, each a single affine loop ({@link AffineAccess}): the element
 * (i, j) lives at {@code base + i * s_row + j * s_col}. {@link #BLOCKED} follows the accumulator D's layout: the D
 * dim with stride 1 is the vector dim v, the other is u; the register tile is {@code mu x nv} accumulators
 * ({@code mu = min(6, extent_u)}, {@code nv = min(lanes, extent_v)}: 12 AVX2 registers for fp32). The operand
 * that moves along v (B for v = n, A for v = m) is packed per K block into K-major panels {@code nv} wide, the
 * other operand per (u block, K block) into panels {@code mu} wide, so the micro-kernel reads both contiguously
 * whatever their strides; a K block of {@code kc} keeps one v panel in L1, a u block of {@code mc} rows keeps its
 * panels in L2. The loop over u blocks is parallel when {@code M*N*K >= }{@link #PARALLEL_MIN_WORK} and there are
 * at least two blocks, unless the call says {@code parallel=False} (a call inside a parallel loop: TVM's CPU
 * thread pool runs no nested parallel region). It declines when D has no stride-1 dim. {@link #NAIVE}: the i, j, k loop nest, serial, for
 * any affine matrices.
 */
public final class GemmRules {
    private GemmRules() {}

    /** Rows of the register tile: 6 x 16 fp32 is 12 of AVX2's 16 vector registers, leaving room for operands. */
    static final int TILE_U = 6;

    /** K block: a 256 x 16 fp32 v panel is 16 KiB, half an L1 data cache. */
    static final long BLOCK_K = 256;

    /** Register tiles per u block: 8 x 6 rows x 256 x 4 bytes = 48 KiB of u panels, well inside L2. */
    static final long TILES_PER_U_BLOCK = 8;

    /**
     * Multiply-adds from which the u-block loop is parallel. On 2 cores (znver3, fp32) 64^3 ran 7.1 us on one
     * thread and 7.8 us on two, 96^3 20.2 us against 13.4 us.
     */
    public static final long PARALLEL_MIN_WORK = 1L << 19;

    public static final Rule BLOCKED = new Rule() {
        public String variant() {
            return "axe4j-cpu-gemm-blocked";
        }

        public int priority() {
            return 10;
        }

        /** A run-time extent is taken on the u dim (rows of the accumulator tile guard it already). */
        @Override
        public boolean acceptsRunTimeExtents() {
            return true;
        }

        public Map<String, Object> plan(Request call) {
            Map<String, Object> plan = common(call);
            @SuppressWarnings("unchecked")
            Map<String, Map<String, Object>> access = (Map<String, Map<String, Object>>) plan.get("access");
            long dm = (Long) access.get("D").get("m");
            long dn = (Long) access.get("D").get("n");
            String v;
            if (dn == 1) {
                v = "n";
            } else if (dm == 1) {
                v = "m";
            } else {
                throw Declined.of("gemm: accumulator D (%s) has no stride-1 dim to vectorize along (strides m=%d, n=%d)",
                        call.operand("D").layout(), dm, dn);
            }
            String u = v.equals("n") ? "m" : "n";
            boolean ragged = requireRunTimeExtentOnlyOn(call, u);
            long ev = (Long) plan.get(v.toUpperCase());
            long eu = (Long) plan.get(u.toUpperCase());
            int lanes = ElementwiseRules.lanes(call.operands());
            long nv = Math.min(lanes, ev);
            long mu = Math.min(TILE_U, eu);
            long k = (Long) plan.get("K");
            long tilesPerBlock = Math.min(TILES_PER_U_BLOCK, (eu + mu - 1) / mu);
            long mc = tilesPerBlock * mu;
            plan.put("kind", "gemm-blocked");
            plan.put("vector_dim", v);
            if (ragged) {
                plan.put("run_time_extent", u);
            }
            plan.put("tile", Map.of("u", mu, "v", nv));
            plan.put("blocks", Map.of("k", Math.min(BLOCK_K, k), "u", mc));
            long work = (Long) plan.get("M") * (Long) plan.get("N") * k;
            boolean serialAsked = call.params().has("parallel") && !call.flag("parallel");
            plan.put("parallel", !serialAsked && work >= PARALLEL_MIN_WORK && eu > mc);
            String moving = v.equals("n") ? "B" : "A";
            String other = v.equals("n") ? "A" : "B";
            List<String> notes = new java.util.ArrayList<>(List.of(moving + " packed per K block into K-major panels "
                    + nv + " wide (it moves by " + access.get(moving).get(v) + " along " + v + ")", other
                    + " packed per " + mc + "-row " + u + " block into panels " + mu + " wide"));
            if (serialAsked) {
                notes.add("u blocks serial: the call asks for no parallel region (parallel=False: it runs inside a "
                        + "parallel loop)");
            }
            plan.put("notes", List.copyOf(notes));
            return plan;
        }
    };

    public static final Rule NAIVE = new Rule() {
        public String variant() {
            return "axe4j-cpu-gemm-naive";
        }

        public int priority() {
            return 0;
        }

        /** Any memory/cpu layouts: every element addressed from its layout's digits (see ElementwiseRules). */
        public Map<String, Object> plan(Request call) {
            Map<String, Object> plan = shapes(call);
            boolean ta = call.flag("trans_a");
            boolean tb = call.flag("trans_b");
            Map<String, Object> operands = new LinkedHashMap<>();
            operands.put("D", digits(call.operand("D"), "m", "n"));
            operands.put("A", digits(call.operand("A"), ta ? "k" : "m", ta ? "m" : "k"));
            operands.put("B", digits(call.operand("B"), tb ? "n" : "k", tb ? "k" : "n"));
            operands.put("C", digits(call.operand("C"), "m", "n"));
            plan.put("kind", "gemm-naive");
            plan.put("operands", operands);
            return plan;
        }
    };

    /**
     * Checks that the run-time extents of the call (if any) all lie on the logical dim {@code u} and that every
     * matrix that has {@code u} (D, C and one of A, B) carries it: the u extent is then one run-time value that the
     * blocked loops bound (u blocks) and guard (u tiles). Returns whether there is one.
     */
    static boolean requireRunTimeExtentOnlyOn(Request call, String u) {
        boolean ta = call.flag("trans_a");
        boolean tb = call.flag("trans_b");
        Map<String, String[]> names = new LinkedHashMap<>();
        names.put("D", new String[] {"m", "n"});
        names.put("A", ta ? new String[] {"k", "m"} : new String[] {"m", "k"});
        names.put("B", tb ? new String[] {"n", "k"} : new String[] {"k", "n"});
        names.put("C", new String[] {"m", "n"});
        boolean any = call.firstRunTimeExtent().isPresent();
        if (!any) {
            return false;
        }
        for (Map.Entry<String, String[]> e : names.entrySet()) {
            Operand o = call.operand(e.getKey());
            int[] loop = o.loopDims();
            java.util.Set<String> ragged = new java.util.TreeSet<>();
            for (int d : call.runTimeExtentDims(e.getKey())) {
                int at = java.util.Arrays.binarySearch(loop, d);
                if (at < 0) {
                    throw Declined.of("gemm: %s has a run-time extent in dim %d, which is not one of its matrix dims",
                            o, d);
                }
                ragged.add(e.getValue()[at]);
            }
            boolean hasU = java.util.Arrays.asList(e.getValue()).contains(u);
            java.util.Set<String> expected = hasU ? java.util.Set.of(u) : java.util.Set.of();
            if (!ragged.equals(expected)) {
                throw Declined.of("gemm: run-time extents %s of %s; the blocked rule takes one on the non-vector dim %s"
                        + " of D, C and the operand that has it, and none elsewhere", ragged, o, u);
            }
        }
        return true;
    }

    /** The digit map of a matrix operand plus which buffer dim its row and column index drive. */
    private static Map<String, Object> digits(Operand o, String row, String col) {
        AffineAccess.requireMemoryOnly(o);
        Map<String, Object> out = ElementwiseRules.digitMap(o);
        int[] dims = o.loopDims();
        out.put("dims", Map.of(row, dims[0], col, dims[1]));
        return out;
    }

    /** Shape checks and the (base, row stride, col stride) of every matrix, named by its logical dims. */
    static Map<String, Object> common(Request call) {
        Map<String, Object> plan = shapes(call);
        boolean ta = call.flag("trans_a");
        boolean tb = call.flag("trans_b");
        Map<String, Object> access = new LinkedHashMap<>();
        access.put("D", strides(call.operand("D"), "m", "n"));
        access.put("A", strides(call.operand("A"), ta ? "k" : "m", ta ? "m" : "k"));
        access.put("B", strides(call.operand("B"), tb ? "n" : "k", tb ? "k" : "n"));
        access.put("C", strides(call.operand("C"), "m", "n"));
        plan.put("access", access);
        return plan;
    }

    /** Target, scope and the shapes of D = op(A) op(B) (+ C): M, N, K. */
    static Map<String, Object> shapes(Request call) {
        Rule.requireCpuThread(call);
        Operand d = call.operand("D");
        Operand a = call.operand("A");
        Operand b = call.operand("B");
        Operand c = call.operand("C");
        long[] de = matrix(d);
        long[] ae = matrix(a);
        long[] be = matrix(b);
        long[] ce = matrix(c);
        boolean ta = call.flag("trans_a");
        boolean tb = call.flag("trans_b");
        long m = de[0];
        long n = de[1];
        long k = ta ? ae[0] : ae[1];
        if ((ta ? ae[1] : ae[0]) != m || (tb ? be[1] : be[0]) != k || (tb ? be[0] : be[1]) != n
                || ce[0] != m || ce[1] != n) {
            throw Declined.of("gemm: shapes D %dx%d, A %dx%d%s, B %dx%d%s, C %dx%d do not chain", de[0], de[1], ae[0],
                    ae[1], ta ? " (transposed)" : "", be[0], be[1], tb ? " (transposed)" : "", ce[0], ce[1]);
        }
        Map<String, Object> plan = new LinkedHashMap<>();
        plan.put("M", m);
        plan.put("N", n);
        plan.put("K", k);
        return plan;
    }

    private static long[] matrix(Operand o) {
        long[] e = o.loopExtents();
        if (e.length != 2) {
            throw Declined.of("gemm: %s has %d non-unit dims, not 2", o, e.length);
        }
        return e;
    }

    private static Map<String, Object> strides(Operand o, String row, String col) {
        AffineAccess acc = AffineAccess.of(o);
        int[] dims = o.loopDims();
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("base", acc.base());
        ElementwiseRules.putRunTimeStarts(out, acc);
        out.put(row, single(o, acc, dims[0]));
        out.put(col, single(o, acc, dims[1]));
        out.put("replicas", acc.replicas());
        out.put("layout", o.layout().toString());
        return out;
    }

    private static long single(Operand o, AffineAccess acc, int dim) {
        List<AffineAccess.Piece> p = acc.dims().get(dim);
        if (p.stream().anyMatch(AffineAccess.Piece::distributed)) {
            throw Declined.of("gemm: dim %d of %s is spread over cpu workers; gemm parallelizes its own u tiles",
                    dim, o);
        }
        if (p.size() != 1) {
            throw Declined.of("gemm: dim %d of %s is walked by %d strided pieces %s, not one affine loop", dim, o,
                    p.size(), p);
        }
        return p.get(0).stride();
    }
}
