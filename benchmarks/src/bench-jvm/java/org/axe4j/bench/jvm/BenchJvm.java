package org.axe4j.bench.jvm;

import com.google.gson.Gson;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.axe4j.bench.onnx.OnnxModel;
import org.axe4j.benchmarks.gpu.Npy;
import org.axe4j.serve.ModuleService;
import org.axe4j.tvm.CpuPool;

/**
 * axe4j's kernels against ONNX Runtime Java in one JVM, at one thread count (TVM's pool is sized by
 * {@code TVM_NUM_THREADS}, which the caller sets; ORT's intra-op threads are set to the same number).
 *
 * <p>Usage: {@code BenchJvm KERNELS_DIR THREADS ROUNDS ROUND_MS [--only NAME] [--ort-constant-weights]}, where
 * KERNELS_DIR is what {@code benchmarks/jvm_kernels.py} wrote. For each workload: both sides get the same inputs, both
 * outputs are checked against numpy's (and each other) with the workload's tolerance, then they are timed in
 * alternated rounds. With {@code --ort-constant-weights} the ONNX model holds the weights (B, bias, gamma, beta) as
 * initializers, which ORT may prepare once at load (MLAS packs a constant B); axe4j's GEMMs then take B packed into
 * the blocked GEMM's panels once at load, by the packing kernel the workload names ({@code prepack}), and read it in
 * place (bias, gamma and beta are still arguments).
 * Progress goes to stderr; stdout's last line is the JSON of the results.
 */
public final class BenchJvm {
    private BenchJvm() {}

    public static void main(String[] args) throws Exception {
        String usage = "usage: BenchJvm KERNELS_DIR THREADS ROUNDS ROUND_MS [--only NAME] [--ort-constant-weights] "
                + "[--service]";
        if (args.length < 4) {
            throw new IllegalArgumentException(usage);
        }
        Path dir = Path.of(args[0]);
        int threads = Integer.parseInt(args[1]);
        int rounds = Integer.parseInt(args[2]);
        long roundNanos = Long.parseLong(args[3]) * 1_000_000L;
        String filter = "";
        boolean constantWeights = false;
        boolean service = false;
        for (int i = 4; i < args.length; i++) {
            if (args[i].equals("--only") && i + 1 < args.length) {
                filter = args[++i];
            } else if (args[i].equals("--ort-constant-weights")) {
                constantWeights = true;
            } else if (args[i].equals("--service")) {
                service = true;
            } else {
                throw new IllegalArgumentException("unknown argument " + args[i] + "; " + usage);
            }
        }
        if (service && constantWeights) {
            throw new IllegalArgumentException("--service serves the module's own arguments (weights included) to "
                    + "both sides; it does not take --ort-constant-weights");
        }
        CpuPool.Sizing pool = CpuPool.size();
        if (pool.threads() != threads) {
            throw new IllegalStateException("TVM's pool would run " + pool.threads() + " threads (" + pool.from()
                    + "), not " + threads + ": set TVM_NUM_THREADS=" + threads + " for this JVM");
        }
        JsonObject described = JsonParser.parseString(Files.readString(dir.resolve("workloads.json"))).getAsJsonObject();
        List<Map<String, Object>> results = new ArrayList<>();
        for (JsonElement e : described.getAsJsonArray("workloads")) {
            JsonObject w = e.getAsJsonObject();
            String name = w.get("name").getAsString();
            if (name.contains(filter)) {
                results.add(service ? throughService(dir, w, threads, rounds, roundNanos)
                        : runOne(dir, w, threads, rounds, roundNanos, constantWeights));
            }
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("threads", threads);
        out.put("tvm_pool", pool.from());
        out.put("ort_weights", constantWeights ? "constants (initializers)" : "inputs");
        out.put("path", service ? "service" : "in process");
        out.put("target", described.get("target").getAsString());
        out.put("workloads", results);
        System.out.println(new Gson().toJson(out));
    }

    static OnnxModel modelOf(String kind, long[] s) {
        return switch (kind) {
            case "gemm" -> OnnxModel.matMul(s[0]);
            case "gemm_bias_gelu" -> OnnxModel.matMulBiasGelu(s[0]);
            case "layernorm" -> OnnxModel.layerNorm(s[0], s[1], 1e-5f);
            case "softmax" -> OnnxModel.softmax(s[0], s[1]);
            default -> throw new IllegalArgumentException("unknown workload kind " + kind);
        };
    }

    /** The inputs of a workload that are a model's weights. */
    static List<String> weightsOf(String kind) {
        return switch (kind) {
            case "gemm" -> List.of("B");
            case "gemm_bias_gelu" -> List.of("B", "bias");
            case "layernorm" -> List.of("gamma", "beta");
            default -> List.of();
        };
    }

    private static float[] floats(FloatBuffer b) {
        float[] out = new float[b.remaining()];
        b.duplicate().get(out);
        return out;
    }

    /**
     * The workload through {@code axe serve}'s server code on both sides: one service on the module's kernels, one
     * whose {@link OrtBackend} runs the ONNX model, each with one worker (the kernel's own threads: the pool's
     * {@code threads}, ORT's intra-op threads) and a keep-alive client sending the binary request; the answers are
     * checked against numpy's first, then the two alternate in rounds of requests.
     */
    private static Map<String, Object> throughService(Path dir, JsonObject w, int threads, int rounds,
                                                      long roundNanos) throws Exception {
        String name = w.get("name").getAsString();
        long[] shape = new Gson().fromJson(w.get("shape"), long[].class);
        double rtol = w.get("rtol").getAsDouble();
        double atol = w.get("atol").getAsDouble();
        OnnxModel model = modelOf(w.get("kind").getAsString(), shape);
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        for (JsonElement input : w.getAsJsonArray("inputs")) {
            ByteBuffer bytes = Npy.read(dir.resolve(name + "." + input.getAsString() + ".npy")).buffer();
            byte[] copy = new byte[bytes.remaining()];
            bytes.duplicate().get(copy);
            body.write(copy);
        }
        Path library = dir.resolve(w.get("library").getAsString());
        String path = "/v1/" + w.get("function").getAsString();
        FloatBuffer expected = Npy.read(dir.resolve(name + ".expected.npy")).buffer().asFloatBuffer();
        ModuleService axe = ModuleService.start(new ModuleService.Config(library, 0, 1, 16, 60_000, 5_000, null));
        ModuleService ort = ModuleService.start(new ModuleService.Config(library, 0, 1, 16, 60_000, 5_000, null,
                new OrtBackend(model, threads)));
        try (HttpCaller toAxe = new HttpCaller(axe.port(), path, body.toByteArray());
             HttpCaller toOrt = new HttpCaller(ort.port(), path, body.toByteArray())) {
            toAxe.call();
            toOrt.call();
            double axeErr = Compare.worst(floatsOf(toAxe.answer()), expected, rtol, atol,
                    name + " through axe serve: axe4j against numpy");
            double ortErr = Compare.worst(floatsOf(toOrt.answer()), expected, rtol, atol,
                    name + " through axe serve: ORT against numpy");
            AbRounds.rate(toAxe::call, roundNanos, 2);
            AbRounds.rate(toOrt::call, roundNanos, 2);
            AbRounds ab = AbRounds.measure(toAxe::call, toOrt::call, rounds, roundNanos, 2);
            double[] ratios = ab.ratios();
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("name", name);
            r.put("shape", shape);
            r.put("threads", threads);
            r.put("path", "service");
            r.put("checked", Map.of("rtol", rtol, "atol", atol, "axe4j_vs_numpy", axeErr, "ort_vs_numpy", ortErr));
            putTimes(r, ab);
            System.err.printf("  %-22s %d thread(s), through axe serve: checked (worst |diff| / tolerance: axe4j %.2f, "
                            + "ORT %.2f); axe4j %.1f requests/s, ORT %.1f requests/s, ratio %.2f (%.2f-%.2f)%n", name,
                    threads, axeErr, ortErr, AbRounds.median(ab.ratesA()), AbRounds.median(ab.ratesB()),
                    AbRounds.median(ratios), AbRounds.min(ratios), AbRounds.max(ratios));
            return r;
        } finally {
            axe.drain();
            ort.drain();
        }
    }

    /** Each side's median calls/s, the per-round ratios' median, min and max, and every round's rate. */
    private static void putTimes(Map<String, Object> r, AbRounds ab) {
        double[] ratios = ab.ratios();
        r.put("axe4j_calls_per_s", AbRounds.median(ab.ratesA()));
        r.put("ort_calls_per_s", AbRounds.median(ab.ratesB()));
        r.put("ratio_median", AbRounds.median(ratios));
        r.put("ratio_min", AbRounds.min(ratios));
        r.put("ratio_max", AbRounds.max(ratios));
        r.put("axe4j_rounds", ab.ratesA());
        r.put("ort_rounds", ab.ratesB());
    }

    private static FloatBuffer floatsOf(byte[] answer) {
        return ByteBuffer.wrap(answer).order(ByteOrder.nativeOrder()).asFloatBuffer();
    }

    /**
     * A workload built with packed weights ({@code prepack} in workloads.json: input, library, function): each such
     * input is packed once here, by its packing kernel (axe4j.cpu.weight_packer), into axe4j's argument, before
     * anything is checked or timed.
     */
    private static void prepack(Path dir, JsonObject w, Map<String, FloatBuffer> data, AxeSide axe) throws Exception {
        if (!w.has("prepack")) {
            return;
        }
        List<String> names = new ArrayList<>(data.keySet());
        for (JsonElement e : w.getAsJsonArray("prepack")) {
            JsonObject p = e.getAsJsonObject();
            String input = p.get("input").getAsString();
            try (AxeSide packer = new AxeSide(dir.resolve(p.get("library").getAsString()),
                    p.get("function").getAsString())) {
                packer.input(0).put(data.get(input).duplicate());
                packer.run();
                axe.input(names.indexOf(input)).put(packer.output());
            }
        }
    }

    private static Map<String, Object> runOne(Path dir, JsonObject w, int threads, int rounds, long roundNanos,
                                              boolean constantWeights) throws Exception {
        String name = w.get("name").getAsString();
        long[] shape = new Gson().fromJson(w.get("shape"), long[].class);
        double rtol = w.get("rtol").getAsDouble();
        double atol = w.get("atol").getAsDouble();
        JsonArray inputs = w.getAsJsonArray("inputs");
        String kind = w.get("kind").getAsString();
        OnnxModel model = modelOf(kind, shape);
        Map<String, FloatBuffer> data = new LinkedHashMap<>();
        for (JsonElement input : inputs) {
            String arg = input.getAsString();
            data.put(arg, Npy.read(dir.resolve(name + "." + arg + ".npy")).buffer().asFloatBuffer());
        }
        List<String> modelInputs = model.graph().inputs().stream().map(OnnxModel.Value::name).toList();
        if (!modelInputs.equals(new ArrayList<>(data.keySet()))) {
            throw new IllegalStateException(name + ": axe4j's inputs " + data.keySet() + " are not the ONNX model's "
                    + modelInputs);
        }
        if (constantWeights) {
            Map<String, float[]> weights = new LinkedHashMap<>();
            weightsOf(kind).forEach(arg -> weights.put(arg, floats(data.get(arg))));
            model = model.withConstants(weights);
        }
        try (AxeSide axe = new AxeSide(dir.resolve(w.get("library").getAsString()), w.get("function").getAsString());
             OrtSide ort = new OrtSide(model, threads)) {
            int i = 0;
            for (FloatBuffer values : data.values()) {
                axe.input(i++).put(values.duplicate());
            }
            prepack(dir, w, data, axe);
            List<OnnxModel.Value> ortInputs = model.graph().inputs();
            for (int j = 0; j < ortInputs.size(); j++) {
                ort.input(j).put(data.get(ortInputs.get(j).name()).duplicate());
            }
            FloatBuffer expected = Npy.read(dir.resolve(name + ".expected.npy")).buffer().asFloatBuffer();
            axe.run();
            ort.run();
            double axeErr = Compare.worst(axe.output(), expected, rtol, atol, name + ": axe4j against numpy");
            double ortErr = Compare.worst(ort.output(), expected, rtol, atol, name + ": ORT against numpy");
            double bothErr = Compare.worst(axe.output(), ort.output(), 2 * rtol, 2 * atol, name + ": axe4j against ORT");
            // warm-up: a round each, so caches, pools and the JIT are settled before timing
            AbRounds.rate(axe::run, roundNanos, 2);
            AbRounds.rate(ort::run, roundNanos, 2);
            AbRounds ab = AbRounds.measure(axe::run, ort::run, rounds, roundNanos, 2);
            double[] ratios = ab.ratios();
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("name", name);
            r.put("shape", shape);
            r.put("threads", threads);
            r.put("ort_weights", constantWeights ? "constants" : "inputs");
            r.put("axe4j_weights", w.has("prepack") ? "B packed once at load" : "inputs");
            r.put("checked", Map.of("rtol", rtol, "atol", atol, "axe4j_vs_numpy", axeErr, "ort_vs_numpy", ortErr,
                    "axe4j_vs_ort", bothErr));
            putTimes(r, ab);
            System.err.printf("  %-22s %d thread(s): checked (worst |diff| / tolerance: axe4j %.2f, ORT %.2f); "
                            + "axe4j %.1f calls/s, ORT %.1f calls/s, ratio %.2f (%.2f-%.2f)%n", name, threads, axeErr,
                    ortErr, AbRounds.median(ab.ratesA()), AbRounds.median(ab.ratesB()), AbRounds.median(ratios),
                    AbRounds.min(ratios), AbRounds.max(ratios));
            return r;
        }
    }
}
