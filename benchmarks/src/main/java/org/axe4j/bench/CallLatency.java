package org.axe4j.bench;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.axe4j.tvm.DataType;
import org.axe4j.tvm.Device;
import org.axe4j.tvm.FastCall;
import org.axe4j.tvm.Kernel;
import org.axe4j.tvm.ModuleCache;
import org.axe4j.tvm.Tvm;
import org.axe4j.tvm.TvmFunction;
import org.axe4j.tvm.TvmLibraries;
import org.axe4j.tvm.TvmTensor;

/**
 * Nanoseconds per call of TVM's C++ no-op packed function {@code testing.nop} (from
 * {@code libtvm_ffi_testing.so}) called from Java through {@code TVMFFIFunctionCall} with pooled
 * argument buffers, on the call path {@link FastCall} chose for this JVM (JNI, or JNA with
 * {@code -Daxe4j.tvm.jni=false}); also a call into a Java no-op registered with TVM (Java to C to
 * Java).
 *
 * <p>With a third argument, the path of an exported {@code vector_add(A, B, C)} module, it also
 * times one kernel invocation with three tensor arguments: TVM-allocated tensors
 * ({@code java_kernel_ns}) and a {@link Kernel.Workspace} of tensors over direct buffers
 * ({@code java_kernel_workspace_ns}).
 *
 * <p>Usage: {@code CallLatency [iterations] [rounds] [vector_add.so]}. Prints the call path
 * ({@code call_path jni|jna (why)}), one line per case and a final JSON line
 * {@code {"java_nop0_ns":..., ...}}; each figure is the best round's mean.
 */
public final class CallLatency {
    private CallLatency() {}

    interface Body {
        void run(int iterations);
    }

    static double bestNanosPerCall(Body body, int iterations, int rounds) {
        body.run(Math.max(10_000, iterations / 4));
        double best = Double.MAX_VALUE;
        for (int r = 0; r < rounds; r++) {
            long start = System.nanoTime();
            body.run(iterations);
            best = Math.min(best, (System.nanoTime() - start) / (double) iterations);
        }
        return best;
    }

    public static void main(String[] args) {
        int iterations = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        Tvm.load();
        if (Tvm.findFunction("testing.nop").isEmpty()) {
            TvmLibraries.loadAdditional("libtvm_ffi_testing.so");
        }
        TvmFunction nop = Tvm.function("testing.nop");
        TvmFunction javaNop = Tvm.register("axe4j.bench.nop", a -> null, true);
        Long one = 1L;
        Map<String, Double> figures = new LinkedHashMap<>();
        figures.put("java_nop0_ns", bestNanosPerCall(n -> {
            for (int i = 0; i < n; i++) {
                nop.call();
            }
        }, iterations, rounds));
        figures.put("java_nop1_int_ns", bestNanosPerCall(n -> {
            for (int i = 0; i < n; i++) {
                nop.call(one);
            }
        }, iterations, rounds));
        figures.put("java_nop1_str_ns", bestNanosPerCall(n -> {
            for (int i = 0; i < n; i++) {
                nop.call("short");
            }
        }, iterations, rounds));
        figures.put("java_to_java_nop0_ns", bestNanosPerCall(n -> {
            for (int i = 0; i < n; i++) {
                javaNop.call();
            }
        }, Math.max(10_000, iterations / 10), rounds));
        if (args.length > 2) {
            Kernel add = ModuleCache.shared().kernel(Path.of(args[2]), "vector_add");
            // the module is vector_add over float32[16] (bench_call_latency.py exports it)
            long[] shape = {16};
            TvmTensor a = TvmTensor.empty(shape, DataType.FLOAT32, Device.cpu());
            TvmTensor b = TvmTensor.empty(shape, DataType.FLOAT32, Device.cpu());
            TvmTensor c = TvmTensor.empty(shape, DataType.FLOAT32, Device.cpu());
            figures.put("java_kernel_ns", bestNanosPerCall(n -> {
                for (int i = 0; i < n; i++) {
                    add.call(a, b, c);
                }
            }, iterations, rounds));
            Kernel.TensorSpec spec = new Kernel.TensorSpec(shape, DataType.FLOAT32);
            Kernel.Workspace workspace = add.newWorkspace(List.of(spec, spec, spec));
            figures.put("java_kernel_workspace_ns", bestNanosPerCall(n -> {
                for (int i = 0; i < n; i++) {
                    workspace.call();
                }
            }, iterations, rounds));
        }
        System.out.println("call_path " + FastCall.describe());
        StringBuilder json = new StringBuilder("{");
        for (Map.Entry<String, Double> e : figures.entrySet()) {
            System.out.printf("%-22s %10.1f ns/call%n", e.getKey(), e.getValue());
            json.append(json.length() > 1 ? ", " : "").append('"').append(e.getKey()).append("\": ")
                    .append(String.format(java.util.Locale.ROOT, "%.2f", e.getValue()));
        }
        System.out.println(json.append('}'));
    }
}
