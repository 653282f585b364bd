package org.axe4j.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.axe4j.layout.AxeException;
import org.axe4j.layout.Budget;

/**
 * Entry point of the {@code axe} command-line tool ({@code bin/axe}).
 *
 * <pre>
 *   exit code = 0 ok | 2 bad input (AxeException PARSE or INVALID, usage) | 3 NOT_REPRESENTABLE
 *             | 4 TOO_LARGE (over a cap of the request's Budget, or out of memory) | 1 internal error
 *             | 141 batch stopped because its output was closed (as a program killed by SIGPIPE)
 * </pre>
 *
 * {@link #run} takes the streams and returns the exit code, so the whole tool runs in-process in tests;
 * only {@link #main} calls {@code System.exit}. The user never sees a stack trace: {@link #main} turns
 * anything the JVM throws that {@link #run} could not contain into one line on stderr and exit code 1
 * (4 for running out of memory).
 */
public final class Main {
    public static final int OK = 0;
    public static final int INTERNAL = 1;
    public static final int BAD_INPUT = 2;
    public static final int NOT_REPRESENTABLE = 3;
    public static final int TOO_LARGE = 4;
    public static final int OUTPUT_CLOSED = 141;

    static final String USAGE = String.join("\n",
            "axe: the Axe layout tool (axe4j)",
            "",
            "usage:",
            "  axe layout <command> ...   layout operations: show, apply, inverse, iters, canon, group, tile,",
            "                             slice, equiv, storage, pack, unpack, tile-to, is-direct-sum-right,",
            "                             is-direct-sum-left, permute-by-groups, apply-to-shape,",
            "                             verify-well-formed, batch",
            "                             (axe layout --help lists them with their arguments)",
            "  axe demo [--out DIR]       the paper's worked examples with their mapped coordinates;",
            "                             writes SVG pictures of their tiles into DIR (default out/demo)",
            "  axe serve MODULE.so [--port N] [--threads N] [--queue N] [--deadline-ms N]",
            "                             serves each function of a module axe4j.export_library wrote",
            "                             over HTTP on 127.0.0.1 (docs/serving.md); SIGTERM drains",
            "  axe --help                 this text",
            "",
            "exit codes: 0 ok, 2 bad input, 3 not representable, 4 too large (over a cap), 1 internal error,",
            "            141 batch output closed");

    private Main() {}

    public static void main(String[] args) {
        int code;
        try {
            code = run(args, System.in, System.out, System.err);
        } catch (OutOfMemoryError e) {
            System.err.println("axe: out of memory outside a request; stopping");
            code = TOO_LARGE;
        } catch (Throwable e) { // the JVM cannot go on: one line, no stack trace
            System.err.println("axe: internal error: " + e.getClass().getName());
            code = INTERNAL;
        }
        System.exit(code);
    }

    /** Runs the tool with the caps of {@link Budget#fromEnvironment} over this process's environment. */
    public static int run(String[] args, InputStream in, PrintStream out, PrintStream err) {
        return run(args, in, out, err, System.getenv());
    }

    /** Runs the tool; {@code env} supplies the caps' environment variables; returns its exit code. */
    public static int run(String[] args, InputStream in, PrintStream out, PrintStream err, Map<String, String> env) {
        List<String> list = Arrays.asList(args);
        boolean json = list.size() > 1 && list.get(0).equals("layout") && list.contains("--json");
        try {
            if (list.isEmpty() || list.get(0).equals("--help") || list.get(0).equals("-h") || list.get(0).equals("help")) {
                (list.isEmpty() ? err : out).println(USAGE);
                return list.isEmpty() ? BAD_INPUT : OK;
            }
            return switch (list.get(0)) {
                case "layout" -> LayoutCommands.run(list.subList(1, list.size()), in, out, env);
                case "demo" -> Demo.run(list.subList(1, list.size()), out);
                case "serve" -> org.axe4j.serve.ServeCommand.run(list.subList(1, list.size()), out, err);
                default -> throw new AxeException(AxeException.Kind.INVALID,
                        "unknown command '" + list.get(0) + "' (see: axe --help)");
            };
        } catch (AxeException e) {
            if (json) {
                out.println(Json.write(Batch.error(e.getMessage(), e.kind().jsonName())));
            } else {
                err.println("axe: " + e.getMessage());
            }
            return switch (e.kind()) {
                case NOT_REPRESENTABLE -> NOT_REPRESENTABLE;
                case TOO_LARGE -> TOO_LARGE;
                case PARSE, INVALID -> BAD_INPUT;
            };
        } catch (IOException | UncheckedIOException e) {
            err.println("axe: cannot read or write a file: " + oneLine(e.toString()));
            return BAD_INPUT;
        } catch (OutOfMemoryError e) {
            if (json) {
                out.println(Json.write(Batch.error(Batch.outOfMemory(), AxeException.Kind.TOO_LARGE.jsonName())));
            } else {
                err.println("axe: " + Batch.outOfMemory());
            }
            return TOO_LARGE;
        } catch (RuntimeException | StackOverflowError e) {
            err.println("axe: internal error: " + oneLine(e.toString()));
            return INTERNAL;
        } finally {
            out.flush();
            err.flush();
        }
    }

    private static String oneLine(String s) {
        return s.replaceAll("\\s*\\R\\s*", " ");
    }
}
