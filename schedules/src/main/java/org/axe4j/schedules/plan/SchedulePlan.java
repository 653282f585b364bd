package org.axe4j.schedules.plan;

/**
 * A rule's plan for one tile call, one record per {@code kind}. Written to JSON by {@link PlanJson}, described by
 * {@link PlanSchema}; adding a kind: a record here with {@link PlanKind}, then {@code make plan-schema}, then its
 * emitter in Python.
 */
public sealed interface SchedulePlan permits CpuPlans.Affine, CpuPlans.Digits, CpuPlans.Logical, CpuPlans.Reduce,
        CpuPlans.ReduceDigits, CpuPlans.GemmBlocked, CpuPlans.GemmNaive, CudaPlans.Affine, CudaPlans.Digits,
        CudaPlans.CpAsync, CudaPlans.LdStMatrix, CudaPlans.Mma, CudaPlans.Reduce, CudaPlans.TreeReduce,
        CudaPlans.Register, CudaPlans.RegisterBoxes, CudaPlans.RegisterDigits, CudaPlans.ShuffleReduce, CudaPlans.Tcgen05, CudaPlans.TmemCopy, CudaPlans.Tma,
        CudaPlans.Wgmma, TrnPlan {

    /** The {@code kind} the emitters dispatch on ({@link PlanKind} of the record). */
    default String kind() {
        return PlanSchema.kindOf(getClass());
    }
}
