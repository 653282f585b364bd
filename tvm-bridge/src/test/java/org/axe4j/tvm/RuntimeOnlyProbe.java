package org.axe4j.tvm;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Runs an exported {@code vector_add} module in a JVM given only TVM's runtime libraries, with a
 * forced garbage collection before every call, and checks every element. Prints
 * {@code runtime-only ok <calls>} and the loaded libraries; exits non-zero on a wrong element.
 *
 * <p>Usage: {@code RuntimeOnlyProbe MODULE.so N CALLS}.
 */
public final class RuntimeOnlyProbe {
    private RuntimeOnlyProbe() {}

    public static void main(String[] args) throws Exception {
        Path module = Path.of(args[0]);
        int n = Integer.parseInt(args[1]);
        int calls = Integer.parseInt(args[2]);
        System.out.println(TvmLibraries.load().describe());
        float[] a = new float[n];
        float[] b = new float[n];
        for (int i = 0; i < n; i++) {
            a[i] = i * 0.5f;
            b[i] = 1000 - i;
        }
        for (int call = 0; call < calls; call++) {
            // every wrapper from the last round is garbage now: collect it, and anything JNA holds weakly
            System.gc();
            System.runFinalization();
            Thread.sleep(5);
            try (TvmModule loaded = TvmModule.load(module);
                 TvmTensor ta = TvmTensor.empty(new long[] {n}, DataType.FLOAT32, Device.cpu()).copyFrom(a);
                 TvmTensor tb = TvmTensor.empty(new long[] {n}, DataType.FLOAT32, Device.cpu()).copyFrom(b);
                 TvmTensor tc = TvmTensor.empty(new long[] {n}, DataType.FLOAT32, Device.cpu())) {
                loaded.function("vector_add").call(ta, tb, tc);
                float[] c = tc.toFloatArray();
                for (int i = 0; i < n; i++) {
                    if (c[i] != a[i] + b[i]) {
                        System.out.println("wrong C[" + i + "] = " + c[i] + " in call " + call);
                        System.exit(3);
                    }
                }
            }
        }
        String maps = Files.readString(Path.of("/proc/self/maps"));
        System.out.println("compiler loaded: " + TvmLibraries.isCompilerLoaded() + ", mapped: "
                + maps.contains("libtvm_compiler.so"));
        System.out.println("runtime mapped after GC: " + maps.contains("libtvm_runtime.so"));
        System.out.println("tirx global present: " + Tvm.findFunction("tirx.Buffer").isPresent());
        System.out.println("runtime-only ok " + calls);
    }
}
