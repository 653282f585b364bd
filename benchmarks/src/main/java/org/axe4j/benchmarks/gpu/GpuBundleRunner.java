package org.axe4j.benchmarks.gpu;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.axe4j.tvm.FastCall;
import org.axe4j.tvm.cuda.Cuda;
import org.axe4j.tvm.cuda.CudaBinaries;
import org.axe4j.tvm.cuda.CudaDriver;

/**
 * The JVM GPU bundle's Java side: with {@code jvm-manifest.json} of the bundle, checks every carried
 * case, times the GEMMs against cuBLAS, runs the MoE kernels and measures the launch overhead, all in
 * this JVM with no Python, and writes {@code java-summary.json}. Without a GPU it says so and exits 0.
 *
 * <p>Usage: {@code GpuBundleRunner BUNDLE OUT [--only TEXT] [--runs N] [--warmup N] [--moe-inputs DIR]
 * [--skip cases,gemm,moe,launch]}
 */
public final class GpuBundleRunner {
    private GpuBundleRunner() {}

    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: GpuBundleRunner BUNDLE OUT [--only TEXT] [--runs N] [--warmup N]"
                    + " [--moe-inputs DIR] [--skip cases,gemm,moe,launch]");
            System.exit(2);
        }
        Path bundle = Path.of(args[0]).toAbsolutePath();
        Path out = Path.of(args[1]).toAbsolutePath();
        Map<String, String> options = new LinkedHashMap<>();
        for (int i = 2; i + 1 < args.length; i += 2) {
            options.put(args[i], args[i + 1]);
        }
        String only = options.getOrDefault("--only", "");
        int runs = Integer.parseInt(options.getOrDefault("--runs", "30"));
        int warmup = Integer.parseInt(options.getOrDefault("--warmup", "5"));
        List<String> skip = List.of(options.getOrDefault("--skip", "").split(","));
        Files.createDirectories(out);
        CudaDriver.Probe probe = CudaDriver.probe();
        Map<String, Object> summary = new LinkedHashMap<>();
        if (!probe.present()) {
            System.out.println("no GPU: " + probe.whyNone().orElse("?") + "; nothing to run");
            summary.put("gpu", null);
            summary.put("why_not", probe.whyNone().orElse(""));
            write(out, summary);
            return;
        }
        long started = System.nanoTime();
        Cuda cuda = Cuda.enable();
        CudaBinaries.addFolder(bundle.resolve("fatbins"));
        JsonObject manifest = JsonParser.parseString(Files.readString(bundle.resolve("jvm-manifest.json")))
                .getAsJsonObject();
        summary.put("gpu", probe.gpu(0).toString());
        summary.put("java", System.getProperty("java.vm.name") + " " + System.getProperty("java.version"));
        summary.put("call_path", FastCall.describe());
        summary.put("cuda", cuda.toString());
        if (!skip.contains("cases")) {
            summary.put("cases", CaseChecks.run(cuda, bundle, manifest.getAsJsonArray("cases"), only));
        }
        if (!skip.contains("gemm")) {
            summary.put("gemm", GemmTimings.run(cuda, bundle, manifest.getAsJsonArray("gemms"), warmup, runs));
        }
        if (!skip.contains("moe") && options.containsKey("--moe-inputs")) {
            summary.put("moe", MoeRuns.run(cuda, bundle, manifest.getAsJsonObject("moe"),
                    Path.of(options.get("--moe-inputs")), 5));
        }
        if (!skip.contains("launch")) {
            summary.put("launch", LaunchOverhead.run(cuda, bundle, manifest.getAsJsonObject("launch"), 20000));
        }
        summary.put("seconds", (System.nanoTime() - started) / 1e9);
        write(out, summary);
        System.out.println("java side done in " + summary.get("seconds") + " s: " + out.resolve("java-summary.json"));
    }

    private static void write(Path out, Map<String, Object> summary) throws java.io.IOException {
        Gson gson = new GsonBuilder().setPrettyPrinting().serializeNulls().serializeSpecialFloatingPointValues().create();
        Files.writeString(out.resolve("java-summary.json"), gson.toJson(summary) + "\n");
    }
}
