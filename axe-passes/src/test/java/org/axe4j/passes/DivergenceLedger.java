package org.axe4j.passes;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The counts of the differential run, per operation and outcome, and for every by-design reason, TIRx
 * defect kind and TIRx refusal the smallest example met (examples carry a weight, the size of their
 * operands; a smaller one replaces a larger one, which minimises each reproduction over the whole run).
 * Renders the console table and {@code docs/divergences.md}.
 */
final class DivergenceLedger {
    /** How one comparison ended. */
    enum Outcome {
        AGREE("agree"),
        BY_DESIGN("differ-by-design"),
        ONLY_AXE4J("only-axe4j"),
        ONLY_TIRX("only-TIRx"),
        TIRX_WRONG("TIRx-wrong");

        final String label;

        Outcome(String label) {
            this.label = label;
        }
    }

    /** One example: what was asked, what each side answered, a TVMScript reproduction, its weight. */
    record Example(String input, String tirx, String axe4j, String python, long weight) {}

    /** A by-design reason or defect kind: the explanation, how often it occurred, its smallest example. */
    static final class Entry {
        final String explanation;
        long count;
        Example smallest;

        Entry(String explanation) {
            this.explanation = explanation;
        }
    }

    private final Map<String, long[]> counts = new LinkedHashMap<>();
    private final Map<String, Map<String, Entry>> byDesign = new TreeMap<>();
    private final Map<String, Map<String, Entry>> tirxWrong = new TreeMap<>();
    private final Map<String, Map<String, Entry>> onlyAxe4j = new TreeMap<>();

    synchronized void record(String op, Outcome outcome) {
        counts.computeIfAbsent(op, k -> new long[Outcome.values().length])[outcome.ordinal()]++;
    }

    /** Counts the outcome and files the example under its reason (not needed for AGREE and ONLY_TIRX). */
    synchronized void record(String op, Outcome outcome, String reason, String explanation, Example example) {
        record(op, outcome);
        Map<String, Map<String, Entry>> book = switch (outcome) {
            case BY_DESIGN -> byDesign;
            case TIRX_WRONG -> tirxWrong;
            case ONLY_AXE4J -> onlyAxe4j;
            default -> null;
        };
        if (book == null) {
            return;
        }
        Entry e = book.computeIfAbsent(op, k -> new TreeMap<>()).computeIfAbsent(reason, k -> new Entry(explanation));
        e.count++;
        if (e.smallest == null || example.weight() < e.smallest.weight()) {
            e.smallest = example;
        }
    }

    /** Whether an example of this weight would replace the one kept (so that costly example text is made only then). */
    synchronized boolean wouldKeep(String op, Outcome outcome, String reason, long weight) {
        Map<String, Map<String, Entry>> book = switch (outcome) {
            case BY_DESIGN -> byDesign;
            case TIRX_WRONG -> tirxWrong;
            case ONLY_AXE4J -> onlyAxe4j;
            default -> Map.of();
        };
        Entry e = book.getOrDefault(op, Map.of()).get(reason);
        return e == null || weight < e.smallest.weight();
    }

    synchronized long count(String op, Outcome outcome) {
        long[] c = counts.get(op);
        return c == null ? 0 : c[outcome.ordinal()];
    }

    /** The per-operation table as printed on the console. */
    synchronized String consoleTable() {
        StringBuilder sb = new StringBuilder(String.format("%n%-14s %9s %17s %11s %10s %11s%n", "operation",
                "agree", "differ-by-design", "only-axe4j", "only-TIRx", "TIRx-wrong"));
        for (String op : ordered(counts.keySet())) {
            long[] c = counts.get(op);
            sb.append(String.format("%-14s %9d %17d %11d %10d %11d%n", op, c[0], c[1], c[2], c[3], c[4]));
        }
        appendConsole(sb, "differ-by-design", byDesign);
        appendConsole(sb, "TIRx defect", tirxWrong);
        appendConsole(sb, "only-axe4j", onlyAxe4j);
        return sb.toString();
    }

    private static void appendConsole(StringBuilder sb, String title, Map<String, Map<String, Entry>> book) {
        book.forEach((op, reasons) -> reasons.forEach((reason, e) -> sb.append(String.format(
                "  %s %s [%s] x%d: %s -> TIRx %s, axe4j %s%n", title, op, reason, e.count, e.smallest.input(),
                e.smallest.tirx(), e.smallest.axe4j()))));
    }

    /** The whole report in Markdown. */
    synchronized String markdown(long seed, int cases) {
        StringBuilder md = new StringBuilder();
        md.append("# axe4j and TIRx: differential results\n\n");
        md.append("Written by `DifferentialTest` (axe-passes/src/test/java/org/axe4j/passes/), which `make test` runs;\n"
                + "regenerate with `mvn -B -o verify -pl axe-passes -am` (the file is written only by a run with the\n"
                + "default seed and case count). Every operation ran on ").append(String.format("%,d", cases))
                .append(" seeded random cases (base seed ").append(seed).append(").\n\n");
        md.append("Each case builds operands with `RandomLayouts` (shapes, replicas, offsets, negative and zero strides,\n"
                + "the axes `m`, `TLane`, `TCol` (memory) and `laneid`, `warpid` (threads)), asks axe4j and TIRx's C++\n"
                + "globals (`tirx.*`, through the Java bridge) the same question, and checks every answer of both\n"
                + "sides by enumerating the map it must induce (`Oracle`). Thread axes are kept to `laneid` and\n"
                + "`warpid`, which always form a connected scope chain: TIRx rejects a layout whose thread axes do not\n"
                + "(e.g. `laneid` with `wgid`: \"Ill-formed tile layout: disconnected scope chain\"), a well-formedness\n"
                + "rule of TIRx's outside the algebra compared here, which axe4j checks apart (`WellFormed`, the\n"
                + "global `verify_well_formed`). Outcomes:\n\n"
                + "- **agree**: the same answer (the same layout, the same number, or both refuse);\n"
                + "- **differ-by-design**: both answers are correct and differ by a documented rule (below);\n"
                + "- **only-axe4j**: axe4j answers correctly and TIRx refuses (raises or returns None);\n"
                + "- **only-TIRx**: TIRx answers correctly and axe4j refuses: a failure of axe4j (must be 0);\n"
                + "- **TIRx-wrong**: TIRx's answer does not induce the required map: an upstream defect, listed below\n"
                + "  with a minimal reproduction; axe4j's answer on the same input is correct.\n\n"
                + "A wrong axe4j answer fails the run at once, so none is counted. The examples are the smallest met\n"
                + "in the run (fewest iters, then smallest domain).\n\n");
        md.append("## Counts per operation\n\n");
        md.append("| operation | agree | differ-by-design | only-axe4j | only-TIRx | TIRx-wrong |\n");
        md.append("|---|---:|---:|---:|---:|---:|\n");
        for (String op : ordered(counts.keySet())) {
            long[] c = counts.get(op);
            md.append(String.format("| %s | %d | %d | %d | %d | %d |%n", op, c[0], c[1], c[2], c[3], c[4]));
        }
        md.append("\nOperations compared: `apply` (TIRx's `LayoutApplyLinear` returns the base point `D(x) + O`; "
                + "compared with it at every index of layouts up to 32 elements and at 32 indices of larger ones, so "
                + "its counts are indices), `canonicalize`, `group` (`TileLayoutGroup`), `tile` (`LayoutTile`), `tile-outer` "
                + "(`LayoutIsTileInner`: find the outer layout from the inner one), `tile-inner` (`LayoutIsTileOuter`: "
                + "find the inner layout from the outer one), `direct-sum` (`LayoutDirectSum`), `slice` "
                + "(`LayoutSlice`), `span` (`LayoutGetSpan`, per axis, so its counts are axes).\n\n");
        section(md, "Differences by design", byDesign, false);
        section(md, "TIRx defects (upstream; axe4j does not copy them)", tirxWrong, true);
        section(md, "Answered by axe4j only (TIRx refuses)", onlyAxe4j, false);
        return md.toString();
    }

    private static void section(StringBuilder md, String title, Map<String, Map<String, Entry>> book, boolean python) {
        md.append("## ").append(title).append("\n\n");
        if (book.isEmpty()) {
            md.append("None.\n\n");
            return;
        }
        Map<String, String> explainedAt = new LinkedHashMap<>();
        for (String op : ordered(book.keySet())) {
            book.get(op).forEach((reason, e) -> {
            String heading = op + ": " + reason;
            md.append("### ").append(heading).append(" (").append(e.count)
                    .append(e.count == 1 ? " case" : " cases").append(")\n\n");
            String first = explainedAt.putIfAbsent(e.explanation, heading);
            md.append(first == null ? e.explanation : "Cause: as in \"" + first + "\" above.").append("\n\n");
            md.append("Smallest example:\n\n");
            md.append("- input: `").append(e.smallest.input()).append("`\n");
            md.append("- TIRx: `").append(e.smallest.tirx()).append("`\n");
            md.append("- axe4j: `").append(e.smallest.axe4j()).append("`\n");
            if (python) {
                md.append("\nReproduction in Python (TVM's TIRx):\n\n```python\n").append(e.smallest.python())
                        .append("\n```\n");
            }
            md.append('\n');
            });
        }
    }

    /** Operations in the order of the table: the map first, then the operations on layouts. */
    private static final List<String> ORDER = List.of("apply", "span", "canonicalize", "group", "tile", "tile-outer",
            "tile-inner", "direct-sum", "slice");

    private static List<String> ordered(java.util.Collection<String> ops) {
        List<String> out = new ArrayList<>(ops);
        out.sort(java.util.Comparator.comparingInt(op -> ORDER.indexOf(op) < 0 ? ORDER.size() : ORDER.indexOf(op)));
        return out;
    }

    /** The heading from which the file is written by hand, not by this ledger: a rewrite keeps it and what follows. */
    static final String HAND_WRITTEN = "## TVM's layout test file";

    void write(Path file, long seed, int cases) throws IOException {
        Files.createDirectories(file.getParent());
        String kept = "";
        if (Files.exists(file)) {
            String old = Files.readString(file, StandardCharsets.UTF_8);
            int at = old.indexOf(HAND_WRITTEN);
            kept = at < 0 ? "" : "\n" + old.substring(at);
        }
        Files.writeString(file, markdown(seed, cases) + kept, StandardCharsets.UTF_8);
    }
}
