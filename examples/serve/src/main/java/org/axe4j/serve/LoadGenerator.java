package org.axe4j.serve;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Bounded closed-loop load on one endpoint: {@code C} clients, each sending the same binary request
 * again as soon as its answer arrived (keep-alive connections), first for a warm-up, then for a
 * measured time. Every answer's status and length are checked.
 *
 * <p>Usage: {@code LoadGenerator URL BODY_FILE EXPECTED_ANSWER_BYTES CLIENTS SECONDS WARMUP_SECONDS}.
 * Prints one JSON line: requests, errors, requests per second, p50/p99/max latency in microseconds.
 */
public final class LoadGenerator {
    private LoadGenerator() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 6) {
            System.err.println("usage: LoadGenerator URL BODY_FILE EXPECTED_ANSWER_BYTES CLIENTS SECONDS WARMUP_SECONDS");
            System.exit(2);
        }
        URI uri = URI.create(args[0]);
        byte[] body = Files.readAllBytes(Path.of(args[1]));
        int expected = Integer.parseInt(args[2]);
        int clients = Integer.parseInt(args[3]);
        double seconds = Double.parseDouble(args[4]);
        double warmUp = Double.parseDouble(args[5]);
        run(uri, body, expected, clients, warmUp, null);
        long[][] latencies = new long[clients][];
        long[] errors = new long[1];
        long start = System.nanoTime();
        run(uri, body, expected, clients, seconds, new Sink(latencies, errors));
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

    private static void run(URI uri, byte[] body, int expected, int clients, double seconds, Sink sink)
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
                while (!stop.get()) {
                    long begin = System.nanoTime();
                    boolean ok;
                    try {
                        ok = oneRequest(uri, body, expected, buffer);
                    } catch (IOException e) {
                        ok = false;
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

    private static boolean oneRequest(URI uri, byte[] body, int expected, byte[] buffer) throws IOException {
        HttpURLConnection c = (HttpURLConnection) uri.toURL().openConnection();
        c.setRequestMethod("POST");
        c.setDoOutput(true);
        c.setFixedLengthStreamingMode(body.length);
        c.setRequestProperty("Content-Type", "application/octet-stream");
        try (OutputStream out = c.getOutputStream()) {
            out.write(body);
        }
        int status = c.getResponseCode();
        InputStream in = status == 200 ? c.getInputStream() : c.getErrorStream();
        int total = 0;
        if (in != null) {
            try (in) {
                for (int got; (got = in.read(buffer)) > 0; ) {
                    total += got;
                }
            }
        }
        return status == 200 && total == expected;
    }

}
