package org.axe4j.serve;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.axe4j.tvm.cuda.CudaDriver;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A CUDA module (add_one for sm_90a, A declared inout) by its manifest: on a machine with a Hopper GPU it is served
 * through {@code CudaMemory} workspaces and answers A + 1; without a GPU, {@code axe serve} refuses it naming the
 * module and why, and exits 2.
 */
class CudaModuleServiceTest {
    @TempDir
    static Path work;
    static Path module;

    @BeforeAll
    static void export() throws Exception {
        Path root = Path.of("").toAbsolutePath().getParent();
        ProcessBuilder exporting = new ProcessBuilder(root.resolve(".venv/bin/python").toString(),
                root.resolve("examples/src/test/python/export_served.py").toString(), "--cuda", work.toString())
                .redirectErrorStream(true);
        exporting.environment().put("PYTHONPATH", root.resolve("python").toString());
        Process export = exporting.start();
        String output = new String(export.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(export.waitFor(300, TimeUnit.SECONDS));
        assertEquals(0, export.exitValue(), output);
        module = work.resolve("add_one_cuda.so");
    }

    @Test
    void theManifestNamesTheDeviceAndTheInoutArgument() {
        Manifest m = Manifest.read(module);
        assertTrue(m.onCuda());
        assertEquals("sm_90a", m.arch());
        Manifest.Function f = m.functions().get("add_one");
        assertEquals(List.of("A"), f.inputs().stream().map(Manifest.Argument::name).toList());
        assertEquals(List.of("A"), f.outputs().stream().map(Manifest.Argument::name).toList());
        assertEquals(1024, f.inputBytes());
    }

    @Test
    void servedOnTheGpuOrRefusedByNameWithoutOne() throws Exception {
        if (!CudaDriver.probe().present()) {
            RuntimeException e = assertThrows(RuntimeException.class, () -> ModuleService.start(
                    new ModuleService.Config(module, 0, 1, 1, 1000, 1000, null)));
            assertTrue(e.getMessage().contains("it holds CUDA code"), e.getMessage());
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            int code = ServeCommand.run(List.of(module.toString(), "--port", "0"), new PrintStream(
                    new ByteArrayOutputStream()), new PrintStream(err, true, StandardCharsets.UTF_8));
            assertEquals(2, code);
            assertTrue(err.toString(StandardCharsets.UTF_8).contains("axe serve: cannot serve " + module),
                    err.toString(StandardCharsets.UTF_8));
            return;
        }
        ModuleService service = ModuleService.start(new ModuleService.Config(module, 0, 2, 4, 10_000, 5_000, null));
        try {
            ByteBuffer body = ByteBuffer.allocate(1024).order(ByteOrder.LITTLE_ENDIAN);
            for (int i = 0; i < 256; i++) {
                body.putFloat(i * 0.5f - 7);
            }
            HttpResponse<byte[]> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(
                    "http://127.0.0.1:" + service.port() + "/v1/add_one")).header("Content-Type",
                    "application/octet-stream").POST(HttpRequest.BodyPublishers.ofByteArray(body.array())).build(),
                    HttpResponse.BodyHandlers.ofByteArray());
            assertEquals(200, r.statusCode(), new String(r.body(), StandardCharsets.UTF_8));
            ByteBuffer out = ByteBuffer.wrap(r.body()).order(ByteOrder.LITTLE_ENDIAN);
            for (int i = 0; i < 256; i++) {
                assertEquals(i * 0.5f - 7 + 1, out.getFloat(), "A[" + i + "] + 1 on the GPU");
            }
        } finally {
            service.drain();
        }
    }
}
