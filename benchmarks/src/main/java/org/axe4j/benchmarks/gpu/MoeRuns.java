package org.axe4j.benchmarks.gpu;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.axe4j.tvm.DataType;
import org.axe4j.tvm.Device;
import org.axe4j.tvm.Kernel;
import org.axe4j.tvm.ModuleCache;
import org.axe4j.tvm.Timing;
import org.axe4j.tvm.TvmTensor;
import org.axe4j.tvm.cuda.Cuda;
import org.axe4j.tvm.cuda.CudaStream;
import org.axe4j.tvm.cuda.GpuTimer;

/**
 * The MoE layer's kernels from Java (Qwen3-30B-A3B experts), on inputs {@code moe_inputs.py} wrote
 * with numpy: tokens, weights, the routing's host tile schedule, and the numpy reference of sampled
 * tokens. Both forms run, the three kernels (GEMM1, GEMM2, combine) and the fused experts kernel with
 * combine, each on zeroed H, Y and output, checked at the reference's rows, then timed as
 * {@code moe_bench.py} times: best of {@code repeat} batches of 10 launches, CUDA events.
 */
final class MoeRuns {
    private static final int LAUNCHES = 10;

    private MoeRuns() {}

    static List<Map<String, Object>> run(Cuda cuda, Path bundle, JsonObject moe, Path inputs, int repeat) {
        List<Map<String, Object>> results = new ArrayList<>();
        for (JsonElement element : moe.getAsJsonArray("runs")) {
            JsonObject run = element.getAsJsonObject();
            String folder = "moe-" + run.get("tokens").getAsInt() + "-" + run.get("dtype").getAsString();
            Map<String, Object> result = new LinkedHashMap<>();
            result.put("tokens", run.get("tokens").getAsInt());
            result.put("dtype", run.get("dtype").getAsString());
            try {
                result.putAll(runOne(cuda, bundle, moe, run, inputs.resolve(folder), repeat));
            } catch (IOException | RuntimeException e) {
                result.put("error", e.toString());
            }
            results.add(result);
            System.err.println("[java] moe " + result);
        }
        return results;
    }

    private static Map<String, Object> runOne(Cuda cuda, Path bundle, JsonObject moe, JsonObject run, Path in,
                                              int repeat) throws IOException {
        String dtypeName = run.get("dtype").getAsString();
        DataType dtype = DataType.parse(dtypeName);
        Path library = bundle.resolve(moe.get("library").getAsString());
        JsonObject symbols = run.getAsJsonObject("symbols");
        Kernel gemm1 = ModuleCache.shared().kernel(library, symbols.get("gemm1").getAsString());
        Kernel gemm2 = ModuleCache.shared().kernel(library, symbols.get("gemm2").getAsString());
        Kernel combine = ModuleCache.shared().kernel(library, symbols.get("combine").getAsString());
        Kernel experts = ModuleCache.shared().kernel(library, symbols.get("experts").getAsString());
        Map<String, Object> result = new LinkedHashMap<>();
        try (DeviceArrays arrays = new DeviceArrays(cuda, Device.cuda(0));
             CudaStream stream = CudaStream.create(cuda, 0);
             GpuTimer timer = new GpuTimer(cuda, stream, 0)) {
            TvmTensor x = load(arrays, in.resolve("x.npy"), dtype);
            TvmTensor w1 = load(arrays, in.getParent().resolve("w1-" + dtypeName + ".npy"), dtype);
            TvmTensor w2 = load(arrays, in.getParent().resolve("w2-" + dtypeName + ".npy"), dtype);
            TvmTensor te = load(arrays, in.resolve("tile_expert.npy"), DataType.INT32);
            TvmTensor ts = load(arrays, in.resolve("tile_start.npy"), DataType.INT32);
            TvmTensor tr = load(arrays, in.resolve("tile_rows.npy"), DataType.INT32);
            TvmTensor rw = load(arrays, in.resolve("row_weight.npy"), DataType.FLOAT32);
            TvmTensor slotToken = load(arrays, in.resolve("slot_token.npy"), DataType.INT32);
            TvmTensor slotPair = load(arrays, in.resolve("slot_pair.npy"), DataType.INT32);
            long tokens = x.shape()[0];
            long hidden = x.shape()[1];
            long topK = Npy.read(in.resolve("ids.npy")).shape()[1];
            int rows = moe.get("rows").getAsInt();
            int maxTiles = run.get("max_tiles").getAsInt();
            long intermediate = w2.shape()[2];
            TvmTensor h = arrays.zeros(new long[] {(long) maxTiles * rows, intermediate}, dtype);
            TvmTensor y = arrays.zeros(new long[] {tokens * topK, hidden}, DataType.FLOAT32);
            TvmTensor out = arrays.zeros(new long[] {tokens, hidden}, dtype);
            TvmTensor sync = arrays.zeros(new long[] {maxTiles + 2}, DataType.INT32);
            Runnable three = () -> {
                gemm1.call(x, w1, te, ts, tr, slotToken, rw, h);
                gemm2.call(h, w2, te, ts, tr, slotPair, y);
                combine.call(y, out);
            };
            Runnable fused = () -> {
                experts.call(x, w1, w2, te, ts, tr, slotToken, slotPair, rw, h, y, sync);
                combine.call(y, out);
            };
            Npy reference = Npy.read(in.resolve("reference.npy"));
            Npy referenceRows = Npy.read(in.resolve("reference_rows.npy"));
            double tolerance = dtypeName.equals("bfloat16") ? 4e-2 : 2e-2;
            double flops = 2.0 * tokens * topK * 3 * hidden * intermediate;
            for (Map.Entry<String, Runnable> form : Map.of("three_kernels", three, "fused", fused).entrySet()) {
                for (TvmTensor t : new TvmTensor[] {h, y, out}) {
                    arrays.zero(t);
                }
                try (CudaStream.Active on = stream.activate()) {
                    form.getValue().run();
                }
                stream.synchronize(form.getKey());
                ByteBuffer got = arrays.download(out);
                result.put(form.getKey() + "_vs_reference", checkRows(got, reference, referenceRows, dtypeName,
                        hidden, tolerance));
                Runnable batch = () -> {
                    for (int i = 0; i < LAUNCHES; i++) {
                        form.getValue().run();
                    }
                };
                Timing timing = timer.time("MoE " + form.getKey(), batch, 1, repeat);
                double ms = timing.min() * 1e3 / LAUNCHES;
                result.put(form.getKey() + "_ms", ms);
                result.put(form.getKey() + "_tflops", flops / ms / 1e9);
            }
        }
        return result;
    }

    private static TvmTensor load(DeviceArrays arrays, Path file, DataType dtype) throws IOException {
        if (!Files.isRegularFile(file)) {
            throw new IllegalStateException("missing MoE input " + file + " (moe_inputs.py writes it)");
        }
        Npy.Mapped mapped = Npy.map(file);
        return arrays.upload(mapped.data(), mapped.shape(), dtype);
    }

    /** The output rows of the reference's tokens, allclose with rtol = atol = {@code tolerance}. */
    private static Map<String, Object> checkRows(ByteBuffer got, Npy reference, Npy rows, String dtype, long hidden,
                                                 double tolerance) {
        ByteBuffer want = reference.buffer();
        ByteBuffer tokens = rows.buffer();
        long mismatches = 0;
        double worst = 0;
        for (int r = 0; r < rows.elements(); r++) {
            long token = tokens.getInt(4 * r);
            for (long c = 0; c < hidden; c++) {
                double g = Elements.value(got, dtype, token * hidden + c);
                double w = want.getFloat((int) (4 * (r * hidden + c)));
                double error = Math.abs(g - w);
                worst = Math.max(worst, Double.isNaN(error) ? Double.POSITIVE_INFINITY : error);
                if (!(error <= tolerance + tolerance * Math.abs(w))) {
                    mismatches++;
                }
            }
        }
        return Map.of("rows_checked", rows.elements(), "mismatches", mismatches, "max_abs_diff", worst,
                "tolerance", tolerance, "matches", mismatches == 0);
    }
}
