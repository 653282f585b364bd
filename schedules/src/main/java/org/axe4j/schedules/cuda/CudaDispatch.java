package org.axe4j.schedules.cuda;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.axe4j.schedules.Decision;
import org.axe4j.schedules.DispatchTable;
import org.axe4j.schedules.Request;
import org.axe4j.schedules.Rule;

/**
 * The CUDA dispatch table (target kind {@code cuda}), highest priority first per op: element-wise ops on register
 * tiles ({@link CudaRegisterRule}, else one element per slot: {@link CudaRegisterDigitsRule}), {@code ldmatrix}/{@code stmatrix} copies ({@link CudaMatrixRules}), then over
 * the scope's threads ({@link CudaRules}); {@code copy_async} as TMA ({@link CudaTmaRule}) or {@code cp.async}
 * ({@link CudaAsyncRules}) or, between tensor memory and registers, {@code tcgen05.ld}/{@code st}
 * ({@link CudaTmemRule}); reductions by warp shuffles ({@link CudaShuffleReduceRule}), shuffle trees or one thread
 * per output ({@link CudaReduceRule}); {@code gemm} as {@code mma.sync} ({@link CudaMmaRule}); {@code gemm_async}
 * as {@code wgmma} ({@link CudaWgmmaRule}) or {@code tcgen05.mma} ({@link CudaTcgen05Rule}).
 */
public final class CudaDispatch {
    public static final String TARGET_KIND = CudaRules.TARGET_KIND;

    public static final DispatchTable TABLE;

    static {
        Map<String, List<Rule>> table = new LinkedHashMap<>();
        for (String op : List.of("copy", "cast", "fill", "zero", "exp", "exp2", "log2", "sqrt", "reciprocal", "silu",
                "add", "sub", "mul", "fdiv", "maximum", "minimum", "fma")) {
            table.put(op, op.equals("copy")
                    ? List.of(CudaRegisterRule.INSTANCE, CudaMatrixRules.LDST, CudaRules.VECTOR,
                            CudaRegisterDigitsRule.INSTANCE, CudaRules.DIGITS)
                    : List.of(CudaRegisterRule.INSTANCE, CudaRules.VECTOR, CudaRegisterDigitsRule.INSTANCE,
                            CudaRules.DIGITS));
        }
        table.put("copy_async", List.of(CudaTmaRule.TMA, CudaAsyncRules.CP_ASYNC, CudaTmemRule.INSTANCE));
        for (String op : List.of("sum", "max", "min")) {
            table.put(op, List.of(CudaShuffleReduceRule.INSTANCE, CudaReduceRule.TREE, CudaReduceRule.INSTANCE));
        }
        table.put("gemm", List.of(CudaMmaRule.INSTANCE));
        table.put("gemm_async", List.of(CudaWgmmaRule.INSTANCE, CudaTcgen05Rule.INSTANCE));
        TABLE = new DispatchTable(TARGET_KIND, table);
    }

    private CudaDispatch() {}

    public static Decision decide(String variant, Request call) {
        return TABLE.decide(variant, call);
    }

    public static List<Decision> explain(Request call) {
        return TABLE.explain(call);
    }
}
