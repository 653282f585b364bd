package org.axe4j.benchmarks.gpu;

import com.google.gson.JsonObject;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.axe4j.tvm.DataType;
import org.axe4j.tvm.Device;
import org.axe4j.tvm.Kernel;
import org.axe4j.tvm.ModuleCache;
import org.axe4j.tvm.TvmTensor;
import org.axe4j.tvm.cuda.Cuda;

/**
 * Host time per launch of a small kernel from Java: {@code calls} back-to-back {@code Kernel.call}s,
 * then one device synchronisation, over the wall-clock time; best of 5 rounds. The GPU work is tiny,
 * so this is the cost of the call path (argument encoding, TVM's packed call, the CUDA launch).
 */
final class LaunchOverhead {
    private LaunchOverhead() {}

    static Map<String, Object> run(Cuda cuda, Path bundle, JsonObject spec, int calls) {
        Kernel kernel = ModuleCache.shared().kernel(bundle.resolve(spec.get("library").getAsString()),
                spec.get("symbol").getAsString());
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("kernel", spec.get("name").getAsString());
        result.put("calls", calls);
        try (DeviceArrays arrays = new DeviceArrays(cuda, Device.cuda(0))) {
            var args = spec.getAsJsonArray("args");
            TvmTensor[] tensors = new TvmTensor[args.size()];
            for (int i = 0; i < tensors.length; i++) {
                JsonObject arg = args.get(i).getAsJsonObject();
                long[] shape = new com.google.gson.Gson().fromJson(arg.get("shape"), long[].class);
                tensors[i] = arrays.zeros(shape, DataType.parse(arg.get("dtype").getAsString()));
            }
            double best = Double.POSITIVE_INFINITY;
            for (int round = 0; round < 6; round++) {
                long start = System.nanoTime();
                for (int i = 0; i < calls; i++) {
                    kernel.call((Object[]) tensors);
                }
                cuda.runtime().deviceSynchronize("launch-overhead round");
                double us = (System.nanoTime() - start) / 1e3 / calls;
                if (round > 0) {   // the first round warms up the JIT
                    best = Math.min(best, us);
                }
            }
            result.put("us_per_launch", best);
        }
        return result;
    }
}
