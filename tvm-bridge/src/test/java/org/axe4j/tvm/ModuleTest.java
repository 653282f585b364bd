package org.axe4j.tvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Kernels compiled by TVM in Python ({@code export_kernels.py}), loaded and run from Java. */
class ModuleTest {
    @TempDir
    static Path kernels;
    static JsonObject built;

    @BeforeAll
    static void export() throws Exception {
        Path script = TestSupport.repoRoot().resolve("tvm-bridge/src/test/python/export_kernels.py");
        TestSupport.Result result = TestSupport.run(List.of(TestSupport.venvPython().toString(), script.toString(),
                kernels.toString(), "1000", "33", "47", "29"), TestSupport.repoRoot(), 300);
        assertEquals(0, result.exitCode(), result.output());
        String[] lines = result.output().strip().split("\n");
        built = JsonParser.parseString(lines[lines.length - 1]).getAsJsonObject();
        Tvm.load();
    }

    private static Path library(String name) {
        Path path = Path.of(built.getAsJsonObject("libraries").get(name).getAsString());
        assertTrue(Files.isRegularFile(path), path.toString());
        return path;
    }

    @Test
    void vectorAdd() {
        int n = built.get("n").getAsInt();
        Random random = new Random(1);
        float[] a = new float[n];
        float[] b = new float[n];
        for (int i = 0; i < n; i++) {
            a[i] = random.nextFloat() * 100 - 50;
            b[i] = random.nextFloat() * 100 - 50;
        }
        long[] shape = {n};
        try (TvmModule module = TvmModule.load(library("vector_add"));
             TvmFunction add = module.function("vector_add");
             TvmTensor ta = TvmTensor.empty(shape, DataType.FLOAT32, Device.cpu()).copyFrom(a);
             TvmTensor tb = TvmTensor.empty(shape, DataType.FLOAT32, Device.cpu()).copyFrom(b);
             TvmTensor tc = TvmTensor.empty(shape, DataType.FLOAT32, Device.cpu())) {
            assertEquals("library", module.kind());
            add.call(ta, tb, tc);
            float[] c = tc.toFloatArray();
            for (int i = 0; i < n; i++) {
                assertEquals(a[i] + b[i], c[i], "C[" + i + "]");
            }
            Timing timing = module.time("vector_add", Device.cpu(), 100, 5, 0, ta, tb, tc);
            System.out.println("vector_add[" + n + "]: " + timing);
            assertEquals(5, timing.seconds().size());
            assertTrue(timing.min() > 0 && timing.min() <= timing.median() && timing.median() <= timing.max());
            assertTrue(timing.mean() < 0.01, timing.toString());
            assertTrue(module.findFunction("no_such_kernel").isEmpty());
        }
    }

    @Test
    void matmul() {
        int m = built.get("m").getAsInt();
        int k = built.get("k").getAsInt();
        int p = built.get("p").getAsInt();
        Random random = new Random(2);
        float[] a = new float[m * k];
        float[] b = new float[k * p];
        for (int i = 0; i < a.length; i++) {
            a[i] = random.nextInt(21) - 10;
        }
        for (int i = 0; i < b.length; i++) {
            b[i] = random.nextInt(21) - 10;
        }
        try (TvmModule module = TvmModule.load(library("matmul"));
             TvmTensor ta = TvmTensor.empty(new long[] {m, k}, DataType.FLOAT32, Device.cpu()).copyFrom(a);
             TvmTensor tb = TvmTensor.empty(new long[] {k, p}, DataType.FLOAT32, Device.cpu()).copyFrom(b);
             TvmTensor tc = TvmTensor.empty(new long[] {m, p}, DataType.FLOAT32, Device.cpu())) {
            module.function("matmul").call(ta, tb, tc);
            float[] c = tc.toFloatArray();
            for (int i = 0; i < m; i++) {
                for (int j = 0; j < p; j++) {
                    float expected = 0;
                    for (int r = 0; r < k; r++) {
                        expected += a[i * k + r] * b[r * p + j];
                    }
                    // small integers: every partial sum is exact in float32
                    assertEquals(expected, c[i * p + j], "C[" + i + "," + j + "]");
                }
            }
            Timing timing = module.time("matmul", Device.cpu(), 20, 3, 0, ta, tb, tc);
            System.out.println("matmul[" + m + "x" + k + "x" + p + "]: " + timing);
            assertEquals(3, timing.seconds().size());
            assertTrue(timing.min() > 0);
        }
    }

    @Test
    void wrongShapesAreTvmErrors() {
        try (TvmModule module = TvmModule.load(library("vector_add"));
             TvmTensor small = TvmTensor.empty(new long[] {3}, DataType.FLOAT32, Device.cpu())) {
            TvmException e = assertThrows(TvmException.class, () -> module.function("vector_add").call(small, small, small));
            assertTrue(e.tvmMessage().contains("1000") || e.tvmMessage().toLowerCase().contains("shape"), e.getMessage());
        }
    }

    @Test
    void wrongPathsAreNamed(@TempDir Path dir) throws Exception {
        Path missing = dir.resolve("missing.so");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> TvmModule.load(missing));
        assertTrue(e.getMessage().contains(missing.toString()), e.getMessage());
        Path garbage = Files.writeString(dir.resolve("garbage.so"), "not a shared object");
        TvmException bad = assertThrows(TvmException.class, () -> TvmModule.load(garbage));
        assertTrue(bad.getMessage().contains(garbage.toString()), bad.getMessage());
    }
}
