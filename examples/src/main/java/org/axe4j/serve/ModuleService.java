package org.axe4j.serve;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.axe4j.tvm.ParallelPool;
import org.axe4j.tvm.cuda.DeviceMemory;

/**
 * Serves every function of a module {@code axe4j.export_library} wrote, by its manifest, over HTTP/1.1 on 127.0.0.1
 * ({@link Http1Server}: each request runs on its connection's thread; docs/serving.md).
 *
 * <pre>
 * POST /v1/FUNCTION      application/json {"inputs": {"A": [[...]], ...}} -> {"outputs": {"C": [[...]], ...}}
 *                        application/octet-stream: the inputs' bytes in manifest order -> the outputs' bytes
 * GET  /v1/functions     the manifest: each function's arguments (name, shape, dtype, role)
 * GET  /healthz          200 while the process serves; GET /readyz 200 while it takes work (503 draining)
 * GET  /metrics          Prometheus text: requests, errors, latency histogram, queue depth, kernel time
 * POST /admin/reload     loads the module again (or ?path=NEW.so), swaps it in; requests on the old one finish
 * </pre>
 */
public final class ModuleService {
    /**
     * What the service serves and how; {@code memories} runs CPU kernels through device workspaces (tests);
     * {@code backend} runs the functions instead of the module's kernels (null: the kernels).
     */
    public record Config(Path library, int port, int threads, int queue, long deadlineMs, long drainMs,
                         Supplier<DeviceMemory> memories, Backend backend) {
        public Config(Path library, int port, int threads, int queue, long deadlineMs, long drainMs,
                      Supplier<DeviceMemory> memories) {
            this(library, port, threads, queue, deadlineMs, drainMs, memories, null);
        }
    }

    static final int JSON_BYTES_PER_ELEMENT = 40;
    /** A kept-alive connection idle this long is closed; a client silent this long inside a request is cut off. */
    static final int IDLE_TIMEOUT_MS = 30_000;
    static final int READ_TIMEOUT_MS = 30_000;
    /** Open connections (a thread and 48 KiB of buffers each) past which a new one is answered 503. */
    static final int MAX_CONNECTIONS = 1024;
    /** The exchange attribute naming the manifest's function a request is for, once known (a metrics label). */
    private static final String FUNCTION = "axe.function";

    private final Config config;
    private final Path scratch;
    private final Metrics metrics = new Metrics();
    private final Admission admission;
    private final CpuShare cpuShare;
    private final Http1Server server;
    private final AtomicReference<LoadedModule> current = new AtomicReference<>();
    private final CountDownLatch stopped = new CountDownLatch(1);
    private volatile Path source;
    private volatile long drainStart;
    private volatile boolean draining;
    private int generation;

    private ModuleService(Config config) throws IOException {
        this.config = config;
        scratch = Files.createTempDirectory("axe-serve-");
        source = config.library().toAbsolutePath().normalize();
        cpuShare = CpuShare.forWorkers(config.threads());   // before the module: its pool adopts the module's loops
        try {
            generation = 1;
            current.set(LoadedModule.load(source, generation, scratch, config.memories(), config.backend()));
        } catch (RuntimeException e) {
            deleteScratch();
            throw e;
        }
        admission = new Admission(config.threads(), config.queue());
        server = new Http1Server(new InetSocketAddress("127.0.0.1", config.port()),
                exchange -> admission.handle(exchange, this::handle), this::refused, IDLE_TIMEOUT_MS, READ_TIMEOUT_MS,
                MAX_CONNECTIONS);
    }

    /**
     * Loads the module and starts serving; returns once the port is open.
     *
     * @throws IllegalArgumentException (or a TVM/CUDA exception) naming why the module cannot be served
     */
    public static ModuleService start(Config config) throws IOException {
        ModuleService service = new ModuleService(config);
        service.server.start();
        return service;
    }

    /** Threads of TVM's CPU pool each worker's kernels run on ({@link CpuShare}). */
    public int poolThreadsEach() {
        return cpuShare.threadsEach();
    }

    public int port() {
        return server.port();
    }

    /** Where the current module's kernels run their parallel loops, and the pool's size, in words. */
    public String parallelLoops() {
        ParallelPool.Adoption loops = current.get().parallelLoops;
        if (loops != null && loops.adopted()) {
            return "axe4j's pool (" + cpuShare.parallelPool() + ")";
        }
        if (loops != null && !loops.hasParallelLoops()) {
            return "none in this module";
        }
        return "TVM's pool" + (loops != null ? ": " + loops.reason() : "") + " (" + poolThreadsEach()
                + " thread(s) a worker)";
    }

    public Manifest manifest() {
        return current.get().manifest;
    }

    /** Blocks until {@link #drain} has finished. */
    public void awaitStopped() throws InterruptedException {
        stopped.await();
    }

    /**
     * Stops taking work (readyz and new work answer 503), lets every request admitted before finish (up to the
     * drain limit), then closes the port and the module. Idempotent; returns once stopped.
     */
    public void drain() {
        drain(() -> { });
    }

    /**
     * As {@link #drain()}; {@code announce} runs once the service refuses new work (readiness answers 503), before the
     * wait for the requests in flight: what it tells the world is then already true.
     */
    public void drain(Runnable announce) {
        synchronized (this) {
            if (draining) {
                return;
            }
            drainStart = System.nanoTime();
            draining = true;
        }
        announce.run();
        long limit = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(config.drainMs());
        try {
            while (admission.inFlight() > 0 && System.nanoTime() < limit) {
                Thread.sleep(2);
            }
            server.stop();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            current.get().retire();
            deleteScratch();
            stopped.countDown();
        }
    }

    void handle(HttpExchange exchange) throws IOException {
        long start = Admission.arrived();
        String function = "(none)";
        int status;
        try {
            try {
                function = route(exchange);
                status = 200;
            } catch (HttpError e) {
                status = e.status;
                function = exchange.getAttribute(FUNCTION) instanceof String known ? known : function;
                metrics.error(e.kind);
                sendError(exchange, e);
            } catch (ChunkedBody.MalformedBody e) {
                // the body's framing is lost: answered, then the server closes the connection
                status = 400;
                function = exchange.getAttribute(FUNCTION) instanceof String known ? known : function;
                metrics.error("bad_request");
                sendError(exchange, new HttpError(400, "bad_request", e.getMessage()));
            } catch (RuntimeException | Error e) {
                status = 500;
                metrics.error("internal");
                sendError(exchange, new HttpError(500, "internal", "internal error: " + e));
            }
            // closed here, not by exchange.close(), which swallows a failure to drain or flush
            exchange.getRequestBody().close();
            exchange.getResponseBody().close();
        } catch (IOException e) {
            // The client went away mid-request or mid-answer (or stopped sending for the read timeout). Rethrown: the
            // server then closes the connection.
            metrics.error("client_gone");
            metrics.request(function, 499, System.nanoTime() - start);
            exchange.close();
            throw e;
        }
        exchange.close();
        metrics.request(function, status, System.nanoTime() - start);
    }

    /** Counts a request the server answered itself, before a handler saw it (a bad head, too many connections). */
    private void refused(HttpError e) {
        metrics.error(e.kind);
        metrics.request("(none)", e.status, 0);
    }

    /** Answers the request; returns the function it ran, or "(none)". */
    private String route(HttpExchange exchange) throws IOException, HttpError {
        String path = exchange.getRequestURI().getPath();
        String method = exchange.getRequestMethod();
        switch (path) {
            case "/healthz" -> {
                requireMethod(method, "GET");
                send(exchange, 200, "text/plain", "ok\n");
                return "(none)";
            }
            case "/readyz" -> {
                requireMethod(method, "GET");
                if (draining) {
                    throw new HttpError(503, "draining", "draining: finishing the requests in flight, taking no more");
                }
                send(exchange, 200, "text/plain", "ready: generation " + current.get().generation + "\n");
                return "(none)";
            }
            case "/metrics" -> {
                requireMethod(method, "GET");
                send(exchange, 200, "text/plain; version=0.0.4", metrics.render(admission::queued,
                        admission::inFlight, current.get().generation, current.get().runnersMade()));
                return "(none)";
            }
            case "/v1/functions" -> {
                requireMethod(method, "GET");
                send(exchange, 200, "application/json", Files.readString(Manifest.of(source)));
                return "(none)";
            }
            case "/admin/reload" -> {
                requireMethod(method, "POST");
                requireAdmitted();
                reload(exchange);
                return "(none)";
            }
            default -> {
                if (!path.startsWith("/v1/")) {
                    throw new HttpError(404, "not_found", "no endpoint " + Tensors.clip(path) + " (POST /v1/FUNCTION, "
                            + "GET /v1/functions, /healthz, /readyz, /metrics, POST /admin/reload)");
                }
                requireMethod(method, "POST");
                requireAdmitted();
                return compute(exchange, path.substring(4));
            }
        }
    }

    private void requireAdmitted() throws HttpError {
        if (draining && Admission.arrived() - drainStart >= 0) {
            throw new HttpError(503, "draining", "draining: this service takes no new work");
        }
        if (!Admission.admitted()) {
            throw new HttpError(429, "overloaded", "queue full: " + admission.capacity + " requests in flight ("
                    + admission.threads + " running, " + (admission.capacity - admission.threads)
                    + " queued); retry later");
        }
    }

    private static void requireMethod(String method, String allowed) throws HttpError {
        if (!method.equals(allowed)) {
            throw new HttpError(405, "method", "method " + Tensors.clip(method) + " not allowed here; use " + allowed);
        }
    }

    private LoadedModule acquire() {
        while (true) {
            LoadedModule m = current.get();
            if (m.tryAcquire()) {
                return m;
            }
        }
    }

    private String compute(HttpExchange exchange, String name) throws IOException, HttpError {
        LoadedModule module = acquire();
        try {
            Manifest.Function f = module.manifest.functions().get(name);
            if (f == null) {
                throw new HttpError(404, "unknown_function", "no function '" + Tensors.clip(name) + "' in module "
                        + module.manifest.library().getFileName() + "; it has " + module.manifest.functions().keySet());
            }
            exchange.setAttribute(FUNCTION, name);
            long deadlineMs = deadlineMs(exchange);
            String type = mediaType(exchange);
            boolean binary = type.equals("application/octet-stream");
            byte[] json = null;
            if (type.equals("application/json")) {
                json = readJson(exchange, f);  // before taking a worker: a slow client holds none
            } else if (!binary) {
                throw new HttpError(415, "bad_content_type", "Content-Type " + (type.isEmpty() ? "(none)" : "'"
                        + Tensors.clip(type) + "'") + " is not served: send application/json {\"inputs\": {...}} or "
                        + "application/octet-stream (" + describeBinary(f) + ")");
            }
            long waitMs = deadlineMs - elapsedMs();
            try {
                if (waitMs <= 0 || !admission.workers.tryAcquire(waitMs, TimeUnit.MILLISECONDS)) {
                    throw new HttpError(504, "deadline", "deadline of " + deadlineMs + " ms exceeded: " + elapsedMs()
                            + " ms passed waiting for one of " + admission.threads + " workers");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new HttpError(503, "draining", "stopping: the request was not run");
            }
            try {
                Runner runner = module.take(name);
                try {
                    if (binary) {
                        readBinary(exchange, f, runner);
                    } else if (!JsonInputs.read(json, json.length, f, runner)) {
                        fillJson(parseJson(json, f), f, runner);  // other forms, and the messages for bad ones
                    }
                    if (elapsedMs() >= deadlineMs) {
                        throw new HttpError(504, "deadline", "deadline of " + deadlineMs + " ms exceeded: "
                                + elapsedMs() + " ms passed in the queue and reading the body, before " + name
                                + " could start");
                    }
                    if (module.usesTvmPool()) {
                        cpuShare.enter();
                    }
                    long t0 = System.nanoTime();
                    runner.run();
                    metrics.kernel(name, System.nanoTime() - t0);
                    if (binary) {
                        writeBinary(exchange, f, runner);
                    } else {
                        writeJson(exchange, f, runner);
                    }
                } finally {
                    module.give(name, runner);
                }
            } finally {
                admission.workers.release();
            }
            return name;
        } finally {
            module.release();
        }
    }

    private static long elapsedMs() {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - Admission.arrived());
    }

    private long deadlineMs(HttpExchange exchange) throws HttpError {
        String header = exchange.getRequestHeaders().getFirst("X-Deadline-Ms");
        if (header == null) {
            return config.deadlineMs();
        }
        try {
            long asked = Long.parseLong(header.trim());
            if (asked <= 0) {
                throw new NumberFormatException();
            }
            return Math.min(asked, config.deadlineMs());
        } catch (NumberFormatException e) {
            throw new HttpError(400, "bad_header", "X-Deadline-Ms is '" + Tensors.clip(header)
                    + "'; give a positive whole number of milliseconds");
        }
    }

    private static String mediaType(HttpExchange exchange) {
        String type = exchange.getRequestHeaders().getFirst("Content-Type");
        return type == null ? "" : type.split(";")[0].trim().toLowerCase(Locale.ROOT);
    }

    static String describeBinary(Manifest.Function f) {
        StringBuilder s = new StringBuilder(f.inputBytes() + " bytes: ");
        String sep = "";
        for (Manifest.Argument a : f.inputs()) {
            s.append(sep).append(a.describe()).append(" (").append(a.bytes()).append(" bytes)");
            sep = " then ";
        }
        return s.append(", little-endian").toString();
    }

    private void readBinary(HttpExchange exchange, Manifest.Function f, Runner runner) throws IOException, HttpError {
        long needed = f.inputBytes();
        String declared = exchange.getRequestHeaders().getFirst("Content-Length");
        if (declared != null && !declared.trim().equals(Long.toString(needed))) {
            boolean larger = declared.trim().matches("[0-9]{1,18}") && Long.parseLong(declared.trim()) > needed;
            throw new HttpError(larger ? 413 : 400, "bad_size", "the body is " + Tensors.clip(declared.trim())
                    + " bytes; " + f.name() + " takes " + describeBinary(f));
        }
        InputStream in = exchange.getRequestBody();
        byte[] chunk = new byte[16384];
        long total = 0;
        for (Manifest.Argument a : f.inputs()) {
            ByteBuffer target = runner.buffer(a.index());
            while (target.hasRemaining()) {
                int got = in.read(chunk, 0, Math.min(chunk.length, target.remaining()));
                if (got < 0) {
                    throw new HttpError(400, "bad_size", "the body ended after " + total + " bytes, in argument "
                            + a.name() + "; " + f.name() + " takes " + describeBinary(f));
                }
                target.put(chunk, 0, got);
                total += got;
            }
        }
        if (in.read() >= 0) {
            throw new HttpError(413, "bad_size", "the body is longer than " + needed + " bytes; " + f.name() + " takes "
                    + describeBinary(f));
        }
    }

    private static byte[] readJson(HttpExchange exchange, Manifest.Function f) throws IOException, HttpError {
        long elements = 0;
        for (Manifest.Argument a : f.inputs()) {
            elements += a.bytes() / a.dtype().bytes();
        }
        long cap = elements * JSON_BYTES_PER_ELEMENT + 4096;
        byte[] body = exchange.getRequestBody().readNBytes((int) Math.min(Integer.MAX_VALUE - 8, cap + 1));
        if (body.length > cap) {
            throw new HttpError(413, "too_large", "the JSON body is larger than " + cap + " bytes, more than "
                    + f.name() + "'s " + elements + " input numbers need");
        }
        return body;
    }

    /** The body as Gson's tree: the inputs object, checked to hold every input and nothing else. */
    static JsonObject parseJson(byte[] body, Manifest.Function f) throws HttpError {
        JsonElement parsed;
        try {
            parsed = JsonParser.parseString(new String(body, StandardCharsets.UTF_8));
        } catch (JsonParseException e) {
            throw new HttpError(400, "bad_json", "the body is not valid JSON: " + Tensors.clip(String.valueOf(
                    e.getMessage())));
        }
        JsonElement inputs = parsed.isJsonObject() ? parsed.getAsJsonObject().get("inputs") : null;
        if (inputs == null || !inputs.isJsonObject()) {
            throw new HttpError(400, "bad_json", "the body must be {\"inputs\": {" + String.join(", ",
                    f.inputs().stream().map(a -> "\"" + a.name() + "\": " + "...").toList()) + "}}");
        }
        JsonObject given = inputs.getAsJsonObject();
        for (String key : given.keySet()) {
            if (f.inputs().stream().noneMatch(a -> a.name().equals(key))) {
                throw new HttpError(400, "bad_argument", "'" + Tensors.clip(key) + "' is not an input of " + f.name()
                        + "; its inputs are " + f.inputs().stream().map(Manifest.Argument::describe).toList());
            }
        }
        for (Manifest.Argument a : f.inputs()) {
            if (!given.has(a.name())) {
                throw new HttpError(400, "bad_argument", "input " + a.describe() + " is missing");
            }
        }
        return given;
    }

    static void fillJson(JsonObject given, Manifest.Function f, Runner runner) throws HttpError {
        for (Manifest.Argument a : f.inputs()) {
            Tensors.fill(a, given.get(a.name()), runner.buffer(a.index()));
        }
    }

    private static void writeBinary(HttpExchange exchange, Manifest.Function f, Runner runner) throws IOException {
        exchange.getResponseHeaders().set("Content-Type", "application/octet-stream");
        exchange.getResponseHeaders().set("X-Outputs", String.join("; ", f.outputs().stream()
                .map(Manifest.Argument::describe).toList()));
        exchange.sendResponseHeaders(200, f.outputBytes());
        OutputStream out = exchange.getResponseBody();
        byte[] chunk = new byte[16384];
        for (Manifest.Argument a : f.outputs()) {
            ByteBuffer source = runner.buffer(a.index());
            while (source.hasRemaining()) {
                int n = Math.min(chunk.length, source.remaining());
                source.get(chunk, 0, n);
                out.write(chunk, 0, n);
            }
        }
        out.flush();
    }

    private static void writeJson(HttpExchange exchange, Manifest.Function f, Runner runner) throws IOException {
        StringBuilder json = new StringBuilder(64 + (int) Math.min(1 << 24, f.outputBytes() * 3));
        json.append("{\"outputs\": {");
        String sep = "";
        for (Manifest.Argument a : f.outputs()) {
            json.append(sep).append('"').append(a.name()).append("\": ");
            Tensors.write(a, runner.buffer(a.index()), json);
            sep = ", ";
        }
        json.append("}}");
        send(exchange, 200, "application/json", json.toString());
    }

    private synchronized void reload(HttpExchange exchange) throws IOException, HttpError {
        exchange.getRequestBody().readNBytes(4096);
        String query = exchange.getRequestURI().getRawQuery();
        Path next = source;
        if (query != null && query.startsWith("path=")) {
            next = Path.of(URLDecoder.decode(query.substring(5), StandardCharsets.UTF_8)).toAbsolutePath().normalize();
        } else if (query != null && !query.isEmpty()) {
            throw new HttpError(400, "bad_argument", "POST /admin/reload takes no query or ?path=MODULE.so");
        }
        LoadedModule loaded;
        try {
            loaded = LoadedModule.load(next, generation + 1, scratch, config.memories(), config.backend());
        } catch (RuntimeException e) {
            metrics.reload(false);
            throw new HttpError(422, "module_load", "module " + next + " failed to load; still serving generation "
                    + generation + ": " + e.getMessage());
        }
        generation++;
        source = next;
        current.getAndSet(loaded).retire();
        metrics.reload(true);
        send(exchange, 200, "application/json", "{\"generation\": " + generation + ", \"module\": \""
                + next.toString().replace("\\", "\\\\").replace("\"", "\\\"") + "\", \"functions\": "
                + new com.google.gson.Gson().toJson(new java.util.ArrayList<>(loaded.manifest.functions().keySet()))
                + "}");
    }

    private static void send(HttpExchange exchange, int status, String type, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", type);
        exchange.sendResponseHeaders(status, bytes.length);
        exchange.getResponseBody().write(bytes);
    }

    /** Answers an error; an IOException means the client is gone, or the answer's head was already sent. */
    private static void sendError(HttpExchange exchange, HttpError e) throws IOException {
        JsonObject error = new JsonObject();
        error.addProperty("error", e.getMessage());
        error.addProperty("kind", e.kind);
        if (e.status == 429) {
            exchange.getResponseHeaders().set("Retry-After", "1");
        }
        send(exchange, e.status, "application/json", error.toString());
    }

    private void deleteScratch() {
        try (Stream<Path> all = Files.walk(scratch)) {
            all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
            // the temporary folder is the system's to clean then
        }
    }

    /** The folder holding the loaded versions' copies (one per version still in use). */
    Path scratch() {
        return scratch;
    }

    int generation() {
        return current.get().generation;
    }

    Metrics metrics() {
        return metrics;
    }
}
