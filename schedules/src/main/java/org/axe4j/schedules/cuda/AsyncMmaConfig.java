package org.axe4j.schedules.cuda;

import com.google.gson.JsonElement;
import java.util.Set;
import org.axe4j.schedules.Declined;
import org.axe4j.schedules.Request;

/**
 * The config keys of {@code gemm_async} on the asynchronous tensor cores (wgmma, tcgen05.mma).
 *
 * <p>{@code proxy_fence} (default true): wgmma and tcgen05.mma read their shared-memory operands through the async
 * proxy, so bytes that threads stored (the generic proxy: {@code st.shared}, {@code stmatrix}, {@code cp.async})
 * must be ordered before them by {@code fence.proxy.async.shared::cta} (PTX ISA, memory consistency model, proxies).
 * The rules emit that fence before the first MMA unless the caller says the operands came only through the async
 * proxy (TMA loads), with {@code proxy_fence=False}. {@code wait=N} (wgmma only): the wait_group depth.
 */
record AsyncMmaConfig(long waitDepth, boolean proxyFence, long ctaGroup) {

    static AsyncMmaConfig of(Request call, Set<String> accepted, String instruction) {
        JsonElement config = call.params().get("config");
        if (config != null && config.isJsonArray()) {
            for (JsonElement key : config.getAsJsonArray()) {
                if (!accepted.contains(key.getAsString())) {
                    throw Declined.of("gemm_async: config key %s is not implemented (%s takes %s)",
                            key.getAsString(), instruction, String.join(", ", accepted.stream().sorted().toList()));
                }
            }
        }
        return new AsyncMmaConfig(readWait(call), proxyFence(call), readCtaGroup(call));
    }

    private static long readWait(Request call) {
        JsonElement wait = call.params().get("wait");
        if (wait == null || wait.isJsonNull()) {
            return 0;
        }
        if (!wait.isJsonPrimitive() || !wait.getAsJsonPrimitive().isNumber()) {
            throw Declined.of("gemm_async: wait=%s must be a constant integer", wait);
        }
        long depth = wait.getAsLong();
        if (depth < 0 || depth > 7) {
            throw Declined.of("gemm_async: wait=%d is outside wgmma.wait_group's 0..7 used here", depth);
        }
        return depth;
    }

    private static long readCtaGroup(Request call) {
        JsonElement group = call.params().get("cta_group");
        if (group == null || group.isJsonNull()) {
            return 1;
        }
        if (!group.isJsonPrimitive() || !group.getAsJsonPrimitive().isNumber()
                || (group.getAsLong() != 1 && group.getAsLong() != 2)) {
            throw Declined.of("gemm_async: cta_group=%s must be the constant 1 or 2", group);
        }
        return group.getAsLong();
    }

    private static boolean proxyFence(Request call) {
        JsonElement fence = call.params().get("proxy_fence");
        if (fence == null || fence.isJsonNull()) {
            return true;
        }
        if (fence.isJsonPrimitive() && fence.getAsJsonPrimitive().isBoolean()) {
            return fence.getAsBoolean();
        }
        if (fence.isJsonPrimitive() && fence.getAsJsonPrimitive().isNumber()
                && (fence.getAsLong() == 0 || fence.getAsLong() == 1)) {
            return fence.getAsLong() == 1;
        }
        throw Declined.of("gemm_async: proxy_fence=%s must be a constant True or False", fence);
    }
}
