package org.axe4j.mesh;

import org.axe4j.layout.AxeException;

/**
 * Plans a redistribution: the {@link SymbolicPlanner} (plan size independent of the tensor, at the lower bound),
 * or, when the two layouts' radices have no common refinement whose non-aligned (composite) digits take at most
 * {@link Refinement#COMPOSITE_LIMIT} values, the
 * {@link ElementPlanner} for tensors of at most {@link Holdings#ELEMENT_LIMIT} elements. {@link Plan#planner} says
 * which one planned, {@link Plan#note} why.
 */
public final class Planner {
    private Planner() {}

    public static Plan plan(DistTensor src, DistTensor dst, int elementBytes) {
        SymbolicPlanner.checkRequest(src, dst, elementBytes);
        Plan p = SymbolicPlanner.plan(src, dst, elementBytes);
        if (p != null) {
            return p;
        }
        String why = "the source radix " + src.layout().shard() + " and the destination radix " + dst.layout().shard()
                + " have no common refinement with at most 2^16 enumerated values";
        if (Math.max(src.layout().size(), dst.layout().size()) > Holdings.ELEMENT_LIMIT) {
            throw new AxeException(AxeException.Kind.INVALID, "redistribute " + src + " -> " + dst + ": " + why
                    + " and the tensor has more than 2^26 elements, so it cannot be planned element by element either");
        }
        return ElementPlanner.plan(src, dst, elementBytes, why + "; planned element by element");
    }
}
