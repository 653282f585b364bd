package org.axe4j.serve;

import com.google.gson.Gson;
import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import org.axe4j.tvm.DataType;
import org.axe4j.tvm.Kernel;
import org.axe4j.tvm.ModuleCache;
import org.axe4j.tvm.cuda.Cuda;
import org.axe4j.tvm.cuda.CudaMemory;
import org.axe4j.tvm.cuda.DeviceWorkspace;

/**
 * Serves a GPU kernel over the JDK's HTTP server: each request's body is read straight into a pinned
 * staging buffer of the handler thread's {@link DeviceWorkspace}, copied to the GPU, the kernel runs
 * on the thread's own CUDA stream, the outputs come back and are written from the staging buffers.
 *
 * <pre>
 * POST /v1/run   the input arguments' bytes, concatenated in argument order (exactly their size);
 *                answers the output arguments' bytes, concatenated
 * GET  /health   "ok"
 * </pre>
 *
 * The kernel file is JSON: {@code {"module": "kernels/gemm.so", "function": "gemm", "args":
 * [{"shape": [256, 256], "dtype": "float16"}, ...], "inputs": [0, 1], "outputs": [2]}} (module
 * relative to the file). A request of the wrong length is a 400 naming the expected size.
 *
 * <p>Usage: {@code DeviceKernelService KERNEL_JSON [--port P] [--threads T]}; prints
 * {@code listening on PORT} when ready.
 */
public final class DeviceKernelService {
    private final Kernel kernel;
    private final int[] inputs;
    private final int[] outputs;
    private final long requestBytes;
    private final long answerBytes;
    private final ThreadLocal<DeviceWorkspace> workspaces;
    private final AtomicLong served = new AtomicLong();

    DeviceKernelService(Path description) throws IOException {
        JsonObject d = JsonParser.parseString(Files.readString(description)).getAsJsonObject();
        Path module = description.toAbsolutePath().getParent().resolve(d.get("module").getAsString());
        kernel = ModuleCache.shared().kernel(module, d.get("function").getAsString());
        List<Kernel.TensorSpec> specs = new ArrayList<>();
        for (var arg : d.getAsJsonArray("args")) {
            JsonObject a = arg.getAsJsonObject();
            specs.add(new Kernel.TensorSpec(new Gson().fromJson(a.get("shape"), long[].class),
                    DataType.parse(a.get("dtype").getAsString())));
        }
        inputs = indices(d.getAsJsonArray("inputs"));
        outputs = indices(d.getAsJsonArray("outputs"));
        requestBytes = sum(specs, inputs);
        answerBytes = sum(specs, outputs);
        Cuda cuda = Cuda.enable();
        workspaces = DeviceWorkspace.perThread(kernel, specs, () -> CudaMemory.withOwnStream(cuda, 0));
    }

    private static int[] indices(JsonArray array) {
        int[] result = new int[array.size()];
        for (int i = 0; i < result.length; i++) {
            result[i] = array.get(i).getAsInt();
        }
        return result;
    }

    private static long sum(List<Kernel.TensorSpec> specs, int[] which) {
        long total = 0;
        for (int i : which) {
            total += specs.get(i).bytes();
        }
        return total;
    }

    void handle(HttpExchange exchange) {
        try (exchange) {
            String path = exchange.getRequestURI().getPath();
            if (path.equals("/health")) {
                send(exchange, 200, "ok\n".getBytes(StandardCharsets.UTF_8));
                return;
            }
            if (!path.equals("/v1/run") || !exchange.getRequestMethod().equals("POST")) {
                send(exchange, 404, ("{\"error\": \"POST /v1/run or GET /health\"}").getBytes(StandardCharsets.UTF_8));
                return;
            }
            DeviceWorkspace w = workspaces.get();
            if (!readBody(exchange.getRequestBody(), w)) {
                send(exchange, 400, ("{\"error\": \"the body must be exactly " + requestBytes + " bytes: the inputs "
                        + w.specs() + " at positions " + java.util.Arrays.toString(inputs) + "\"}")
                        .getBytes(StandardCharsets.UTF_8));
                return;
            }
            w.upload(inputs);
            w.call();
            w.download(outputs);
            exchange.getResponseHeaders().set("Content-Type", "application/octet-stream");
            exchange.sendResponseHeaders(200, answerBytes);
            try (OutputStream out = exchange.getResponseBody()) {
                WritableByteChannel channel = Channels.newChannel(out);
                for (int i : outputs) {
                    ByteBuffer answer = w.host(i);
                    while (answer.hasRemaining()) {
                        channel.write(answer);
                    }
                }
            }
            served.incrementAndGet();
        } catch (IOException e) {
            // the client went away mid-request: nothing to answer
        } catch (RuntimeException e) {
            try {
                send(exchange, 500, ("{\"error\": \"" + e.toString().replace('"', '\'') + "\"}")
                        .getBytes(StandardCharsets.UTF_8));
            } catch (IOException ignored) {
                // the headers were already sent
            }
        }
    }

    /** Reads the body into the inputs' staging buffers; false when its length is not exactly theirs. */
    private boolean readBody(InputStream in, DeviceWorkspace w) throws IOException {
        ReadableByteChannel channel = Channels.newChannel(in);
        for (int i : inputs) {
            ByteBuffer target = w.host(i);
            while (target.hasRemaining()) {
                if (channel.read(target) < 0) {
                    return false;
                }
            }
        }
        return in.read() < 0;
    }

    private static void send(HttpExchange exchange, int status, byte[] body) throws IOException {
        exchange.sendResponseHeaders(status, body.length);
        exchange.getResponseBody().write(body);
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: DeviceKernelService KERNEL_JSON [--port P] [--threads T]");
            System.exit(2);
        }
        int port = 8080;
        int threads = 4;
        for (int i = 1; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--port": port = Integer.parseInt(args[i + 1]); break;
                case "--threads": threads = Integer.parseInt(args[i + 1]); break;
                default:
                    System.err.println("unknown option " + args[i] + " (--port, --threads)");
                    System.exit(2);
            }
        }
        System.setProperty("sun.net.httpserver.nodelay", "true");
        DeviceKernelService service = new DeviceKernelService(Path.of(args[0]));
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 256);
        server.createContext("/", service::handle);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        server.setExecutor(pool);
        server.start();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.stop(0);
            pool.shutdown();
            System.out.println("served " + service.served.get());
        }));
        System.out.println("listening on " + server.getAddress().getPort() + " (" + service.kernel.name() + ", "
                + threads + " threads, " + service.requestBytes + " bytes in, " + service.answerBytes + " out)");
    }
}
