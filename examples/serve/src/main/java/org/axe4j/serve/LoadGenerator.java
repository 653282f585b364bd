package org.axe4j.serve;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Bounded closed-loop load on one endpoint: {@code C} clients, each on its own keep-alive HTTP/1.1
 * connection with Nagle's algorithm off, sending the same binary request again as soon as its
 * answer arrived, first for a warm-up, then for a measured time. Every answer's status and length
 * are checked; a failed exchange counts as an error and the client reconnects.
 *
 * <p>Usage: {@code LoadGenerator URL BODY_FILE EXPECTED_ANSWER_BYTES CLIENTS SECONDS WARMUP_SECONDS [CONTENT_TYPE]}:
 * the body goes as {@code application/octet-stream} unless a content type is given; an expected length of -1 takes
 * an answer of any length (JSON, whose numbers each service writes its own way).
 * Prints one JSON line: requests, errors, requests per second, p50/p99/max latency in microseconds.
 */
public final class LoadGenerator {
    private LoadGenerator() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 6 && args.length != 7) {
            System.err.println("usage: LoadGenerator URL BODY_FILE EXPECTED_ANSWER_BYTES CLIENTS SECONDS WARMUP_SECONDS"
                    + " [CONTENT_TYPE]");
            System.exit(2);
        }
        URI uri = URI.create(args[0]);
        byte[] body = Files.readAllBytes(Path.of(args[1]));
        int expected = Integer.parseInt(args[2]);
        int clients = Integer.parseInt(args[3]);
        double seconds = Double.parseDouble(args[4]);
        double warmUp = Double.parseDouble(args[5]);
        String type = args.length == 7 ? args[6] : "application/octet-stream";
        run(uri, body, type, expected, clients, warmUp, null);
        long[][] latencies = new long[clients][];
        long[] errors = new long[1];
        long start = System.nanoTime();
        run(uri, body, type, expected, clients, seconds, new Sink(latencies, errors));
        double elapsed = (System.nanoTime() - start) / 1e9;
        long[] all = Arrays.stream(latencies).flatMapToLong(Arrays::stream).sorted().toArray();
        if (all.length == 0) {
            System.out.println("{\"requests\": 0, \"errors\": " + errors[0] + "}");
            System.exit(1);
        }
        System.out.println(String.format(Locale.ROOT,
                "{\"requests\": %d, \"errors\": %d, \"seconds\": %.3f, \"clients\": %d, \"rps\": %.1f,"
                        + " \"p50_us\": %.1f, \"p99_us\": %.1f, \"max_us\": %.1f}",
                all.length, errors[0], elapsed, clients, all.length / elapsed, percentile(all, 0.50) / 1e3,
                percentile(all, 0.99) / 1e3, all[all.length - 1] / 1e3));
    }

    private record Sink(long[][] latencies, long[] errors) {}

    static double percentile(long[] sorted, double q) {
        int index = (int) Math.ceil(q * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
    }

    private static void run(URI uri, byte[] body, String type, int expected, int clients, double seconds, Sink sink)
            throws InterruptedException {
        AtomicBoolean stop = new AtomicBoolean();
        Thread[] threads = new Thread[clients];
        long[] errorCounts = new long[clients];
        for (int t = 0; t < clients; t++) {
            final int id = t;
            threads[t] = new Thread(() -> {
                long[] mine = new long[1 << 16];
                int count = 0;
                byte[] buffer = new byte[1 << 16];
                Connection connection = null;
                while (!stop.get()) {
                    long begin = System.nanoTime();
                    boolean ok;
                    try {
                        if (connection == null) {
                            connection = new Connection(uri, body, type);
                        }
                        ok = connection.exchange(expected, buffer);
                    } catch (IOException e) {
                        ok = false;
                        try {
                            if (connection != null) {
                                connection.close();
                            }
                        } catch (IOException ignored) {
                            // already broken
                        }
                        connection = null;
                    }
                    long took = System.nanoTime() - begin;
                    if (!ok) {
                        errorCounts[id]++;
                        continue;
                    }
                    if (count == mine.length) {
                        mine = Arrays.copyOf(mine, count * 2);
                    }
                    mine[count++] = took;
                }
                if (connection != null) {
                    try {
                        connection.close();
                    } catch (IOException ignored) {
                        // the run is over
                    }
                }
                if (sink != null) {
                    sink.latencies()[id] = Arrays.copyOf(mine, count);
                }
            });
            threads[t].start();
        }
        Thread.sleep((long) (seconds * 1000));
        stop.set(true);
        for (Thread t : threads) {
            t.join();
        }
        if (sink != null) {
            sink.errors()[0] = Arrays.stream(errorCounts).sum();
        }
    }

    /** One keep-alive HTTP/1.1 connection with Nagle's algorithm off; request head and body go in one write. */
    private static final class Connection implements AutoCloseable {
        private final Socket socket;
        private final InputStream in;
        private final OutputStream out;
        private final byte[] request;

        Connection(URI uri, byte[] body, String type) throws IOException {
            socket = new Socket(uri.getHost(), uri.getPort());
            socket.setTcpNoDelay(true);
            in = new BufferedInputStream(socket.getInputStream(), 1 << 16);
            out = socket.getOutputStream();
            byte[] head = ("POST " + uri.getRawPath() + " HTTP/1.1\r\nHost: " + uri.getHost() + ":" + uri.getPort()
                    + "\r\nContent-Type: " + type + "\r\nContent-Length: " + body.length + "\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII);
            request = new byte[head.length + body.length];
            System.arraycopy(head, 0, request, 0, head.length);
            System.arraycopy(body, 0, request, head.length, body.length);
        }

        /** Sends the request and reads the answer; true for status 200 with {@code expected} bytes (-1: any). */
        boolean exchange(int expected, byte[] buffer) throws IOException {
            out.write(request);
            out.flush();
            String status = line();
            int length = -1;
            for (String header; !(header = line()).isEmpty(); ) {
                int colon = header.indexOf(':');
                if (colon > 0 && header.substring(0, colon).trim().equalsIgnoreCase("Content-Length")) {
                    length = Integer.parseInt(header.substring(colon + 1).trim());
                }
            }
            if (length < 0) {
                throw new IOException("answer without Content-Length: " + status);
            }
            for (int left = length; left > 0; ) {
                int got = in.read(buffer, 0, Math.min(buffer.length, left));
                if (got < 0) {
                    throw new IOException("connection closed mid-answer");
                }
                left -= got;
            }
            return status.startsWith("HTTP/1.1 200") && (expected < 0 || length == expected);
        }

        private String line() throws IOException {
            StringBuilder text = new StringBuilder();
            for (int c; (c = in.read()) != '\n'; ) {
                if (c < 0) {
                    throw new IOException("connection closed");
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
