package org.axe4j.schedules.trn;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.axe4j.schedules.DispatchTable;
import org.axe4j.schedules.Rule;

/** The Trainium dispatch table (target kind {@code trn}): TensorEngine GEMM, copies, element-wise ops, F reductions. */
public final class TrnDispatch {
    public static final String TARGET_KIND = TrnTiles.TARGET_KIND;

    public static final DispatchTable TABLE;

    static {
        Map<String, List<Rule>> table = new LinkedHashMap<>();
        table.put("gemm", List.of(TrnGemmRule.INSTANCE));
        table.put("copy", List.of(TrnCopyRule.INSTANCE));
        for (String op : TrnElementwiseRule.OPS) {
            table.put(op, List.of(TrnElementwiseRule.INSTANCE));
        }
        for (String op : List.of("sum", "max", "min")) {
            table.put(op, List.of(TrnReduceRule.INSTANCE));
        }
        TABLE = new DispatchTable(TARGET_KIND, table);
    }

    private TrnDispatch() {}
}
