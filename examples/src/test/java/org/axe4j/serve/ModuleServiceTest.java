package org.axe4j.serve;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.axe4j.tvm.cuda.DeviceMemory;
import org.axe4j.tvm.cuda.HostMemory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code axe serve} on modules exported in the setup ({@code export_served.py}): answers against references computed
 * here, every kind of bad request, a client hanging up, 64 concurrent clients, backpressure, a deadline, reloads under
 * load, a failed reload, and, in a forked JVM, 10^5 bad requests of every kind (hang-ups mid-body and mid-answer
 * among them) with its memory and open files measured, then SIGTERM draining a request in flight.
 */
class ModuleServiceTest {
    static final int M = 24;
    static final int K = 40;
    static final int P = 16;
    static final int N = 1000;
    /** Bad requests sent before memory is first measured, then in each of the two measured halves (10^5 in all). */
    static final int WARM_UP = 20_000;
    static final int HALF = 50_000;
    /**
     * The most the second half may add over the first. Resident memory: 4 MB, 84 bytes a request, 40 times the drift
     * measured (+0.1 MB; a native leak of 1 KB a request adds 50 MB). Live heap after a full GC and direct buffers:
     * 1 MB, 20 bytes a request (measured: +-0.12 MB and one 16 kB socket buffer). Open files: 8, as many as the
     * clients' kept-alive connections and the JDK's own may differ by (one leaked socket a hang-up adds thousands).
     */
    static final long RSS_BOUND_KB = 4 * 1024;
    static final long HEAP_BOUND = 1 << 20;
    static final long DIRECT_BOUND = 1 << 20;
    static final long FD_BOUND = 8;

    @TempDir
    static Path work;
    static Path v1;
    static Path v2;
    static ModuleService service;
    static HttpClient client;

    @BeforeAll
    static void exportAndStart() throws Exception {
        Path root = Path.of("").toAbsolutePath().getParent();
        ProcessBuilder exporting = new ProcessBuilder(root.resolve(".venv/bin/python").toString(),
                root.resolve("examples/src/test/python/export_served.py").toString(), work.toString())
                .redirectErrorStream(true);
        exporting.environment().put("PYTHONPATH", root.resolve("python").toString());  // this checkout's axe4j
        Process export = exporting.start();
        String output = new String(export.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(export.waitFor(300, TimeUnit.SECONDS));
        assertEquals(0, export.exitValue(), output);
        v1 = work.resolve("kernels.so");
        v2 = work.resolve("kernels_v2.so");
        service = start(v1, 2, 64, null);
        client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    }

    @AfterAll
    static void stop() {
        if (service != null) {
            service.drain();
        }
    }

    static ModuleService start(Path library, int threads, int queue, Supplier<DeviceMemory> memories)
            throws IOException {
        return ModuleService.start(new ModuleService.Config(library, 0, threads, queue, 10_000, 5_000, memories));
    }

    // ---- references -------------------------------------------------------------------------------------------

    static float[] random(Random r, int n) {
        float[] a = new float[n];
        for (int i = 0; i < n; i++) {
            a[i] = r.nextInt(2001) / 1000f - 1f;
        }
        return a;
    }

    static float[] matmul(float[] a, float[] b) {
        float[] c = new float[M * P];
        for (int i = 0; i < M; i++) {
            for (int j = 0; j < P; j++) {
                double s = 0;
                for (int k = 0; k < K; k++) {
                    s += (double) a[i * K + k] * b[k * P + j];
                }
                c[i * P + j] = (float) s;
            }
        }
        return c;
    }

    static JsonArray nested(float[] flat, int rows, int cols) {
        JsonArray out = new JsonArray();
        for (int i = 0; i < rows; i++) {
            JsonArray row = new JsonArray();
            for (int j = 0; j < cols; j++) {
                row.add(flat[i * cols + j]);
            }
            out.add(row);
        }
        return out;
    }

    static JsonArray flat(float[] values) {
        JsonArray out = new JsonArray();
        for (float v : values) {
            out.add(v);
        }
        return out;
    }

    static String inputs(String... nameThenJson) {
        StringBuilder s = new StringBuilder("{\"inputs\": {");
        for (int i = 0; i < nameThenJson.length; i += 2) {
            s.append(i > 0 ? ", " : "").append('"').append(nameThenJson[i]).append("\": ").append(nameThenJson[i + 1]);
        }
        return s.append("}}").toString();
    }

    // ---- HTTP helpers -------------------------------------------------------------------------------------------

    static HttpResponse<String> post(ModuleService s, String path, String type, byte[] body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + s.port() + path))
                .timeout(Duration.ofSeconds(30)).POST(HttpRequest.BodyPublishers.ofByteArray(body));
        if (type != null) {
            b.header("Content-Type", type);
        }
        return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    static HttpResponse<String> postJson(ModuleService s, String function, String json) throws Exception {
        return post(s, "/v1/" + function, "application/json", json.getBytes(StandardCharsets.UTF_8));
    }

    static HttpResponse<String> get(ModuleService s, String path) throws Exception {
        return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + s.port() + path))
                .timeout(Duration.ofSeconds(30)).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    static float[] floats(JsonElement nestedArrays) {
        List<Float> out = new ArrayList<>();
        collect(nestedArrays, out);
        float[] a = new float[out.size()];
        for (int i = 0; i < a.length; i++) {
            a[i] = out.get(i);
        }
        return a;
    }

    private static void collect(JsonElement e, List<Float> out) {
        if (e.isJsonArray()) {
            e.getAsJsonArray().forEach(x -> collect(x, out));
        } else {
            out.add(e.getAsFloat());
        }
    }

    static void assertClose(float[] expected, float[] actual, String what) {
        assertEquals(expected.length, actual.length, what + ": length");
        for (int i = 0; i < expected.length; i++) {
            if (Math.abs(expected[i] - actual[i]) > 1e-4f * (1 + Math.abs(expected[i]))) {
                fail(what + "[" + i + "]: expected " + expected[i] + ", got " + actual[i]);
            }
        }
    }

    static float[] addAnswer(ModuleService s, float[] a, float[] b) throws Exception {
        HttpResponse<String> r = postJson(s, "vector_add", inputs("A", flat(a).toString(), "B", flat(b).toString()));
        assertEquals(200, r.statusCode(), r.body());
        return floats(JsonParser.parseString(r.body()).getAsJsonObject().getAsJsonObject("outputs").get("C"));
    }

    static float[] plus(float[] a, float[] b, float extra) {
        float[] c = new float[a.length];
        for (int i = 0; i < a.length; i++) {
            c[i] = a[i] + b[i] + extra;
        }
        return c;
    }

    /** C = A B through the binary form of {@code /v1/matmul} on {@code port}. */
    static float[] matmulOverBinary(int port, float[] a, float[] b) throws Exception {
        ByteBuffer body = ByteBuffer.allocate(4 * (M * K + K * P)).order(ByteOrder.LITTLE_ENDIAN);
        for (float v : a) {
            body.putFloat(v);
        }
        for (float v : b) {
            body.putFloat(v);
        }
        HttpResponse<byte[]> bin = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                + "/v1/matmul")).header("Content-Type", "application/octet-stream")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body.array())).build(),
                HttpResponse.BodyHandlers.ofByteArray());
        assertEquals(200, bin.statusCode(), new String(bin.body(), StandardCharsets.UTF_8));
        ByteBuffer out = ByteBuffer.wrap(bin.body()).order(ByteOrder.LITTLE_ENDIAN);
        float[] c = new float[M * P];
        for (int i = 0; i < c.length; i++) {
            c[i] = out.getFloat();
        }
        return c;
    }

    // ---- answers ------------------------------------------------------------------------------------------------

    @Test
    void jsonAndBinaryAnswersMatchTheReferenceOnCpuAndThroughADeviceWorkspace() throws Exception {
        Random r = new Random(47);
        ModuleService staged = start(v1, 1, 4, HostMemory::new);
        try {
            for (ModuleService s : List.of(service, staged)) {
                float[] a = random(r, M * K);
                float[] b = random(r, K * P);
                float[] c = matmul(a, b);
                HttpResponse<String> json = postJson(s, "matmul", inputs("A", nested(a, M, K).toString(),
                        "B", nested(b, K, P).toString()));
                assertEquals(200, json.statusCode(), json.body());
                JsonElement cJson = JsonParser.parseString(json.body()).getAsJsonObject().getAsJsonObject("outputs")
                        .get("C");
                assertEquals(M, cJson.getAsJsonArray().size());
                assertEquals(P, cJson.getAsJsonArray().get(0).getAsJsonArray().size());
                assertClose(c, floats(cJson), "matmul over JSON");

                ByteBuffer body = ByteBuffer.allocate(4 * (M * K + K * P)).order(ByteOrder.LITTLE_ENDIAN);
                for (float v : a) {
                    body.putFloat(v);
                }
                for (float v : b) {
                    body.putFloat(v);
                }
                HttpResponse<byte[]> bin = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                        + s.port() + "/v1/matmul")).header("Content-Type", "application/octet-stream")
                        .POST(HttpRequest.BodyPublishers.ofByteArray(body.array())).build(),
                        HttpResponse.BodyHandlers.ofByteArray());
                assertEquals(200, bin.statusCode());
                assertEquals("C float32[24, 16]", bin.headers().firstValue("X-Outputs").orElse(""));
                ByteBuffer out = ByteBuffer.wrap(bin.body()).order(ByteOrder.LITTLE_ENDIAN);
                float[] cBin = new float[M * P];
                for (int i = 0; i < cBin.length; i++) {
                    cBin[i] = out.getFloat();
                }
                assertEquals(4 * M * P, bin.body().length);
                assertClose(c, cBin, "matmul over binary");

                float[] x = random(r, N);
                float[] y = random(r, N);
                assertClose(plus(x, y, 0), addAnswer(s, x, y), "vector_add");

                JsonArray ints = new JsonArray();
                for (int i = 0; i < N; i++) {
                    ints.add(i * 7919 - 3_000_000);
                }
                HttpResponse<String> widened = postJson(s, "widen", "{\"inputs\": {\"X\": {\"dtype\": \"int32\", "
                        + "\"data\": " + ints + "}}}");
                assertEquals(200, widened.statusCode(), widened.body());
                JsonArray rows = JsonParser.parseString(widened.body()).getAsJsonObject().getAsJsonObject("outputs")
                        .getAsJsonArray("Y");
                for (int i = 0; i < N; i++) {
                    assertEquals(2.0 * (i * 7919 - 3_000_000), rows.get(i).getAsJsonArray().get(0).getAsDouble());
                    assertEquals(1.0, rows.get(i).getAsJsonArray().get(1).getAsDouble());
                }
            }
        } finally {
            staged.drain();
        }
        JsonObject listed = JsonParser.parseString(get(service, "/v1/functions").body()).getAsJsonObject();
        assertEquals(3, listed.getAsJsonArray("functions").size());
    }

    // ---- bad requests -------------------------------------------------------------------------------------------

    record Bad(String what, String path, String type, String body, int status, String says) {}

    @Test
    void aBackendRunsTheFunctionsBehindTheSameServerAndMetrics() throws Exception {
        // vector_add by a backend that subtracts: the answer is the backend's, not the module's kernel's (A + B)
        List<String> asked = new ArrayList<>();
        Backend subtracting = (function, args) -> {
            asked.add(function + " " + args.size());
            return () -> new Runner() {
                final ByteBuffer[] buffers = args.stream().map(spec -> ByteBuffer.allocateDirect(
                        Math.toIntExact(spec.bytes())).order(ByteOrder.nativeOrder())).toArray(ByteBuffer[]::new);

                @Override
                public ByteBuffer buffer(int index) {   // at position 0 each time, as Runner says
                    return buffers[index].duplicate().order(ByteOrder.nativeOrder());
                }

                @Override
                public void run() {
                    if (function.equals("vector_add")) {
                        for (int i = 0; i < N; i++) {
                            buffers[2].putFloat(4 * i, buffers[0].getFloat(4 * i) - buffers[1].getFloat(4 * i));
                        }
                    }
                }

                @Override
                public void close() {}
            };
        };
        ModuleService s = ModuleService.start(new ModuleService.Config(v1, 0, 1, 4, 10_000, 5_000, null,
                subtracting));
        try {
            Random r = new Random(5);
            float[] a = random(r, N);
            float[] b = random(r, N);
            float[] minus = new float[N];
            for (int i = 0; i < N; i++) {
                minus[i] = a[i] - b[i];
            }
            assertClose(minus, addAnswer(s, a, b), "vector_add by the backend");
            assertClose(minus, addAnswer(s, a, b), "vector_add by the backend, the same runner again");
            assertEquals(List.of("matmul 3", "vector_add 3", "widen 2"), asked.stream().sorted().toList());
            // counted once the exchange is closed, which may be just after the client has its answer
            String counted = "axe_requests_total{function=\"vector_add\",code=\"200\"} 2";  // the two above
            long until = System.nanoTime() + 5_000_000_000L;
            while (!get(s, "/metrics").body().contains(counted) && System.nanoTime() < until) {
                Thread.sleep(10);
            }
            assertTrue(get(s, "/metrics").body().contains(counted), "the backend's requests are counted like the "
                    + "kernels'");
        } finally {
            s.drain();
        }
    }

    @Test
    void everyKindOfBadRequestGetsItsStatusAndAMessageNamingTheProblem() throws Exception {
        String row = flat(new float[K]).toString();
        String goodB = nested(new float[K * P], K, P).toString();
        String aWrongShape = nested(new float[M * (K - 1)], M, K - 1).toString();
        StringBuilder ragged = new StringBuilder("[");
        for (int i = 0; i < M; i++) {
            ragged.append(i > 0 ? "," : "").append(i == 5 ? flat(new float[K + 1]) : row);
        }
        ragged.append(']');
        List<Bad> cases = List.of(
                new Bad("binary too short", "/v1/matmul", "application/octet-stream", "abc", 400,
                        "the body is 3 bytes; matmul takes 6400 bytes: A float32[24, 40] (3840 bytes) then B"),
                new Bad("binary too long", "/v1/matmul", "application/octet-stream", "x".repeat(6401), 413,
                        "the body is 6401 bytes"),
                new Bad("wrong shape", "/v1/matmul", "application/json", inputs("A", aWrongShape, "B", goodB), 400,
                        "argument A: expected shape [24, 40] float32, given shape [24, 39]"),
                new Bad("ragged", "/v1/matmul", "application/json", inputs("A", ragged.toString(), "B", goodB), 400,
                        "argument A: ragged at [5]: expected 40 elements there"),
                new Bad("a string element", "/v1/vector_add", "application/json",
                        inputs("A", "[\"x\"" + ",0".repeat(N - 1) + "]", "B", flat(new float[N]).toString()), 400,
                        "argument A[0] = \"x\" is not a number; the argument is A float32[1000]"),
                new Bad("a fraction for int32", "/v1/widen", "application/json",
                        inputs("X", "[1.5" + ",0".repeat(N - 1) + "]"), 400,
                        "argument X[0] = 1.5 is not a int32 (a whole number)"),
                new Bad("an int32 out of range", "/v1/widen", "application/json",
                        inputs("X", "[0,4294967296" + ",0".repeat(N - 2) + "]"), 400, "argument X[1] = 4294967296"),
                new Bad("declared dtype", "/v1/widen", "application/json",
                        inputs("X", "{\"dtype\": \"float64\", \"data\": [0]}"), 400,
                        "argument X: expected dtype int32, given float64"),
                new Bad("broken JSON", "/v1/matmul", "application/json", "{\"inputs\": {\"A\": [", 400,
                        "the body is not valid JSON"),
                new Bad("no inputs object", "/v1/matmul", "application/json", "[1, 2]", 400,
                        "the body must be {\"inputs\": {\"A\": ..., \"B\": ...}}"),
                new Bad("a missing input", "/v1/matmul", "application/json", inputs("B", goodB), 400,
                        "input A float32[24, 40] is missing"),
                new Bad("an output given as input", "/v1/matmul", "application/json", inputs("C", "[]"), 400,
                        "'C' is not an input of matmul"),
                new Bad("wrong content type", "/v1/matmul", "text/plain", "hello", 415,
                        "Content-Type 'text/plain' is not served"),
                new Bad("no content type", "/v1/matmul", null, "hello", 415, "Content-Type (none) is not served"),
                new Bad("unknown function", "/v1/conv2d", "application/json", "{}", 404,
                        "no function 'conv2d' in module kernels.so; it has"),
                new Bad("unknown endpoint", "/v2/matmul", "application/json", "{}", 404, "no endpoint /v2/matmul"),
                new Bad("JSON too large", "/v1/widen", "application/json", " ".repeat(N * 40 + 5000), 413,
                        "the JSON body is larger than"));
        for (Bad c : cases) {
            HttpResponse<String> r = post(service, c.path(), c.type(), c.body().getBytes(StandardCharsets.UTF_8));
            assertEquals(c.status(), r.statusCode(), c.what() + ": " + r.body());
            String message = JsonParser.parseString(r.body()).getAsJsonObject().get("error").getAsString();
            assertTrue(message.contains(c.says()), c.what() + ": '" + message + "' does not say '" + c.says() + "'");
        }
        HttpResponse<String> method = get(service, "/v1/matmul");
        assertEquals(405, method.statusCode(), method.body());
        HttpRequest badDeadline = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + service.port()
                + "/v1/widen")).header("Content-Type", "application/json").header("X-Deadline-Ms", "soon")
                .POST(HttpRequest.BodyPublishers.ofString("{}")).build();
        HttpResponse<String> deadline = client.send(badDeadline, HttpResponse.BodyHandlers.ofString());
        assertEquals(400, deadline.statusCode());
        assertTrue(deadline.body().contains("X-Deadline-Ms is 'soon'"), deadline.body());
        float[] x = random(new Random(1), N);
        assertClose(plus(x, x, 0), addAnswer(service, x, x), "still serving after the bad requests");
        String metrics = get(service, "/metrics").body();
        for (String kind : List.of("bad_size", "bad_shape", "bad_dtype", "bad_json", "bad_argument",
                "bad_content_type", "unknown_function", "not_found", "method", "bad_header", "too_large")) {
            assertTrue(metrics.contains("axe_errors_total{kind=\"" + kind + "\"}"), kind + " in\n" + metrics);
        }
        assertTrue(metrics.contains("axe_requests_total{function=\"matmul\",code=\"400\"}"), metrics);
    }

    @Test
    void aClientHangingUpMidBodyOrSpeakingGarbageLeavesTheServiceServing() throws Exception {
        long before = service.metrics().errors("client_gone");
        try (Socket s = new Socket("127.0.0.1", service.port())) {
            OutputStream out = s.getOutputStream();
            out.write(("POST /v1/matmul HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n"
                    + "Content-Length: 6400\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(new byte[100]);
            out.flush();
        }
        try (Socket s = new Socket("127.0.0.1", service.port())) {
            s.getOutputStream().write("\u0000\u0001 garbage \r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
            s.shutdownOutput();
            s.getInputStream().readAllBytes();
        }
        long limit = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (service.metrics().errors("client_gone") == before && System.nanoTime() < limit) {
            Thread.sleep(10);
        }
        assertEquals(before + 1, service.metrics().errors("client_gone"), "the hang-up is counted");
        float[] x = random(new Random(2), N);
        assertClose(plus(x, x, 0), addAnswer(service, x, x), "serving after the hang-up");
    }

    /** Reads the head of an answer, line by line up to the blank line, from a raw socket's stream. */
    static String head(InputStream in) throws IOException {
        StringBuilder h = new StringBuilder();
        while (!h.toString().endsWith("\r\n\r\n")) {
            int c = in.read();
            if (c < 0) {
                throw new IOException("closed after '" + h + "'");
            }
            h.append((char) c);
        }
        return h.toString();
    }

    @Test
    void aChunkedBinaryBodyAfter100ContinueIsComputedAndAnOversizedOneIsRefusedBeforeItIsSent() throws Exception {
        Random r = new Random(5);
        float[] a = random(r, N);
        float[] b = random(r, N);
        ByteBuffer body = ByteBuffer.allocate(8 * N).order(ByteOrder.LITTLE_ENDIAN);
        body.asFloatBuffer().put(a).put(b);
        try (Socket s = new Socket("127.0.0.1", service.port())) {
            s.setSoTimeout(30_000);
            OutputStream out = s.getOutputStream();
            InputStream in = s.getInputStream();
            out.write(("POST /v1/vector_add HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n"
                    + "Expect: 100-continue\r\nTransfer-Encoding: chunked\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            assertEquals("HTTP/1.1 100 Continue\r\n\r\n", head(in), "the body is asked for");
            int split = 3000;  // chunks that cut argument A
            out.write((Integer.toHexString(split) + "\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(body.array(), 0, split);
            out.write(("\r\n" + Integer.toHexString(8 * N - split) + ";ext=1\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(body.array(), split, 8 * N - split);
            out.write("\r\n0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            String h = head(in);
            assertTrue(h.startsWith("HTTP/1.1 200 OK\r\n") && h.contains("\r\nContent-Length: " + 4 * N + "\r\n")
                    && h.contains("\r\nX-outputs: C float32[" + N + "]\r\n") && !h.contains("Connection: close"), h);
            float[] c = new float[N];
            ByteBuffer.wrap(in.readNBytes(4 * N)).order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(c);
            assertArrayEquals(plus(a, b, 0), c, "A + B, float32 sums are exact");
            // one byte too many: refused on its head, no 100 Continue, and the connection ends (the body never came)
            out.write(("POST /v1/vector_add HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n"
                    + "Expect: 100-continue\r\nContent-Length: " + (8 * N + 1) + "\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            h = head(in);
            assertTrue(h.startsWith("HTTP/1.1 413 Content Too Large\r\n") && h.contains("Connection: close\r\n"), h);
            String said = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(said.contains("the body is " + (8 * N + 1) + " bytes; vector_add takes " + 8 * N + " bytes"),
                    said);
        }
    }

    // ---- load -----------------------------------------------------------------------------------------------------

    @Test
    void sixtyFourConcurrentClientsAllGetTheirOwnAnswers() throws Exception {
        ExecutorService clients = Executors.newFixedThreadPool(64);
        try {
            List<Future<Integer>> done = new ArrayList<>();
            for (int c = 0; c < 64; c++) {
                int seed = c;
                done.add(clients.submit(() -> {
                    Random r = new Random(seed);
                    for (int i = 0; i < 4; i++) {
                        float[] a = random(r, N);
                        float[] b = random(r, N);
                        assertClose(plus(a, b, 0), addAnswer(service, a, b), "client " + seed);
                    }
                    return 4;
                }));
            }
            int answered = 0;
            for (Future<Integer> f : done) {
                answered += f.get(60, TimeUnit.SECONDS);
            }
            assertEquals(256, answered);
        } finally {
            clients.shutdownNow();
        }
    }

    /** Sends the head and half the body of a matmul request, leaving the worker reading it. */
    static Socket halfSent(ModuleService s, String extraHeader) throws IOException {
        Socket socket = new Socket("127.0.0.1", s.port());
        socket.setSoTimeout(30_000);
        socket.getOutputStream().write(("POST /v1/matmul HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream"
                + "\r\nContent-Length: 6400\r\nConnection: close\r\n" + extraHeader + "\r\n")
                .getBytes(StandardCharsets.US_ASCII));
        socket.getOutputStream().write(new byte[3200]);
        socket.getOutputStream().flush();
        return socket;
    }

    /** Sends the rest of the body; the whole answer (the request asked to close the connection after it). */
    static String finish(Socket socket) throws IOException {
        socket.getOutputStream().write(new byte[3200]);
        socket.getOutputStream().flush();
        return new String(socket.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
    }

    @Test
    void aFullQueueAnswers429AndAnExpiredDeadlineAnswers504() throws Exception {
        ModuleService one = start(v1, 1, 0, null);
        try (Socket busy = halfSent(one, "")) {
            Thread.sleep(100);  // the only worker now reads the slow body
            HttpResponse<String> refused = postJson(one, "vector_add", "{}");
            assertEquals(429, refused.statusCode(), refused.body());
            assertTrue(refused.body().contains("queue full: 1 requests in flight"), refused.body());
            assertEquals("1", refused.headers().firstValue("Retry-After").orElse(""));
            assertEquals(200, get(one, "/healthz").statusCode(), "health is answered while the queue is full");
            assertTrue(finish(busy).startsWith("HTTP/1.1 200 OK"), "the slow request is answered");
        } finally {
            one.drain();
        }
        try (Socket late = halfSent(service, "X-Deadline-Ms: 50\r\n")) {
            Thread.sleep(150);
            String answer = finish(late);
            assertTrue(answer.startsWith("HTTP/1.1 504 Gateway Timeout"), answer);
            assertTrue(answer.contains("deadline of 50 ms exceeded"), answer);
        }
    }

    @Test
    void reloadsUnderLoadDropNoRequestAndSwapTheVersion() throws Exception {
        ModuleService s = start(v1, 2, 64, null);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger answered = new AtomicInteger();
        AtomicInteger fromV2 = new AtomicInteger();
        ExecutorService clients = Executors.newFixedThreadPool(6);
        try {
            List<Future<Void>> loops = new ArrayList<>();
            for (int c = 0; c < 6; c++) {
                int seed = 100 + c;
                loops.add(clients.submit((Callable<Void>) () -> {
                    Random r = new Random(seed);
                    float[] a = random(r, N);
                    float[] b = random(r, N);
                    float[] one = plus(a, b, 0);
                    float[] two = plus(a, b, 1);
                    for (int i = 0; i < 2000 && !stop.get(); i++) {
                        float[] got = addAnswer(s, a, b);   // asserts 200
                        boolean isTwo = Math.abs(got[0] - two[0]) < 1e-4f;
                        assertClose(isTwo ? two : one, got, "an answer during reloads");
                        answered.incrementAndGet();
                        if (isTwo) {
                            fromV2.incrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            for (int i = 0; i < 6; i++) {
                Thread.sleep(120);
                Path next = i % 2 == 0 ? v2 : v1;
                HttpResponse<String> reload = post(s, "/admin/reload?path=" + next, null, new byte[0]);
                assertEquals(200, reload.statusCode(), reload.body());
                assertEquals(i + 2, s.generation());
            }
            Thread.sleep(120);
            stop.set(true);
            for (Future<Void> f : loops) {
                f.get(60, TimeUnit.SECONDS);
            }
            assertTrue(answered.get() > 50 && fromV2.get() > 0 && fromV2.get() < answered.get(),
                    answered + " answered, " + fromV2 + " by version 2");
            HttpResponse<String> failed = post(s, "/admin/reload?path=" + work.resolve("missing.so"), null,
                    new byte[0]);
            assertEquals(422, failed.statusCode());
            assertTrue(failed.body().contains("missing.so.manifest.json"), failed.body());
            Path broken = work.resolve("broken.so");
            Files.writeString(broken, "not a library");
            Files.copy(Manifest.of(v1), Manifest.of(broken));
            failed = post(s, "/admin/reload?path=" + broken, null, new byte[0]);
            assertEquals(422, failed.statusCode());
            assertTrue(failed.body().contains("broken.so failed to load; still serving generation 7"), failed.body());
            Path renamed = work.resolve("renamed.so");
            Files.copy(v1, renamed);
            Files.writeString(Manifest.of(renamed), Files.readString(Manifest.of(v1)).replace("\"matmul\"",
                    "\"conv\""));
            failed = post(s, "/admin/reload?path=" + renamed, null, new byte[0]);
            assertEquals(422, failed.statusCode());
            assertTrue(failed.body().contains("does not match its manifest") && failed.body().contains("conv"),
                    failed.body());
            Path malformed = work.resolve("malformed.so");
            Files.copy(v1, malformed);
            Files.writeString(Manifest.of(malformed), "{\"format\": 1, \"device\": {\"kind\": \"cpu\"}}");
            failed = post(s, "/admin/reload?path=" + malformed, null, new byte[0]);
            assertEquals(422, failed.statusCode());
            assertTrue(failed.body().contains("malformed.so.manifest.json: field 'functions' is missing"),
                    failed.body());
            float[] x = random(new Random(3), N);
            assertClose(plus(x, x, 0), addAnswer(s, x, x), "version 1 (the last reloaded) still serves");
            try (var versions = Files.list(s.scratch())) {
                assertEquals(List.of("v7"), versions.map(v -> v.getFileName().toString()).toList(),
                        "the replaced versions and the failed loads are closed and their copies deleted");
            }
            String metrics = get(s, "/metrics").body();
            assertTrue(metrics.contains("axe_reloads_total{result=\"ok\"} 6"), metrics);
            assertTrue(metrics.contains("axe_reloads_total{result=\"failed\"} 4"), metrics);
            assertTrue(metrics.contains("axe_module_generation 7"), metrics);
            System.out.println("[serve] reloads under load: " + answered + " answers, " + fromV2
                    + " from version 2, none failed");
        } finally {
            stop.set(true);
            clients.shutdownNow();
            s.drain();
        }
    }

    // ---- a forked `axe serve`: leaks, then SIGTERM ---------------------------------------------------------------

    static long rssKb(long pid) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
        }
        throw new IllegalStateException("no VmRSS for " + pid);
    }

    /** What the forked service holds, read right after a full GC (jcmd GC.run): resident memory and its /metrics. */
    /** What the forked service holds, right after a full GC: resident memory, open files and its /metrics. */
    record Held(long rssKb, long fds, long heapBytes, long directBuffers, long directBytes, long runners,
                long clientGone) {
        String show() {
            return String.format(Locale.ROOT, "RSS %,d kB, %d open files, live heap %,d kB, %d direct buffers (%,d kB),"
                    + " %d runners", rssKb, fds, heapBytes / 1024, directBuffers, directBytes / 1024, runners);
        }
    }

    static Held held(long pid, int port) throws Exception {
        Process gc = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
                Long.toString(pid), "GC.run").redirectErrorStream(true).start();
        String said = new String(gc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(gc.waitFor(30, TimeUnit.SECONDS) && gc.exitValue() == 0, said);
        String metrics = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics"))
                .GET().build(), HttpResponse.BodyHandlers.ofString()).body();
        long fds;
        try (var open = Files.list(Path.of("/proc/" + pid + "/fd"))) {
            fds = open.count();
        }
        return new Held(rssKb(pid), fds, metric(metrics, "jvm_heap_used_bytes"), metric(metrics, "jvm_direct_buffers"),
                metric(metrics, "jvm_direct_buffer_bytes"), metric(metrics, "axe_runners"),
                metric(metrics, "axe_errors_total{kind=\"client_gone\"}"));
    }

    /**
     * 10^5 bad requests of every kind ({@link BadRequests}) after a warm-up, in two halves: what the second half
     * adds to resident memory, the live heap, direct buffers and open files stays under the bounds above, no runner
     * is made beyond one per worker and function, and every hang-up mid-body is seen.
     */
    static void assertFlatOverBadRequests(long pid, int port, int functions) throws Exception {
        BadRequests.send(port, WARM_UP, 2);  // classes, C1, buffers, malloc arenas
        Held warm = held(pid, port);
        long t0 = System.nanoTime();
        BadRequests.send(port, HALF, 2);
        Held half = held(pid, port);
        BadRequests.send(port, HALF, 2);
        Held whole = held(pid, port);
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        long gone = whole.clientGone - warm.clientGone;
        // each half sends the kinds from the first again: counted per half (HALF is not a multiple of the kinds)
        long midBody = 2L * BadRequests.count(HALF, BadRequests.Ending.HANG_UP_MID_BODY);
        long midAnswer = 2L * BadRequests.count(HALF, BadRequests.Ending.HANG_UP_MID_ANSWER);
        System.out.println("[serve] " + 2 * HALF + " bad requests of " + BadRequests.kinds().size() + " kinds in "
                + millis + " ms; after the warm-up: " + warm.show() + "; after half: " + half.show() + "; after all: "
                + whole.show() + "; hang-ups seen " + gone + " (" + midBody + " mid-body, " + midAnswer
                + " mid-answer)");
        String over = " over the second " + HALF + " bad requests (" + half.show() + " -> " + whole.show() + ")";
        assertTrue(whole.rssKb - half.rssKb < RSS_BOUND_KB, "resident memory grew" + over);
        assertTrue(whole.heapBytes - half.heapBytes < HEAP_BOUND, "the live heap grew" + over);
        assertTrue(whole.directBytes - half.directBytes < DIRECT_BOUND, "direct buffers grew" + over);
        assertTrue(whole.fds - half.fds < FD_BOUND, "open files grew" + over);
        assertTrue(whole.runners <= functions, "runners made beyond one per function and worker: " + whole.show());
        // A hang-up mid-answer is seen only when the answer had not yet all gone into the sockets' buffers (the answer
        // is ~20 kB, written at once: most often it has); one mid-body always is.
        assertTrue(gone >= midBody && gone <= midBody + midAnswer, "hang-ups seen: " + gone + " for " + midBody
                + " mid-body and " + midAnswer + " mid-answer");
    }

    static long metric(String metrics, String series) {
        for (String line : metrics.split("\n")) {
            if (line.startsWith(series + " ")) {
                return (long) Double.parseDouble(line.substring(series.length() + 1));
            }
        }
        return 0;
    }

    @Test
    void aForkedServiceHoldsItsMemoryOverBadRequestsAndDrainsOnSigterm() throws Exception {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        // A fixed, pre-touched heap, C1 only and two malloc arenas: resident memory then moves only by what is not
        // heap and not the JIT's (C2's compile arenas alone add ~15 MB over the first 10^4 requests; measured with
        // -XX:NativeMemoryTracking), so a native leak of the service shows.
        ProcessBuilder pb = new ProcessBuilder(java.toString(), "-Xms96m", "-Xmx96m", "-XX:+AlwaysPreTouch",
                "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp",
                System.getProperty("java.class.path"), "org.axe4j.cli.Main", "serve", v1.toString(), "--port", "0",
                "--threads", "1", "--queue", "8").redirectErrorStream(true);
        pb.environment().put("MALLOC_ARENA_MAX", "2");
        Process p = pb.start();
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            int port = -1;
            StringBuilder log = new StringBuilder();
            for (String line; port < 0 && (line = out.readLine()) != null; ) {
                log.append(line).append('\n');
                if (line.startsWith("listening on ")) {
                    port = Integer.parseInt(line.split(" ")[2]);
                }
            }
            assertTrue(port > 0, log.toString());
            // matmul's rows are a parallel loop: this process runs it on axe4j's pool (docs/serving.md, "Threads")
            assertTrue(log.toString().contains("parallel loops: axe4j's pool ("), log.toString());
            Random r = new Random(11);
            for (int call = 0; call < 300; call++) {
                float[] a = random(r, M * K);
                float[] b = random(r, K * P);
                assertClose(matmul(a, b), matmulOverBinary(port, a, b), "matmul over binary, call " + call);
            }
            assertFlatOverBadRequests(p.pid(), port, 3);  // one worker (--threads 1), three functions

            Socket inFlight = new Socket("127.0.0.1", port);
            inFlight.setSoTimeout(30_000);
            inFlight.getOutputStream().write(("POST /v1/matmul HTTP/1.1\r\nHost: x\r\nContent-Type: application/"
                    + "octet-stream\r\nContent-Length: 6400\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            inFlight.getOutputStream().write(new byte[3200]);
            inFlight.getOutputStream().flush();
            Thread.sleep(100);
            // SIGTERM from outside (Process.destroy would also close our end of the service's output)
            assertEquals(0, new ProcessBuilder("kill", "-TERM", Long.toString(p.pid())).start().waitFor());
            assertEquals("draining", out.readLine());
            HttpResponse<String> ready = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                    + "/readyz")).GET().build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(503, ready.statusCode(), ready.body());
            assertTrue(ready.body().contains("draining"), ready.body());
            assertTrue(p.isAlive(), "the service waits for the request in flight");
            inFlight.getOutputStream().write(new byte[3200]);
            inFlight.getOutputStream().flush();
            InputStream answer = inFlight.getInputStream();
            String head = new BufferedReader(new InputStreamReader(answer, StandardCharsets.ISO_8859_1)).readLine();
            assertEquals("HTTP/1.1 200 OK", head, "the request in flight is answered");
            inFlight.close();
            assertTrue(p.waitFor(20, TimeUnit.SECONDS), "the service stops after draining");
            assertEquals(0, p.exitValue());
            assertEquals("stopped", out.readLine());
        } finally {
            p.destroyForcibly();
        }
    }
}
