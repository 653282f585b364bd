package org.axe4j.schedules;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The CUDA dispatch table (target kind {@code cuda}): element-wise and reduction rules over the scope's threads,
 * register tiles partitioned over thread axes first ({@link CudaRegisterRule}, {@link CudaShuffleReduceRule}),
 * mma.sync GEMM of a warp's register tiles.
 */
public final class CudaDispatch {
    public static final String TARGET_KIND = CudaRules.TARGET_KIND;

    static final DispatchTable TABLE;

    static {
        Map<String, List<Rule>> table = new LinkedHashMap<>();
        for (String op : List.of("copy", "cast", "fill", "zero", "exp", "exp2", "log2", "sqrt", "reciprocal", "silu",
                "add", "sub", "mul", "fdiv", "maximum", "minimum")) {
            table.put(op, op.equals("copy")
                    ? List.of(CudaRegisterRule.INSTANCE, CudaMatrixRules.LDST, CudaRules.VECTOR, CudaRules.DIGITS)
                    : List.of(CudaRegisterRule.INSTANCE, CudaRules.VECTOR, CudaRules.DIGITS));
        }
        table.put("copy_async", List.of(CudaTmaRule.TMA, CudaAsyncRules.CP_ASYNC));
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
