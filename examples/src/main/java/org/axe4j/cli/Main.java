package org.axe4j.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.util.Arrays;
import java.util.List;
import org.axe4j.layout.AxeException;

/**
 * Entry point of the {@code axe} command-line tool ({@code bin/axe}).
 *
 * <pre>
 *   exit code = 0 ok | 2 bad input (AxeException PARSE or INVALID, usage) | 3 NOT_REPRESENTABLE | 1 internal error
 * </pre>
 *
 * {@link #run} takes the streams and returns the exit code, so the whole tool runs in-process in tests;
 * only {@link #main} calls {@code System.exit}. The user never sees a stack trace.
 */
public final class Main {
    public static final int OK = 0;
    public static final int INTERNAL = 1;
    public static final int BAD_INPUT = 2;
    public static final int NOT_REPRESENTABLE = 3;

    static final String USAGE = String.join("\n",
            "axe: the Axe layout tool (axe4j)",
            "",
            "usage:",
            "  axe layout <command> ...   layout operations: show, apply, inverse, iters, canon, group, tile,",
            "                             slice, equiv, batch",
            "                             (axe layout --help lists them with their arguments)",
            "  axe demo [--out DIR]       the paper's worked examples with their mapped coordinates;",
            "                             writes SVG pictures of their tiles into DIR (default out/demo)",
            "  axe --help                 this text",
            "",
            "exit codes: 0 ok, 2 bad input, 3 not representable, 1 internal error");

    private Main() {}

    public static void main(String[] args) {
        System.exit(run(args, System.in, System.out, System.err));
    }

    /** Runs the tool; returns its exit code. */
    public static int run(String[] args, InputStream in, PrintStream out, PrintStream err) {
        List<String> list = Arrays.asList(args);
        boolean json = list.size() > 1 && list.get(0).equals("layout") && list.contains("--json");
        try {
            if (list.isEmpty() || list.get(0).equals("--help") || list.get(0).equals("-h") || list.get(0).equals("help")) {
                (list.isEmpty() ? err : out).println(USAGE);
                return list.isEmpty() ? BAD_INPUT : OK;
            }
            return switch (list.get(0)) {
                case "layout" -> LayoutCommands.run(list.subList(1, list.size()), in, out);
                case "demo" -> Demo.run(list.subList(1, list.size()), out);
                default -> throw new AxeException(AxeException.Kind.INVALID,
                        "unknown command '" + list.get(0) + "' (see: axe --help)");
            };
        } catch (AxeException e) {
            if (json) {
                out.println(Json.write(Batch.error(e.getMessage(), e.kind().jsonName())));
            } else {
                err.println("axe: " + e.getMessage());
            }
            return e.kind() == AxeException.Kind.NOT_REPRESENTABLE ? NOT_REPRESENTABLE : BAD_INPUT;
        } catch (IOException | UncheckedIOException e) {
            err.println("axe: cannot read or write a file: " + oneLine(e.toString()));
            return BAD_INPUT;
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
