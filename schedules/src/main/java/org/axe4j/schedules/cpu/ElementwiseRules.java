package org.axe4j.schedules.cpu;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.axe4j.schedules.AffineAccess;
import org.axe4j.schedules.Declined;
import org.axe4j.schedules.ElementwiseLoops;
import org.axe4j.schedules.LoopNest;
import org.axe4j.schedules.Operand;
import org.axe4j.schedules.PlanAccesses;
import org.axe4j.schedules.Request;
import org.axe4j.schedules.Rule;
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
final class ElementwiseRules {
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
            List<Operand> ops = ElementwiseLoops.checkedOperands(call);
            List<AffineAccess> access = new ArrayList<>();
            for (Operand o : ops) {
                access.add(AffineAccess.of(o));
            }
            List<LoopNest.Loop> loops = ElementwiseLoops.affineLoops(call, ops, access);
            boolean[] vectorOperands = new boolean[ops.size()];
            Arrays.fill(vectorOperands, true);
            LoopNest nest = LoopNest.schedule(loops, vectorOperands, vectors(call, ops, 1), ops.get(0).elements(),
                    false);
            List<String> roles = ops.stream().map(Operand::role).toList();
            return new CpuPlans.Affine(nest.describe(roles), PlanAccesses.accessMap(ops, access), nest.tail(),
                    nest.notes());
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
            List<Operand> ops = ElementwiseLoops.checkedOperands(call);
            Map<String, PlanParts.DigitOperand> operands = new LinkedHashMap<>();
            for (Operand o : ops) {
                AffineAccess.requireMemoryOnly(o);
                operands.put(o.role(), PlanAccesses.digitOperand(o));
            }
            return new CpuPlans.Digits(logicalLoops(ops), operands, List.of("serial logical loops; every address "
                    + "from the layout's digits (div/mod per element), replicas and cpu slabs included"));
        }
    };

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
            List<Operand> ops = ElementwiseLoops.checkedOperands(call);
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
     * The vector widths for {@code ops} on the call's target: {@link #lanes} wide loops, the target's register
     * width ({@link CpuTarget}), and {@code accumulators} registers of partial results for a vectorized reduction.
     */
    static LoopNest.Vectors vectors(Request call, List<Operand> ops, int accumulators) {
        int lanes = lanes(ops);
        return new LoopNest.Vectors(lanes, Math.min(lanes, CpuTarget.of(call).lanes(widestBytes(ops))),
                accumulators);
    }

    private static int widestBytes(List<Operand> ops) {
        int bytes = 1;
        for (Operand o : ops) {
            bytes = Math.max(bytes, o.elementBytes());
        }
        return bytes;
    }

    /** Vector width in elements: 64 bytes (an AVX-512 register, or two AVX2 ones) of the widest element. */
    static int lanes(List<Operand> ops) {
        return Math.max(2, 64 / widestBytes(ops));
    }
}
