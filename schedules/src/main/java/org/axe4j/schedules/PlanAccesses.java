package org.axe4j.schedules;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Iter;
import org.axe4j.layout.Point;
import org.axe4j.schedules.plan.PlanParts;

/**
 * How a plan addresses its operands, shared by the CPU and CUDA rules: per operand, an affine access
 * ({@code base + sum_l i_l * stride_l}, plus the {@link RunTimeStarts} terms and the replicas) or, for the digits
 * rules, the div/mod digits of its layout.
 */
public final class PlanAccesses {
    private PlanAccesses() {}

    /** The plan access of each operand, by role; {@code swizzles} (role -> [bits, base, shift]) where swizzled. */
    public static Map<String, PlanParts.Access> accessMap(List<Operand> ops, List<AffineAccess> access,
            Map<String, List<Long>> swizzles) {
        Map<String, PlanParts.Access> out = new LinkedHashMap<>();
        for (int o = 0; o < ops.size(); o++) {
            RunTimeStarts starts = RunTimeStarts.of(access.get(o));
            out.put(ops.get(o).role(), new PlanParts.Access(access.get(o).base(), starts.strides(), starts.terms(),
                    access.get(o).replicas(), ops.get(o).layout().toString(), swizzles.get(ops.get(o).role())));
        }
        return out;
    }

    public static Map<String, PlanParts.Access> accessMap(List<Operand> ops, List<AffineAccess> access) {
        return accessMap(ops, access, Map.of());
    }

    /**
     * What the digits rule needs to address any element of {@code o}: the flat index
     * {@code x = sum_d c_d * rowStride_d} of coordinate c, then
     * {@code addr = base + sum_k ((x / below_k) mod e_k) * s_k (+ r)} over the shard iters, where below_k is the
     * product of the extents after iter k and a cpu iter's stride is scaled by the slab size span_m.
     */
    public static PlanParts.DigitOperand digitOperand(Operand o) {
        long[] rowStrides = new long[o.shape().length];
        long step = 1;
        for (int d = o.shape().length - 1; d >= 0; d--) {
            rowStrides[d] = step;
            step *= o.shape()[d];
        }
        long slab = o.layout().spanOn(Axis.M);
        List<List<Long>> iters = new ArrayList<>();
        long below = 1;
        for (int k = o.layout().shard().size() - 1; k >= 0; k--) {
            Iter it = o.layout().shard().get(k);
            long stride = it.axis().equals(AffineAccess.CPU) ? it.stride() * slab : it.stride();
            iters.add(0, List.of(it.extent(), stride, below));
            below *= it.extent();
        }
        List<Long> replicas = new ArrayList<>();
        for (Point r : o.layout().replicaSet()) {
            replicas.add(r.get(Axis.M));
        }
        return new PlanParts.DigitOperand(o.elemOffset() + o.layout().offsetOn(Axis.M),
                Arrays.stream(rowStrides).boxed().toList(), iters, replicas);
    }
}
