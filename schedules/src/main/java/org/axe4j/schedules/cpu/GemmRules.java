package org.axe4j.schedules.cpu;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.axe4j.schedules.AffineAccess;
import org.axe4j.schedules.Declined;
import org.axe4j.schedules.Operand;
import org.axe4j.schedules.PlanAccesses;
import org.axe4j.schedules.Request;
import org.axe4j.schedules.Rule;
import org.axe4j.schedules.RunTimeStarts;
import org.axe4j.schedules.plan.CpuPlans;
import org.axe4j.schedules.plan.PlanParts;
import org.axe4j.schedules.plan.SchedulePlan;

/**
 * {@code D = alpha * op(A) op(B) + beta * C} with op = transpose when {@code trans_a}/{@code trans_b}.
 *
 * <p>Each matrix region must have two non-unit dims, each a single affine loop ({@link AffineAccess}): the element
 * (i, j) lives at {@code base + i * s_row + j * s_col}. {@link #BLOCKED} follows the accumulator D's layout: the D
 * dim with stride 1 is the vector dim v, the other is u; the register tile is {@code mu x nv} accumulators, sized
 * with the K block {@code kc} and the u block {@code mc} for the target's vector ISA and caches by
 * {@link GemmBlocking} (AVX-512: 8 x 32 fp32; otherwise the AVX2 plan, 6 x 16). The operand
 * that moves along v (B for v = n, A for v = m) is packed per K block into K-major panels {@code nv} wide, the
 * other operand per (u block, K block) into panels {@code mu} wide ({@link GemmPacking}), so the micro-kernel reads
 * both contiguously whatever their strides; a K block keeps one v panel in L1, a u block keeps its panels in L2.
 * A V whose layout already is those panels for every K block ({@link GemmPacking#packedWeight} of the plan's kc and
 * nv: a weight packed once) is read in place, nothing packed for it; a V in panels of another kc or nv is declined
 * with both layouts named (the naive rule takes it).
 * When {@code M*N*K >= }{@link #PARALLEL_MIN_WORK} the u blocks run in parallel if there are two or more, else the
 * v panels of the one u block do, unless the call says {@code parallel=False} (a call inside a parallel loop:
 * TVM's CPU thread pool runs no nested parallel region). It declines when D has no stride-1 dim. {@link #NAIVE}:
 * the i, j, k loop nest, serial, for
 * any affine matrices.
 */
final class GemmRules {
    private GemmRules() {}

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

        public SchedulePlan plan(Request call) {
            long[] mnk = shapes(call);
            PlanParts.GemmAccess dAccess = strides(call.operand("D"), "m", "n");
            long dm = dAccess.m();
            long dn = dAccess.n();
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
            long ev = v.equals("m") ? mnk[0] : mnk[1];
            long eu = u.equals("m") ? mnk[0] : mnk[1];
            long k = mnk[2];
            long work = mnk[0] * mnk[1] * k;
            boolean serialAsked = call.params().has("parallel") && !call.flag("parallel");
            CpuTarget cpu = CpuTarget.of(call);
            int bytes = call.operands().stream().mapToInt(Operand::elementBytes).max().orElse(4);
            String moving = v.equals("n") ? "B" : "A";
            String other = v.equals("n") ? "A" : "B";
            boolean parallelOk = !serialAsked && work >= PARALLEL_MIN_WORK;
            Map<String, PlanParts.GemmAccess> access;
            GemmBlocking b;
            String packedV = null;
            if (walkedInPieces(call.operand(moving))) {
                // V's k or v dim is more than one loop: only the packed weight of this plan's kc and nv is read
                b = GemmBlocking.choose(cpu, bytes, eu, ev, k, parallelOk, false, call.operand(moving).elementBytes());
                PlanParts.GemmAccess packed = packedWeightAccess(call, moving, v, k, ev, b);
                packedV = packed.layout();
                access = common(call, moving, packed);
            } else {
                access = common(call);
                b = GemmBlocking.choose(cpu, bytes, eu, ev, k, parallelOk,
                        !ragged && stride(access.get(moving), v) == 1L, call.operand(moving).elementBytes());
            }
            List<String> notes = new java.util.ArrayList<>(b.reasons());
            // AVX-512 tiles: prefetch the D tile (for write) as the K loop starts; 4096^3 ran 0.89 of numpy with it,
            // 0.78 without (same run)
            boolean prefetchD = cpu.wideVectors() && !b.rowKernel();
            if (!b.rowKernel()) {
                if (packedV != null) {
                    notes.add(moving + " already packed (layout " + packedV + "), no packing: the micro-kernel reads"
                            + " its K-major panels " + b.nv() + " wide in place, K block kb at offset kb*"
                            + ev / b.nv() * b.kc() * b.nv());
                } else {
                    notes.add(moving + " packed per K block into K-major panels " + b.nv() + " wide (it moves by "
                            + stride(access.get(moving), v) + " along " + v + ")");
                }
                notes.add(other + " packed per " + b.mc() + "-row " + u + " block into panels " + b.mu() + " wide");
                if (prefetchD) {
                    notes.add("each micro-kernel prefetches its D tile for writing before the K loop");
                }
            }
            widening(call, cpu, b.rowKernel(), packedV != null ? moving : null).ifPresent(notes::add);
            if (serialAsked) {
                notes.add("u blocks serial: the call asks for no parallel region (parallel=False: it runs inside a "
                        + "parallel loop)");
            }
            Map<String, String> packing = b.rowKernel() ? Map.of() : GemmPacking.layouts(moving, other, b, ev);
            if (packedV != null) {
                packing = Map.of(other, packing.get(other));
            }
            return new CpuPlans.GemmBlocked(mnk[0], mnk[1], mnk[2], access, v, ragged ? u : null, cpu.isa(),
                    new CpuPlans.GemmTile(b.mu(), b.nv()), new CpuPlans.GemmBlocks(b.kc(), b.mc()),
                    !b.parallelOver().equals("none"), b.parallelOver(), packing, cpu.lanes(bytes), prefetchD,
                    b.rowKernel() ? "rows" : null, b.rowKernel() ? GemmBlocking.ROW_KERNEL_K_ROWS : null,
                    packedV, b.workers() > 0 ? b.workers() : null, List.copyOf(notes));
        }
    };

    /** Whether one of a matrix's two dims is walked by more than one strided loop (a tiled or packed layout). */
    private static boolean walkedInPieces(Operand o) {
        AffineAccess acc = AffineAccess.of(o);
        for (int d : matrixDims(o)) {
            if (acc.dims().get(d).size() > 1) {
                return true;
            }
        }
        return false;
    }

    /**
     * The access of a moving operand V stored as the packed weight of plan {@code b} (GemmPacking#packedWeight): its
     * base, the strides of its innermost k and v loops (nv and 1) and its layout. Declines, naming V's layout and the
     * one this plan reads, when V is anything else.
     */
    private static PlanParts.GemmAccess packedWeightAccess(Request call, String moving, String v, long k, long ev,
            GemmBlocking b) {
        Operand o = call.operand(moving);
        AffineAccess acc = AffineAccess.of(o);
        int[] dims = matrixDims(o);
        List<String> names = List.of(dimNames(call, moving));
        int kDim = dims[names.indexOf("k")];
        int vDim = dims[names.indexOf(v)];
        String wanted;
        String refusal = GemmPacking.packedWeightRefusal(k, ev, b.kc(), b.nv());
        String plan = "K block kc=" + b.kc() + ", panels nv=" + b.nv() + " wide";
        if (refusal == null) {
            wanted = "this plan's packed weight " + GemmPacking.packedWeight(k, ev, b.kc(), b.nv()) + " (" + plan + ")";
        } else {
            wanted = "a packed weight of this plan (" + plan + "): " + refusal;
        }
        boolean packed = refusal == null && GemmPacking.isPackedWeight(acc.dims().get(kDim), acc.dims().get(vDim), k,
                ev, b.kc(), b.nv());
        if (!packed) {
            throw Declined.of("gemm: %s (layout %s) walks k in loops %s and %s in loops %s: neither one affine loop "
                    + "per dim nor %s; axe4j.cpu.packed_weight_layout(K, N, dtype, target) gives the layout this target "
                    + "reads in place", o, o.layout(), acc.dims().get(kDim), v, acc.dims().get(vDim), wanted);
        }
        if (!acc.startTerms().isEmpty()) {
            throw Declined.of("gemm: the packed weight %s starts at a run-time offset; it is read in place from a "
                    + "constant start only", o);
        }
        if (acc.replicas().stream().anyMatch(r -> r != 0)) {
            throw Declined.of("gemm: the packed weight %s has replicas %s; it is read in place without replicas", o,
                    acc.replicas());
        }
        RunTimeStarts starts = RunTimeStarts.of(acc);
        Map<String, Long> inner = new LinkedHashMap<>();
        inner.put("k", b.nv());   // k' moves one panel row, v by one element inside a panel
        inner.put(v, 1L);
        return new PlanParts.GemmAccess(acc.base(), starts.strides(), starts.terms(), inner.get("m"), inner.get("n"),
                inner.get("k"), acc.replicas(), o.layout().toString());
    }

    /** The logical dims (m, n, k) of a matrix operand's rows and columns, as op(A) op(B) reads them. */
    private static String[] dimNames(Request call, String role) {
        boolean ta = call.flag("trans_a");
        boolean tb = call.flag("trans_b");
        return switch (role) {
            case "A" -> ta ? new String[] {"k", "m"} : new String[] {"m", "k"};
            case "B" -> tb ? new String[] {"n", "k"} : new String[] {"k", "n"};
            default -> new String[] {"m", "n"};
        };
    }

    /** The stride of a gemm matrix along logical dim {@code dim} (m, n or k). */
    private static long stride(PlanParts.GemmAccess a, String dim) {
        Long s = switch (dim) {
            case "m" -> a.m();
            case "n" -> a.n();
            default -> a.k();
        };
        if (s == null) {
            throw new IllegalStateException("gemm: the matrix has no dim " + dim + " (" + a.layout() + ")");
        }
        return s;
    }

    /** 16-bit float element types that the blocked plan widens to a float32 accumulator. */
    private static final java.util.Set<String> NARROW_FLOATS = java.util.Set.of("float16", "bfloat16");

    /**
     * How 16-bit float A and B meet a float32 accumulator, as the code does it (empty when neither is 16-bit or D is
     * not float32): each element is widened to float32 where it is read (as it is packed, or as the row kernel loads
     * it) and every multiply-add is float32. LLVM widens float16 with F16C {@code vcvtph2ps} when the target has it,
     * else with a call per element; bfloat16 exactly, by moving its 16 bits to the top of a float32. No 16-bit
     * multiply or dot product instruction is used ({@code test_cpu_gemm_16bit.py} checks the instructions).
     */
    static java.util.Optional<String> widening(Request call, CpuTarget cpu, boolean rowKernel, String packedRole) {
        if (!call.operand("D").dtype().equals("float32")) {
            return java.util.Optional.empty();
        }
        java.util.Map<String, java.util.List<String>> byType = new java.util.TreeMap<>();
        for (String role : new String[] {"A", "B"}) {
            String dtype = call.operand(role).dtype();
            if (NARROW_FLOATS.contains(dtype)) {
                byType.computeIfAbsent(dtype, t -> new java.util.ArrayList<>()).add(role);
            }
        }
        if (byType.isEmpty()) {
            return java.util.Optional.empty();
        }
        List<String> parts = new java.util.ArrayList<>();
        for (Map.Entry<String, java.util.List<String>> e : byType.entrySet()) {
            String how;
            if (e.getKey().equals("float16")) {
                how = cpu.f16c() ? "F16C vcvtph2ps"
                        : "a call to __extendhfsf2 per element (the target has no F16C; an mcpu with it, e.g. haswell,"
                        + " converts in vectors)";
            } else {
                how = "moving each element's 16 bits to the top of a float32 (exact: a zero-extend and a shift)";
            }
            parts.add(String.join(", ", e.getValue()) + " " + e.getKey() + " -> float32 by " + how);
        }
        return java.util.Optional.of(String.join("; ", parts) + ", "
                + (rowKernel ? "where the row kernel loads them (nothing is packed)" : packedRole != null
                ? "while packing, a packed " + packedRole + " where the micro-kernel reads it" : "while packing")
                + "; float32 multiply-adds into float32 accumulators: no 16-bit FMA or dot product (avx512_bf16 "
                + "vdpbf16ps, avx512_fp16) is used");
    }

    public static final Rule NAIVE = new Rule() {
        public String variant() {
            return "axe4j-cpu-gemm-naive";
        }

        public int priority() {
            return 0;
        }

        /** Any memory/cpu layouts: every element addressed from its layout's digits (see ElementwiseRules). */
        public SchedulePlan plan(Request call) {
            long[] mnk = shapes(call);
            boolean ta = call.flag("trans_a");
            boolean tb = call.flag("trans_b");
            Map<String, PlanParts.GemmDigitOperand> operands = new LinkedHashMap<>();
            operands.put("D", digits(call.operand("D"), "m", "n"));
            operands.put("A", digits(call.operand("A"), ta ? "k" : "m", ta ? "m" : "k"));
            operands.put("B", digits(call.operand("B"), tb ? "n" : "k", tb ? "k" : "n"));
            operands.put("C", digits(call.operand("C"), "m", "n"));
            return new CpuPlans.GemmNaive(mnk[0], mnk[1], mnk[2], operands);
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
            int[] loop = matrixDims(o);
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
    private static PlanParts.GemmDigitOperand digits(Operand o, String row, String col) {
        AffineAccess.requireMemoryOnly(o);
        PlanParts.DigitOperand d = PlanAccesses.digitOperand(o);
        int[] dims = matrixDims(o);
        return new PlanParts.GemmDigitOperand(d.base(), d.rowStrides(), d.iters(), d.replicas(),
                Map.of(row, dims[0], col, dims[1]));
    }

    /** Shape checks and the (base, row stride, col stride) of every matrix, named by its logical dims. */
    static Map<String, PlanParts.GemmAccess> common(Request call) {
        return common(call, null, null);
    }

    /** As above, with {@code given} the access of {@code role} (a packed weight, which is not one loop per dim). */
    static Map<String, PlanParts.GemmAccess> common(Request call, String role, PlanParts.GemmAccess given) {
        Map<String, PlanParts.GemmAccess> access = new LinkedHashMap<>();
        for (String r : List.of("D", "A", "B", "C")) {
            String[] dims = dimNames(call, r);
            access.put(r, r.equals(role) ? given : strides(call.operand(r), dims[0], dims[1]));
        }
        return access;
    }

    /** Target, scope and the shapes of D = op(A) op(B) (+ C): M, N, K. */
    static long[] shapes(Request call) {
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
        return new long[] {m, n, k};
    }

    private static long[] matrix(Operand o) {
        int[] dims = matrixDims(o);
        return new long[] {o.extent()[dims[0]], o.extent()[dims[1]]};
    }

    /**
     * The buffer dims holding a matrix's rows and columns: its two non-unit dims, or both dims of a 2-D buffer
     * whose region has a unit extent (a 1 x K row of A when M = 1).
     */
    static int[] matrixDims(Operand o) {
        int[] loop = o.loopDims();
        if (loop.length == 2) {
            return loop;
        }
        if (o.shape().length == 2 && loop.length < 2) {
            return new int[] {0, 1};
        }
        throw Declined.of("gemm: %s has %d non-unit dims, not 2", o, loop.length);
    }

    private static PlanParts.GemmAccess strides(Operand o, String row, String col) {
        AffineAccess acc = AffineAccess.of(o);
        int[] dims = matrixDims(o);
        Map<String, Long> byDim = new LinkedHashMap<>();
        byDim.put(row, single(o, acc, dims[0]));
        byDim.put(col, single(o, acc, dims[1]));
        RunTimeStarts starts = RunTimeStarts.of(acc);
        return new PlanParts.GemmAccess(acc.base(), starts.strides(), starts.terms(), byDim.get("m"), byDim.get("n"),
                byDim.get("k"), acc.replicas(), o.layout().toString());
    }

    private static long single(Operand o, AffineAccess acc, int dim) {
        List<AffineAccess.Piece> p = acc.dims().get(dim);
        if (p.isEmpty() && o.extent()[dim] == 1) {
            return 0;  // a unit dim: its one index adds nothing past the base
        }
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
