package org.axe4j.serve;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import com.google.gson.JsonPrimitive;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.FloatBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import org.axe4j.tvm.DataType;
import org.axe4j.tvm.Kernel;
import org.axe4j.tvm.ModuleCache;
import org.axe4j.tvm.TvmLibraries;

/**
 * Serves the GEMM + row-sum kernel that {@code build_kernel.py} exports, over the JDK's HTTP server.
 *
 * <pre>
 * POST /v1/gemm_rowsum   application/octet-stream: A (N*N float32, row-major) then B (N*N float32,
 *                        column-major), little-endian, exactly 8*N*N bytes; answers r = row sums of
 *                        A*B (N float32), or C then r with ?c=1.
 *                        application/json: {"a": [N*N numbers], "b": [N*N numbers, column-major]};
 *                        answers {"row_sums": [...]} (and "c" with ?c=1).
 * GET  /v1/kernel        the kernel's description (kernel.json)
 * GET  /health           "ok"
 * </pre>
 *
 * Bad requests get a 4xx status and a JSON {@code {"error": "..."}} naming what is wrong; anything
 * unexpected is a 500 with its message, and the service keeps running. Each handler thread has its
 * own workspace of tensors over direct buffers ({@link Kernel#workspaces}): the request body is
 * read into them and the answer written from them, with no copy by the bridge.
 *
 * <p>Usage: {@code java -jar axe4j-serve.jar KERNEL_DIR [--port P] [--threads T]}; prints
 * {@code listening on PORT} when ready. Port 0 picks a free port.
 */
public final class KernelService {
    static final int MAX_JSON_BYTES_PER_NUMBER = 40;

    private final Kernel kernel;
    private final ThreadLocal<Kernel.Workspace> workspaces;
    private final int n;
    private final String description;
    private final AtomicLong served = new AtomicLong();
    private final AtomicLong refused = new AtomicLong();

    KernelService(Path kernelDir) throws IOException {
        Path descriptionFile = kernelDir.resolve("kernel.json");
        if (!Files.isRegularFile(descriptionFile)) {
            throw new IllegalArgumentException("KERNEL_DIR " + kernelDir + " has no kernel.json (run build_kernel.py)");
        }
        description = Files.readString(descriptionFile);
        JsonObject d = JsonParser.parseString(description).getAsJsonObject();
        n = d.get("n").getAsInt();
        long[] square = {n, n};
        List<Kernel.TensorSpec> specs = List.of(new Kernel.TensorSpec(square, DataType.FLOAT32),
                new Kernel.TensorSpec(new long[] {(long) n * n}, DataType.FLOAT32),
                new Kernel.TensorSpec(square, DataType.FLOAT32), new Kernel.TensorSpec(square, DataType.FLOAT32),
                new Kernel.TensorSpec(new long[] {n}, DataType.FLOAT32));
        kernel = ModuleCache.shared().kernel(kernelDir.resolve(d.get("module").getAsString()),
                d.get("function").getAsString());
        workspaces = kernel.workspaces(specs);
    }

    /** A client's mistake: answered with {@code status} and the message. */
    static final class BadRequest extends Exception {
        private static final long serialVersionUID = 1L;
        final int status;

        BadRequest(int status, String message) {
            super(message);
            this.status = status;
        }
    }

    long binaryRequestBytes() {
        return 8L * n * n;
    }

    void handle(HttpExchange exchange) throws IOException {
        try {
            try {
                route(exchange);
                served.incrementAndGet();
            } catch (BadRequest e) {
                refused.incrementAndGet();
                sendError(exchange, e.status, e.getMessage());
            } catch (RuntimeException | Error e) {
                refused.incrementAndGet();
                sendError(exchange, 500, "internal error: " + e);
            }
            // closed here, not by exchange.close(), which swallows a failure to drain or flush
            exchange.getRequestBody().close();
            exchange.getResponseBody().close();
        } catch (IOException e) {
            // The client went away mid-request or mid-answer. Rethrown: the JDK's server then drops the connection
            // from its books; a handler that only closes the exchange leaves it there for good.
            refused.incrementAndGet();
            exchange.close();
            throw e;
        }
        exchange.close();
    }

    private void route(HttpExchange exchange) throws IOException, BadRequest {
        String path = exchange.getRequestURI().getPath();
        String method = exchange.getRequestMethod();
        switch (path) {
            case "/health":
                requireMethod(method, "GET");
                send(exchange, 200, "text/plain", "ok\n".getBytes(StandardCharsets.UTF_8));
                return;
            case "/v1/kernel":
                requireMethod(method, "GET");
                send(exchange, 200, "application/json", description.getBytes(StandardCharsets.UTF_8));
                return;
            case "/v1/gemm_rowsum":
                requireMethod(method, "POST");
                compute(exchange);
                return;
            default:
                throw new BadRequest(404, "no such endpoint: " + path + " (POST /v1/gemm_rowsum, GET /v1/kernel, GET /health)");
        }
    }

    private static void requireMethod(String method, String allowed) throws BadRequest {
        if (!method.equals(allowed)) {
            throw new BadRequest(405, "method " + method + " not allowed here; use " + allowed);
        }
    }

    private void compute(HttpExchange exchange) throws IOException, BadRequest {
        String type = exchange.getRequestHeaders().getFirst("Content-Type");
        String query = exchange.getRequestURI().getQuery();
        boolean withC = query != null && List.of(query.split("&")).contains("c=1");
        Kernel.Workspace w = workspaces.get();
        ByteBuffer a = w.buffer(0);
        ByteBuffer b = w.buffer(1);
        String mediaType = type == null ? "" : type.split(";")[0].trim().toLowerCase(java.util.Locale.ROOT);
        if (mediaType.equals("application/octet-stream")) {
            String declared = exchange.getRequestHeaders().getFirst("Content-Length");
            if (declared != null && !declared.trim().equals(Long.toString(binaryRequestBytes()))) {
                throw new BadRequest(declared.trim().matches("[0-9]{1,18}") && Long.parseLong(declared.trim())
                        > binaryRequestBytes() ? 413 : 400, "Content-Length is " + declared.trim()
                        + "; this kernel (N=" + n + ") needs " + binaryRequestBytes()
                        + " bytes (A then column-major B, float32 little-endian)");
            }
            readExactly(exchange.getRequestBody(), a, b);
            w.call();
            ByteBuffer c = w.buffer(3);
            ByteBuffer r = w.buffer(4);
            int length = r.remaining() + (withC ? c.remaining() : 0);
            exchange.getResponseHeaders().set("Content-Type", "application/octet-stream");
            exchange.sendResponseHeaders(200, length);
            OutputStream out = exchange.getResponseBody();
            byte[] chunk = new byte[8192];
            if (withC) {
                copyOut(c, out, chunk);
            }
            copyOut(r, out, chunk);
            out.flush();
        } else if (mediaType.equals("application/json")) {
            byte[] body = readCapped(exchange.getRequestBody(), 2L * n * n * MAX_JSON_BYTES_PER_NUMBER + 4096);
            JsonObject request;
            try {
                JsonElement parsed = JsonParser.parseString(new String(body, StandardCharsets.UTF_8));
                if (!parsed.isJsonObject()) {
                    throw new BadRequest(400, "the JSON body must be an object {\"a\": [...], \"b\": [...]}");
                }
                request = parsed.getAsJsonObject();
            } catch (JsonParseException e) {
                throw new BadRequest(400, "the body is not valid JSON: " + e.getMessage());
            }
            fill(request, "a", a.asFloatBuffer());
            fill(request, "b", b.asFloatBuffer());
            w.call();
            JsonObject answer = new JsonObject();
            answer.add("row_sums", toJson(w.buffer(4).asFloatBuffer()));
            if (withC) {
                answer.add("c", toJson(w.buffer(3).asFloatBuffer()));
            }
            send(exchange, 200, "application/json", answer.toString().getBytes(StandardCharsets.UTF_8));
        } else {
            throw new BadRequest(415, "Content-Type " + (type == null ? "(none)" : "'" + type + "'")
                    + " is not supported: send application/octet-stream (" + binaryRequestBytes()
                    + " bytes: A then column-major B, float32 little-endian) or application/json");
        }
    }

    private void fill(JsonObject request, String name, FloatBuffer into) throws BadRequest {
        JsonElement element = request.get(name);
        long expected = (long) n * n;
        if (element == null || !element.isJsonArray()) {
            throw new BadRequest(400, "\"" + name + "\" must be an array of " + expected + " numbers");
        }
        JsonArray values = element.getAsJsonArray();
        if (values.size() != expected) {
            throw new BadRequest(400, "\"" + name + "\" has " + values.size() + " numbers; this kernel (N=" + n
                    + ") needs " + expected);
        }
        for (int i = 0; i < values.size(); i++) {
            JsonElement v = values.get(i);
            if (!v.isJsonPrimitive() || !((JsonPrimitive) v).isNumber()) {
                throw new BadRequest(400, "\"" + name + "\"[" + i + "] is " + v + ", not a number");
            }
            float f = v.getAsFloat();
            if (!Float.isFinite(f)) {
                throw new BadRequest(400, "\"" + name + "\"[" + i + "] = " + v + " is not a finite float32");
            }
            into.put(i, f);
        }
    }

    private static JsonArray toJson(FloatBuffer values) {
        JsonArray array = new JsonArray(values.remaining());
        for (int i = 0; i < values.remaining(); i++) {
            array.add(values.get(i));
        }
        return array;
    }

    /** Reads exactly the capacity of each buffer in turn, and refuses a body of any other length. */
    private void readExactly(InputStream in, ByteBuffer... targets) throws IOException, BadRequest {
        byte[] chunk = new byte[16384];
        long total = 0;
        for (ByteBuffer target : targets) {
            while (target.hasRemaining()) {
                int got = in.read(chunk, 0, Math.min(chunk.length, target.remaining()));
                if (got < 0) {
                    throw new BadRequest(400, "the body has " + (total) + " bytes; this kernel (N=" + n + ") needs "
                            + binaryRequestBytes() + " (A then column-major B, float32 little-endian)");
                }
                target.put(chunk, 0, got);
                total += got;
            }
        }
        long extra = 0;
        for (int got; (got = in.read(chunk)) > 0 && extra <= binaryRequestBytes(); ) {
            extra += got;
        }
        if (extra > 0) {
            throw new BadRequest(413, "the body has " + (extra > binaryRequestBytes() ? "more than " : "")
                    + (total + extra) + " bytes; this kernel (N=" + n + ") needs " + binaryRequestBytes());
        }
    }

    private static byte[] readCapped(InputStream in, long cap) throws IOException, BadRequest {
        byte[] body = in.readNBytes((int) Math.min(Integer.MAX_VALUE - 8, cap + 1));
        if (body.length > cap) {
            throw new BadRequest(413, "the JSON body is larger than " + cap + " bytes");
        }
        return body;
    }

    private static void copyOut(ByteBuffer source, OutputStream out, byte[] chunk) throws IOException {
        while (source.hasRemaining()) {
            int length = Math.min(chunk.length, source.remaining());
            source.get(chunk, 0, length);
            out.write(chunk, 0, length);
        }
    }

    private static void send(HttpExchange exchange, int status, String type, byte[] body) throws IOException {
        exchange.getResponseHeaders().set("Content-Type", type);
        exchange.sendResponseHeaders(status, body.length);
        exchange.getResponseBody().write(body);
    }

    /** Answers an error; an IOException means the client is gone, or the answer's head was already sent. */
    private static void sendError(HttpExchange exchange, int status, String message) throws IOException {
        JsonObject error = new JsonObject();
        error.addProperty("error", message);
        send(exchange, status, "application/json", error.toString().getBytes(StandardCharsets.UTF_8));
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: java -jar axe4j-serve.jar KERNEL_DIR [--port P] [--threads T]");
            System.exit(2);
        }
        int port = 8080;
        int threads = Runtime.getRuntime().availableProcessors();
        for (int i = 1; i < args.length; i++) {
            String option = args[i];
            if (i + 1 >= args.length) {
                System.err.println("option " + option + " needs a value");
                System.exit(2);
            }
            String value = args[++i];
            try {
                switch (option) {
                    case "--port": port = Integer.parseInt(value); break;
                    case "--threads": threads = Integer.parseInt(value); break;
                    default:
                        System.err.println("unknown option " + option + " (--port, --threads)");
                        System.exit(2);
                }
            } catch (NumberFormatException e) {
                System.err.println("option " + option + " takes a whole number, not '" + value + "'");
                System.exit(2);
            }
        }
        if (threads < 1 || port < 0 || port > 65535) {
            System.err.println("--threads must be >= 1 and --port between 0 and 65535");
            System.exit(2);
        }
        // answers go out in two writes (head, body): without this, Nagle's algorithm and delayed ACKs add ~40 ms
        System.setProperty("sun.net.httpserver.nodelay", "true");
        KernelService service = new KernelService(Path.of(args[0]));
        System.out.println(TvmLibraries.diagnostics());
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 256);
        server.createContext("/", service::handle);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        server.setExecutor(pool);
        server.start();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.stop(0);
            pool.shutdown();
            System.out.println("served " + service.served.get() + ", refused " + service.refused.get());
        }));
        System.out.println("listening on " + server.getAddress().getPort() + " (N=" + service.n + ", " + threads
                + " threads)");
    }
}
