package org.axe4j.benchmarks.gpu;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.axe4j.tvm.DataType;
import org.axe4j.tvm.Kernel;
import org.axe4j.tvm.ModuleCache;
import org.axe4j.tvm.TvmTensor;
import org.axe4j.tvm.cuda.Cuda;

/**
 * Every carried case from Java: its arguments from the npz to device memory, the kernel, the outputs
 * back, each compared element by element with the expected ones (the case's rtol/atol, or exactly).
 * A CUDA error poisons the context for the rest of the process, so every case after one is reported
 * as not run, naming the case that broke it.
 */
final class CaseChecks {
    private CaseChecks() {}

    static List<Map<String, Object>> run(Cuda cuda, Path bundle, JsonArray cases, String only) {
        List<Map<String, Object>> results = new ArrayList<>();
        String poisonedBy = null;
        for (JsonElement element : cases) {
            JsonObject c = element.getAsJsonObject();
            String name = c.get("name").getAsString();
            if (!name.contains(only)) {
                continue;
            }
            Map<String, Object> result = new LinkedHashMap<>();
            result.put("name", name);
            long started = System.nanoTime();
            if (poisonedBy != null) {
                result.put("status", "not run");
                result.put("message", "the CUDA context was lost at " + poisonedBy);
                results.add(result);
                continue;
            }
            try {
                List<Map<String, Object>> outputs = runCase(cuda, bundle, c);
                boolean passed = outputs.stream().allMatch(o -> ((Long) o.get("mismatches")) == 0);
                result.put("status", passed ? "pass" : "fail");
                result.put("outputs", outputs);
            } catch (RuntimeException e) {
                result.put("status", "error");
                result.put("message", e.toString());
                if (e instanceof org.axe4j.tvm.cuda.CudaException || String.valueOf(e.getMessage()).contains("CUDA")) {
                    poisonedBy = name;
                }
            }
            result.put("seconds", (System.nanoTime() - started) / 1e9);
            results.add(result);
            System.err.printf("[java] %-70.70s %s%n", name, result.get("status"));
        }
        return results;
    }

    private static List<Map<String, Object>> runCase(Cuda cuda, Path bundle, JsonObject c) throws RuntimeException {
        Map<String, Npy> npz;
        try {
            npz = Npy.readNpz(bundle.resolve(c.get("npz").getAsString()));
        } catch (java.io.IOException e) {
            throw new IllegalStateException("reading " + c.get("npz").getAsString() + ": " + e.getMessage(), e);
        }
        Kernel kernel = ModuleCache.shared().kernel(bundle.resolve(c.get("library").getAsString()),
                c.get("symbol").getAsString());
        JsonArray args = c.getAsJsonArray("args");
        List<Map<String, Object>> outputs = new ArrayList<>();
        try (DeviceArrays arrays = new DeviceArrays(cuda, org.axe4j.tvm.Device.cuda(0))) {
            TvmTensor[] tensors = new TvmTensor[args.size()];
            String[] dtypes = new String[args.size()];
            for (int i = 0; i < tensors.length; i++) {
                JsonObject arg = args.get(i).getAsJsonObject();
                dtypes[i] = arg.get("dtype").getAsString();
                Npy data = npz.get("a" + i);
                tensors[i] = arrays.upload(data.buffer(), data.shape(), DataType.parse(dtypes[i]));
            }
            kernel.call((Object[]) tensors);
            cuda.runtime().deviceSynchronize(c.get("name").getAsString());
            JsonArray outs = c.getAsJsonArray("outputs");
            for (int position = 0; position < outs.size(); position++) {
                int index = outs.get(position).getAsInt();
                ByteBuffer got = arrays.download(tensors[index]);
                Npy want = npz.get("e" + position);
                Map<String, Object> check = Elements.compare(got, want.buffer(), dtypes[index], want.elements(),
                        c.get("rtol").getAsDouble(), c.get("atol").getAsDouble(), c.get("check_exact").getAsBoolean());
                check.put("argument", index);
                outputs.add(check);
            }
        }
        return outputs;
    }
}
