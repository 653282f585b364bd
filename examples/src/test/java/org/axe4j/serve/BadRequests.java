package org.axe4j.serve;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Every kind of bad request against the test module ({@code export_served.py}'s kernels.so: matmul A f32[24, 40],
 * B f32[40, 16]; vector_add A, B f32[1000]; widen X i32[1000] -> Y f64[1000, 2]), sent over raw keep-alive sockets
 * so that the client costs little next to the service: wrong sizes, dtypes, shapes, JSON, content types, functions,
 * endpoints, methods and headers, each checked for its status; and two clients that hang up, one mid-body and one
 * mid-answer (a valid request whose answer it stops reading after the status line, then resets the connection).
 */
final class BadRequests {
    private BadRequests() {}

    enum Ending { ANSWERED, HANG_UP_MID_BODY, HANG_UP_MID_ANSWER }

    record Kind(String name, byte[] request, int status, Ending ending) {}

    static final int N = ModuleServiceTest.N;

    static byte[] request(String method, String path, String type, String body, String extraHeaders) {
        byte[] content = body.getBytes(StandardCharsets.UTF_8);
        String head = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                + (type == null ? "" : "Content-Type: " + type + "\r\n")
                + "Content-Length: " + content.length + "\r\n" + extraHeaders + "\r\n";
        byte[] h = head.getBytes(StandardCharsets.US_ASCII);
        byte[] all = new byte[h.length + content.length];
        System.arraycopy(h, 0, all, 0, h.length);
        System.arraycopy(content, 0, all, h.length, content.length);
        return all;
    }

    static Kind answered(String name, String path, String type, String body, int status) {
        return new Kind(name, request("POST", path, type, body, ""), status, Ending.ANSWERED);
    }

    static String zeros(int n) {
        return "[0" + ",0".repeat(n - 1) + "]";
    }

    static List<Kind> kinds() {
        String json = "application/json";
        String binary = "application/octet-stream";
        String b = ModuleServiceTest.nested(new float[ModuleServiceTest.K * ModuleServiceTest.P], ModuleServiceTest.K,
                ModuleServiceTest.P).toString();
        String aShort = ModuleServiceTest.nested(new float[ModuleServiceTest.M * (ModuleServiceTest.K - 1)],
                ModuleServiceTest.M, ModuleServiceTest.K - 1).toString();
        StringBuilder widenInputs = new StringBuilder();
        for (int i = 0; i < N; i++) {
            widenInputs.append(i > 0 ? "," : "").append(i * 7919 - 3_000_000);
        }
        String valid = ModuleServiceTest.inputs("X", "[" + widenInputs + "]");
        byte[] midBody = request("POST", "/v1/matmul", binary, "", "");
        String head = new String(midBody, StandardCharsets.US_ASCII).replace("Content-Length: 0", "Content-Length: 6400");
        byte[] partial = new byte[head.length() + 100];
        System.arraycopy(head.getBytes(StandardCharsets.US_ASCII), 0, partial, 0, head.length());
        return List.of(
                answered("binary too short", "/v1/matmul", binary, "abc", 400),
                answered("binary too long", "/v1/matmul", binary, "x".repeat(6401), 413),
                answered("declared dtype", "/v1/widen", json, ModuleServiceTest.inputs("X",
                        "{\"dtype\": \"float64\", \"data\": [0]}"), 400),
                answered("a fraction for int32", "/v1/widen", json,
                        ModuleServiceTest.inputs("X", "[1.5" + ",0".repeat(N - 1) + "]"), 400),
                answered("wrong shape", "/v1/matmul", json, ModuleServiceTest.inputs("A", aShort, "B", b), 400),
                answered("a string element", "/v1/vector_add", json,
                        ModuleServiceTest.inputs("A", "[\"x\"" + ",0".repeat(N - 1) + "]", "B", zeros(N)), 400),
                answered("broken JSON", "/v1/matmul", json, "{\"inputs\": {\"A\": [", 400),
                answered("no inputs object", "/v1/matmul", json, "[1, 2]", 400),
                answered("a missing input", "/v1/matmul", json, ModuleServiceTest.inputs("B", b), 400),
                answered("an unknown input", "/v1/vector_add", json, ModuleServiceTest.inputs("Q", "[]"), 400),
                answered("wrong content type", "/v1/matmul", "text/plain", "hello", 415),
                answered("no content type", "/v1/matmul", null, "hello", 415),
                answered("unknown function", "/v1/conv2d", json, "{}", 404),
                answered("unknown endpoint", "/v2/matmul", json, "{}", 404),
                new Kind("wrong method", request("GET", "/v1/matmul", null, "", ""), 405, Ending.ANSWERED),
                new Kind("bad deadline header", request("POST", "/v1/widen", json, "{}", "X-Deadline-Ms: soon\r\n"),
                        400, Ending.ANSWERED),
                answered("JSON too large", "/v1/widen", json, " ".repeat(N * 40 + 5000), 413),
                new Kind("hang-up mid-body", partial, 0, Ending.HANG_UP_MID_BODY),
                new Kind("hang-up mid-answer", request("POST", "/v1/widen", json, valid, ""), 200,
                        Ending.HANG_UP_MID_ANSWER));
    }

    /** How many of {@code count} requests, kinds taken in turn, end as {@code ending}. */
    static int count(int count, Ending ending) {
        List<Kind> kinds = kinds();
        int n = 0;
        for (int i = 0; i < count; i++) {
            n += kinds.get(i % kinds.size()).ending() == ending ? 1 : 0;
        }
        return n;
    }

    /** Sends {@code count} requests, the kinds in turn, from {@code senders} threads; checks every status read. */
    static void send(int port, int count, int senders) throws Exception {
        List<Kind> kinds = kinds();
        ExecutorService pool = Executors.newFixedThreadPool(senders);
        try {
            List<Future<Void>> all = new ArrayList<>();
            for (int t = 0; t < senders; t++) {
                int first = t;
                all.add(pool.submit((Callable<Void>) () -> {
                    Connection keptAlive = null;
                    try {
                        for (int i = first; i < count; i += senders) {
                            Kind k = kinds.get(i % kinds.size());
                            switch (k.ending()) {
                                case ANSWERED -> {
                                    if (keptAlive == null) {
                                        keptAlive = new Connection(port, 0);
                                    }
                                    int status;
                                    try {
                                        status = keptAlive.exchange(k.request());
                                    } catch (IOException closedWhileIdle) {
                                        keptAlive.close();  // the service may close a kept-alive connection: retry once
                                        keptAlive = new Connection(port, 0);
                                        status = keptAlive.exchange(k.request());
                                    }
                                    assertEquals(k.status(), status, k.name() + ": " + keptAlive.said);
                                    if (keptAlive.closed) {
                                        keptAlive.close();
                                        keptAlive = null;
                                    }
                                }
                                case HANG_UP_MID_BODY -> {
                                    try (Connection c = new Connection(port, 0)) {
                                        c.socket.getOutputStream().write(k.request());
                                        c.socket.getOutputStream().flush();
                                    }
                                }
                                case HANG_UP_MID_ANSWER -> {
                                    // a small receive window, so that most of the answer is still to be written
                                    try (Connection c = new Connection(port, 2048)) {
                                        c.socket.getOutputStream().write(k.request());
                                        c.socket.getOutputStream().flush();
                                        String status = c.line();
                                        assertTrue(status.startsWith("HTTP/1.1 " + k.status()), k.name() + ": "
                                                + status);
                                        c.socket.setSoLinger(true, 0);  // close with a reset, the answer unread
                                    }
                                }
                                default -> throw new IllegalStateException(k.ending().toString());
                            }
                        }
                    } finally {
                        if (keptAlive != null) {
                            keptAlive.close();
                        }
                    }
                    return null;
                }));
            }
            for (Future<Void> f : all) {
                f.get(300, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /** One HTTP/1.1 connection read by hand: status line, headers, a Content-Length body. */
    static final class Connection implements AutoCloseable {
        final Socket socket;
        final InputStream in;
        final byte[] discard = new byte[1 << 16];
        boolean closed;
        /** The start of the last answer's body, for a message. */
        String said = "";

        Connection(int port, int receiveBuffer) throws IOException {
            socket = new Socket();
            if (receiveBuffer > 0) {
                socket.setReceiveBufferSize(receiveBuffer);  // before connecting: it sets the window offered
            }
            socket.connect(new java.net.InetSocketAddress("127.0.0.1", port), 10_000);
            socket.setSoTimeout(30_000);
            socket.setTcpNoDelay(true);
            in = new BufferedInputStream(socket.getInputStream(), 1 << 16);
        }

        /** Sends a request, reads the whole answer; its status. */
        int exchange(byte[] request) throws IOException {
            socket.getOutputStream().write(request);
            socket.getOutputStream().flush();
            String status = line();
            long length = -1;
            for (String header; !(header = line()).isEmpty(); ) {
                int colon = header.indexOf(':');
                String name = colon > 0 ? header.substring(0, colon).trim().toLowerCase(Locale.ROOT) : "";
                String value = colon > 0 ? header.substring(colon + 1).trim() : "";
                if (name.equals("content-length")) {
                    length = Long.parseLong(value);
                } else if (name.equals("connection") && value.equalsIgnoreCase("close")) {
                    closed = true;
                }
            }
            if (length < 0) {
                throw new IOException("an answer without Content-Length: " + status);
            }
            int kept = 0;
            for (long left = length; left > 0; ) {
                int got = in.read(discard, kept, (int) Math.min(discard.length - kept, left));
                if (got < 0) {
                    throw new IOException("the connection closed mid-answer");
                }
                left -= got;
                kept = Math.min(kept + got, 512);
            }
            said = new String(discard, 0, kept, StandardCharsets.UTF_8);
            return Integer.parseInt(status.split(" ")[1]);
        }

        String line() throws IOException {
            StringBuilder text = new StringBuilder();
            for (int c; (c = in.read()) != '\n'; ) {
                if (c < 0) {
                    throw new IOException("the connection closed");
                }
                if (c != '\r') {
                    text.append((char) c);
                }
            }
            return text.toString();
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }
}
