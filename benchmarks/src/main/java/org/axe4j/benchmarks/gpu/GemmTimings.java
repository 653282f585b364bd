package org.axe4j.benchmarks.gpu;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.axe4j.tvm.DataType;
import org.axe4j.tvm.Device;
import org.axe4j.tvm.Kernel;
import org.axe4j.tvm.ModuleCache;
import org.axe4j.tvm.Timing;
import org.axe4j.tvm.TvmTensor;
import org.axe4j.tvm.cuda.Cublas;
import org.axe4j.tvm.cuda.Cuda;
import org.axe4j.tvm.cuda.CudaStream;
import org.axe4j.tvm.cuda.GpuTimer;

/**
 * The carried Hopper GEMMs timed from Java against cuBLAS in the same JVM: the native harness's inputs
 * ({@code ((7r + 13k) % 9 - 4) / 8} and {@code ((11n + 5k) % 9 - 4) / 8}, exact in FP16), D = A B^T,
 * each launch after a 512 MiB L2 flush, median over {@code runs} after {@code warmup}, CUDA events on
 * one stream. D is compared with cuBLAS's D over every element and with an FP32 dot product at 256
 * sampled positions (the case's rtol/atol).
 */
final class GemmTimings {
    private static final int SAMPLES = 256;

    private GemmTimings() {}

    static List<Map<String, Object>> run(Cuda cuda, Path bundle, JsonArray gemms, int warmup, int runs) {
        List<Map<String, Object>> results = new ArrayList<>();
        try (CudaStream stream = CudaStream.create(cuda, 0);
             GpuTimer timer = new GpuTimer(cuda, stream, GpuTimer.DEFAULT_FLUSH_BYTES);
             Cublas cublas = Cublas.create(cuda, stream)) {
            for (JsonElement element : gemms) {
                JsonObject g = element.getAsJsonObject();
                Map<String, Object> result = new LinkedHashMap<>();
                result.put("name", g.get("name").getAsString());
                try {
                    result.putAll(time(cuda, bundle, g, stream, timer, cublas, warmup, runs));
                } catch (RuntimeException e) {
                    result.put("error", e.toString());
                }
                results.add(result);
                System.err.println("[java] gemm " + result);
            }
        }
        return results;
    }

    static ByteBuffer harnessInput(int rows, int k, int a, int b) {
        ByteBuffer bytes = ByteBuffer.allocate(Math.multiplyExact(2 * rows, k)).order(ByteOrder.LITTLE_ENDIAN);
        for (long r = 0; r < rows; r++) {
            for (long c = 0; c < k; c++) {
                bytes.putShort(Elements.floatToHalf((float) ((a * r + b * c) % 9 - 4) / 8f));
            }
        }
        return bytes.flip();
    }

    private static Map<String, Object> time(Cuda cuda, Path bundle, JsonObject g, CudaStream stream, GpuTimer timer,
                                            Cublas cublas, int warmup, int runs) {
        int m = g.get("m").getAsInt();
        int n = g.get("n").getAsInt();
        int k = g.get("k").getAsInt();
        Kernel kernel = ModuleCache.shared().kernel(bundle.resolve(g.get("library").getAsString()),
                g.get("symbol").getAsString());
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("m", m);
        result.put("n", n);
        result.put("k", k);
        try (DeviceArrays arrays = new DeviceArrays(cuda, Device.cuda(0))) {
            ByteBuffer aHost = harnessInput(m, k, 7, 13);
            ByteBuffer bHost = harnessInput(n, k, 11, 5);
            TvmTensor a = arrays.upload(aHost, new long[] {m, k}, DataType.FLOAT16);
            TvmTensor b = arrays.upload(bHost, new long[] {n, k}, DataType.FLOAT16);
            TvmTensor d = arrays.zeros(new long[] {m, n}, DataType.FLOAT16);
            TvmTensor dCublas = arrays.zeros(new long[] {m, n}, DataType.FLOAT16);
            Timing ours = timer.time(g.get("name").getAsString(), () -> kernel.call(a, b, d), warmup, runs);
            Timing theirs = timer.time("cuBLAS " + m + "x" + n + "x" + k, () -> cublas.gemmABt(a.dataAddress(),
                    b.dataAddress(), dCublas.dataAddress(), m, n, k, Cublas.Element.FLOAT16), warmup, runs);
            double flops = 2.0 * m * n * k;
            result.put("runs", runs);
            result.put("warmup", warmup);
            result.put("flush_bytes", timer.flushBytes());
            result.put("median_ms", ours.median() * 1e3);
            result.put("min_ms", ours.min() * 1e3);
            result.put("max_ms", ours.max() * 1e3);
            result.put("tflops", flops / ours.median() / 1e12);
            result.put("cublas_median_ms", theirs.median() * 1e3);
            result.put("cublas_tflops", flops / theirs.median() / 1e12);
            result.put("ratio_to_cublas", theirs.median() / ours.median());
            ByteBuffer got = arrays.download(d);
            ByteBuffer reference = arrays.download(dCublas);
            double maxRel = 0;
            for (long i = 0; i < (long) m * n; i++) {
                double x = Elements.value(got, "float16", i);
                double y = Elements.value(reference, "float16", i);
                maxRel = Math.max(maxRel, Math.abs(x - y) / (Math.abs(y) + 1));
            }
            result.put("max_rel_diff_to_cublas", maxRel);
            result.put("sampled_check", sampled(got, aHost, bHost, m, n, k, g.get("rtol").getAsDouble(),
                    g.get("atol").getAsDouble()));
        }
        return result;
    }

    /** D at {@value #SAMPLES} seeded positions against an FP32 dot product of the FP16 inputs. */
    private static Map<String, Object> sampled(ByteBuffer d, ByteBuffer a, ByteBuffer b, int m, int n, int k,
                                               double rtol, double atol) {
        SplittableRandom random = new SplittableRandom(0);
        int mismatches = 0;
        double worst = 0;
        for (int s = 0; s < SAMPLES; s++) {
            int r = random.nextInt(m);
            int c = random.nextInt(n);
            float sum = 0;
            for (int j = 0; j < k; j++) {
                sum += (float) Elements.value(a, "float16", (long) r * k + j) * (float) Elements.value(b, "float16",
                        (long) c * k + j);
            }
            double want = Elements.halfToFloat(Elements.floatToHalf(sum));
            double got = Elements.value(d, "float16", (long) r * n + c);
            worst = Math.max(worst, Math.abs(got - want));
            if (Math.abs(got - want) > atol + rtol * Math.abs(want)) {
                mismatches++;
            }
        }
        return Map.of("samples", SAMPLES, "mismatches", mismatches, "max_abs_error", worst);
    }
}
