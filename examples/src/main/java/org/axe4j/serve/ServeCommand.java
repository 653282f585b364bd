package org.axe4j.serve;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import org.axe4j.tvm.TvmLibraries;

/**
 * {@code axe serve MODULE.so [--port N] [--threads N] [--queue N] [--deadline-ms N] [--drain-ms N]}: serves the module
 * until SIGTERM or SIGINT, then drains and returns 0. Prints {@code listening on PORT} once ready.
 */
public final class ServeCommand {
    static final String USAGE = "usage: axe serve MODULE.so [--port N (8080; 0: any free)] [--threads N (cores)] "
            + "[--queue N (64)] [--deadline-ms N (10000)] [--drain-ms N (30000)]";

    private ServeCommand() {}

    /** Exit code 0 after a drain, 2 for a bad command line or a module that cannot be served. */
    public static int run(List<String> args, PrintStream out, PrintStream err) throws java.io.IOException {
        if (args.isEmpty() || args.get(0).startsWith("-")) {
            err.println(USAGE);
            return 2;
        }
        int port = 8080;
        int threads = Runtime.getRuntime().availableProcessors();
        int queue = 64;
        long deadlineMs = 10_000;
        long drainMs = 30_000;
        for (int i = 1; i < args.size(); i += 2) {
            String option = args.get(i);
            if (i + 1 >= args.size()) {
                err.println("axe serve: option " + option + " needs a value\n" + USAGE);
                return 2;
            }
            long value;
            try {
                value = Long.parseLong(args.get(i + 1));
            } catch (NumberFormatException e) {
                err.println("axe serve: " + option + " takes a whole number, not '" + args.get(i + 1) + "'");
                return 2;
            }
            switch (option) {
                case "--port" -> port = (int) Math.min(value, 1 << 20);
                case "--threads" -> threads = (int) Math.min(value, 1024);
                case "--queue" -> queue = (int) Math.min(value, 1 << 20);
                case "--deadline-ms" -> deadlineMs = value;
                case "--drain-ms" -> drainMs = value;
                default -> {
                    err.println("axe serve: unknown option " + option + "\n" + USAGE);
                    return 2;
                }
            }
        }
        if (port < 0 || port > 65535 || threads < 1 || queue < 0 || deadlineMs < 1 || drainMs < 0) {
            err.println("axe serve: --port must be 0..65535, --threads >= 1, --queue >= 0, --deadline-ms >= 1, "
                    + "--drain-ms >= 0");
            return 2;
        }
        ModuleService service;
        try {
            service = ModuleService.start(new ModuleService.Config(Path.of(args.get(0)), port, threads, queue,
                    deadlineMs, drainMs, null));
        } catch (RuntimeException e) {
            err.println("axe serve: cannot serve " + args.get(0) + ": " + e.getMessage());
            return 2;
        }
        Runnable drain = () -> service.drain(() -> {   // printed once readiness already answers 503
            out.println("draining");
            out.flush();
        });
        for (String signal : List.of("TERM", "INT")) {
            sun.misc.Signal.handle(new sun.misc.Signal(signal), s -> new Thread(drain, "axe-serve-drain").start());
        }
        Manifest m = service.manifest();
        out.println(TvmLibraries.diagnostics());
        if (!m.onCuda()) {
            out.println("parallel loops: " + service.parallelLoops());
        }
        out.println("listening on " + service.port() + " (" + m.library().getFileName() + " on " + m.device()
                + (m.onCuda() ? " " + m.arch() : "") + ": " + m.functions().keySet() + "; " + threads
                + " threads, queue " + queue + ", deadline " + deadlineMs + " ms)");
        out.flush();
        try {
            service.awaitStopped();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            service.drain();
        }
        out.println("stopped");
        out.flush();
        return 0;
    }
}
