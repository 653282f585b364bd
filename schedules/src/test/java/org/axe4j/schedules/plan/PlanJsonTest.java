package org.axe4j.schedules.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A plan record's JSON: kind and schema first, snake_case fields, absent optionals left out, nulls refused. */
class PlanJsonTest {
    private static final PlanParts.Access DST = new PlanParts.Access(3, Map.of("0", 8L), null, List.of(0L, 64L),
            "S[(8, 8):(8, 1)]", List.of(3L, 4L, 3L));

    @Test
    void fieldsAreWrittenUnderTheirSchemaNames() {
        CudaPlans.Affine plan = new CudaPlans.Affine(32, 4, 16, 1,
                List.of(new PlanParts.StridedLoop(16, Map.of("dst", 4L))), Map.of("dst", DST), List.of("n"));
        assertEquals("{\"kind\":\"cuda-affine\",\"schema\":" + PlanSchema.VERSION + ",\"threads\":32,\"vec\":4,"
                + "\"chunks\":16,\"rounds\":1,\"loops\":[{\"extent\":16,\"strides\":{\"dst\":4}}],\"access\":{\"dst\":"
                + "{\"base\":3,\"start_strides\":{\"0\":8},\"replicas\":[0,64],\"layout\":\"S[(8, 8):(8, 1)]\","
                + "\"swizzle\":[3,4,3]}},\"notes\":[\"n\"]}", PlanJson.json(plan));
        PlanValidator.validate(PlanJson.json(plan));
        CudaPlans.Wgmma wgmma = new CudaPlans.Wgmma("wgmma", true, 1, false, 8,
                new PlanParts.SharedOperand("A", 3, 64, 1, null, null),
                new PlanParts.SharedOperand("B", 3, 64, 1, null, null),
                List.of(new CudaPlans.WgmmaTile(List.of(0L), List.of(new PlanParts.OperandStep(0, 0)))), List.of());
        Map<String, Object> tree = PlanJson.tree(wgmma);
        assertEquals(List.of("kind", "schema", "instruction", "accum", "wait", "proxy_fence", "registers", "A", "B",
                "tiles", "notes"), List.copyOf(tree.keySet()));
        assertEquals(1L, tree.get("wait"));
        PlanValidator.validate(PlanJson.json(wgmma));
    }

    @Test
    void aNullRequiredFieldIsNamedWithItsKind() {
        CpuPlans.Affine plan = new CpuPlans.Affine(List.of(), Map.of("dst", new PlanParts.Access(0, Map.of(), null,
                List.of(0L), null, null)), 0, List.of());
        assertEquals("plan kind 'affine': field 'access.dst.layout' is null (only @MayBeAbsent fields may be)",
                assertThrows(IllegalStateException.class, () -> PlanJson.json(plan)).getMessage());
    }
}
