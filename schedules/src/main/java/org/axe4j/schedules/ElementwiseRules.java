package org.axe4j.schedules;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.axe4j.schedules.plan.CpuPlans;
import org.axe4j.schedules.plan.PlanParts;
import org.axe4j.schedules.plan.SchedulePlan;

/**
 * Rules for element-wise tile ops (copy, cast, fill, zero, unary math, binary arithmetic): {@code dst[c] = f(src_i[c])}
 * over a region whose non-unit extents agree for every tensor operand.
 *
 * <p>{@link #VECTOR}: every operand's address must be affine in a common loop nest ({@link AffineAccess},
 * {@link LoopNest}); the destination must be written once per element (no stride-0 loop on it); every replica
 * point of the destination is stored. {@link #DIGITS}: for any memory (and cpu) layouts, a serial nest over the
 * region's logical dims that computes every address from the layout's digits with div/mod, replicas and cpu
 * slabs included: slower, but it takes any region of any such layout. {@link #SCALAR}: a serial nest over the region's logical dims that leaves
 * address computation to TVM's buffer flattening; it declines a destination layout with replicas (flattening
 * stores only the base point), an axis other than m, or a cpu iter (TVM cannot flatten it).
 */
public final class ElementwiseRules {
    private ElementwiseRules() {}

    public static final Rule VECTOR = new Rule() {
        public String variant() {
            return "axe4j-cpu-vector";
        }

        public int priority() {
            return 10;
        }

        public SchedulePlan plan(Request call) {
            Rule.requireCpuThread(call);
            List<Operand> ops = checkedOperands(call);
            List<AffineAccess> access = new ArrayList<>();
            for (Operand o : ops) {
                access.add(AffineAccess.of(o));
            }
            List<LoopNest.Loop> loops = affineLoops(call, ops, access);
            boolean[] vectorOperands = new boolean[ops.size()];
            Arrays.fill(vectorOperands, true);
            LoopNest nest = LoopNest.schedule(loops, vectorOperands, lanes(ops), ops.get(0).elements());
            List<String> roles = ops.stream().map(Operand::role).toList();
            return new CpuPlans.Affine(nest.describe(roles), accessMap(ops, access), nest.tail(), nest.notes());
        }
    };

    public static final Rule DIGITS = new Rule() {
        public String variant() {
            return "axe4j-cpu-digits";
        }

        public int priority() {
            return 5;
        }

        public SchedulePlan plan(Request call) {
            Rule.requireCpuThread(call);
            List<Operand> ops = checkedOperands(call);
            Map<String, PlanParts.DigitOperand> operands = new LinkedHashMap<>();
            for (Operand o : ops) {
                AffineAccess.requireMemoryOnly(o);
                operands.put(o.role(), digitOperand(o));
            }
            return new CpuPlans.Digits(logicalLoops(ops), operands, List.of("serial logical loops; every address "
                    + "from the layout's digits (div/mod per element), replicas and cpu slabs included"));
        }
    };

    /**
     * What the digits rule needs to address any element of {@code o}: the flat index
     * {@code x = sum_d c_d * rowStride_d} of coordinate c, then
     * {@code addr = base + sum_k ((x / below_k) mod e_k) * s_k (+ r)} over the shard iters, where below_k is the
     * product of the extents after iter k and a cpu iter's stride is scaled by the slab size span_m.
     */
    static PlanParts.DigitOperand digitOperand(Operand o) {
        long[] rowStrides = new long[o.shape().length];
        long step = 1;
        for (int d = o.shape().length - 1; d >= 0; d--) {
            rowStrides[d] = step;
            step *= o.shape()[d];
        }
        long slab = o.layout().spanOn(org.axe4j.layout.Axis.M);
        List<List<Long>> iters = new ArrayList<>();
        long below = 1;
        for (int k = o.layout().shard().size() - 1; k >= 0; k--) {
            org.axe4j.layout.Iter it = o.layout().shard().get(k);
            long stride = it.axis().equals(AffineAccess.CPU) ? it.stride() * slab : it.stride();
            iters.add(0, List.of(it.extent(), stride, below));
            below *= it.extent();
        }
        List<Long> replicas = new ArrayList<>();
        for (org.axe4j.layout.Point r : o.layout().replicaSet()) {
            replicas.add(r.get(org.axe4j.layout.Axis.M));
        }
        return new PlanParts.DigitOperand(o.elemOffset() + o.layout().offsetOn(org.axe4j.layout.Axis.M),
                Arrays.stream(rowStrides).boxed().toList(), iters, replicas);
    }

    /** Serial loops over the region's non-unit dims, each naming the dim it drives in every operand. */
    static List<PlanParts.KindedDimLoop> logicalLoops(List<Operand> ops) {
        List<PlanParts.KindedDimLoop> loops = new ArrayList<>();
        long[] extents = ops.get(0).loopExtents();
        for (int k = 0; k < extents.length; k++) {
            Map<String, Integer> dims = new LinkedHashMap<>();
            for (Operand o : ops) {
                dims.put(o.role(), o.loopDims()[k]);
            }
            loops.add(new PlanParts.KindedDimLoop(extents[k], "serial", dims));
        }
        return loops;
    }

    public static final Rule SCALAR = new Rule() {
        public String variant() {
            return "axe4j-cpu-scalar";
        }

        public int priority() {
            return 0;
        }

        public SchedulePlan plan(Request call) {
            Rule.requireCpuThread(call);
            List<Operand> ops = checkedOperands(call);
            for (Operand o : ops) {
                AffineAccess.requireMemoryOnly(o);
                if (AffineAccess.distributed(o)) {
                    throw Declined.of("%s: layout %s has a cpu iter; TVM's buffer flattening has no cpu axis",
                            call.op(), o.layout());
                }
            }
            Operand dst = ops.get(0);
            if (!dst.layout().replica().isEmpty()) {
                throw Declined.of("%s: destination layout %s has replicas; TVM's buffer flattening stores only the "
                        + "base point", call.op(), dst.layout());
            }
            return new CpuPlans.Logical(logicalLoops(ops),
                    List.of("serial logical loops; addresses from TVM's layout flattening"));
        }
    };

    /**
     * The loops of an element-wise op over affine operands: per region dim, the common refinement of the operands'
     * pieces ({@link LoopNest#refine}); declined when the destination maps several region elements to one address.
     */
    static List<LoopNest.Loop> affineLoops(Request call, List<Operand> ops, List<AffineAccess> access) {
        List<LoopNest.Loop> loops = new ArrayList<>();
        int[][] dims = new int[ops.size()][];
        for (int o = 0; o < ops.size(); o++) {
            dims[o] = ops.get(o).loopDims();
        }
        long[] extents = ops.get(0).loopExtents();
        for (int k = 0; k < extents.length; k++) {
            List<List<AffineAccess.Piece>> pieces = new ArrayList<>();
            for (int o = 0; o < ops.size(); o++) {
                pieces.add(access.get(o).dims().get(dims[o][k]));
            }
            loops.addAll(LoopNest.refine(pieces, extents[k], false, call.op() + " dim " + k));
        }
        for (LoopNest.Loop l : loops) {
            if (l.strides()[0] == 0 && l.extent() > 1) {
                throw Declined.of("%s: destination layout %s maps %d region elements to one address",
                        call.op(), ops.get(0).layout(), l.extent());
            }
        }
        return loops;
    }

    /** The tensor operands, destination first, after the op-specific checks shared by both rules. */
    static List<Operand> checkedOperands(Request call) {
        if (call.flag("bias_scale")) {
            throw Declined.of("%s with bias/scale operands is not handled by the element-wise rules", call.op());
        }
        List<Operand> ops = call.operands();
        if (ops.isEmpty() || !ops.get(0).role().equals("dst")) {
            throw Declined.of("%s: the first operand must be the destination", call.op());
        }
        Operand dst = ops.get(0);
        long[] extents = dst.loopExtents();
        for (Operand o : ops.subList(1, ops.size())) {
            if (!Arrays.equals(o.loopExtents(), extents)) {
                throw Declined.of("%s: region extents %s of %s differ from %s of the destination (unit dims dropped)",
                        call.op(), Arrays.toString(o.loopExtents()), o.role(), Arrays.toString(extents));
            }
            if (call.op().equals("copy") && !o.dtype().equals(dst.dtype())) {
                throw Declined.of("copy: dtypes %s -> %s differ; cast converts", o.dtype(), dst.dtype());
            }
        }
        return ops;
    }

    /** Vector width in elements: 64 bytes (an AVX-512 register, or two AVX2 ones) of the widest element. */
    static int lanes(List<Operand> ops) {
        int bytes = 1;
        for (Operand o : ops) {
            bytes = Math.max(bytes, o.elementBytes());
        }
        return Math.max(2, 64 / bytes);
    }

    /**
     * What the run-time starts add to an operand's address: {@code strides} (start s_d adds {@code s_d * stride})
     * for a dim walked by one stride from its start, else {@code terms}, per dim a list of [divisor, modulus,
     * stride]: {@code (floor(s_d / divisor) mod modulus) * stride} each, modulus 0 for none; {@code terms} is null
     * when every dim has a stride.
     */
    record RunTimeStarts(Map<String, Long> strides, Map<String, List<List<Long>>> terms) {
        static RunTimeStarts of(AffineAccess access) {
            Map<String, Long> strides = new LinkedHashMap<>();
            Map<String, List<List<Long>>> terms = new LinkedHashMap<>();
            access.startTerms().forEach((d, list) -> {
                if (list.size() == 1 && list.get(0).divisor() == 1 && list.get(0).modulus() == 0) {
                    strides.put(Integer.toString(d), list.get(0).stride());
                } else {
                    terms.put(Integer.toString(d), list.stream()
                            .map(t -> List.of(t.divisor(), t.modulus(), t.stride())).toList());
                }
            });
            return new RunTimeStarts(strides, terms.isEmpty() ? null : terms);
        }
    }

    /** The plan access of each operand, by role; {@code swizzles} (role -> [bits, base, shift]) where swizzled. */
    static Map<String, PlanParts.Access> accessMap(List<Operand> ops, List<AffineAccess> access,
            Map<String, List<Long>> swizzles) {
        Map<String, PlanParts.Access> out = new LinkedHashMap<>();
        for (int o = 0; o < ops.size(); o++) {
            RunTimeStarts starts = RunTimeStarts.of(access.get(o));
            out.put(ops.get(o).role(), new PlanParts.Access(access.get(o).base(), starts.strides(), starts.terms(),
                    access.get(o).replicas(), ops.get(o).layout().toString(), swizzles.get(ops.get(o).role())));
        }
        return out;
    }

    static Map<String, PlanParts.Access> accessMap(List<Operand> ops, List<AffineAccess> access) {
        return accessMap(ops, access, Map.of());
    }
}
