package org.axe4j.cli;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.axe4j.layout.AxeException;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Budget;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Point;
import org.axe4j.layout.Shape;
import org.axe4j.layout.picture.SvgPicture;
import org.axe4j.layout.picture.TextTable;
import org.axe4j.layout.picture.TileModel;

/**
 * {@code axe layout <command>}: each single command reads its arguments into the same JSON request the
 * batch mode takes, asks {@link Operations}, and prints the answer as text or, with {@code --json}, as
 * the batch answer line.
 */
final class LayoutCommands {
    static final String USAGE = String.join("\n",
            "usage: axe layout <command> [arguments] [--json]",
            "",
            "  show LAYOUT [--shape S] [--svg FILE] [--max-rows N] [--max-cols N]",
            "        the layout, its size and spans, and the logical tile with each cell's hardware",
            "        coordinates; --svg writes the tile as a picture (cells coloured by thread axes)",
            "  apply LAYOUT --shape S --coord C [--count | --stream]",
            "                                         the set L(C) of hardware points; --count: how many (nothing",
            "                                         enumerated); --stream: one point per line, in constant memory",
            "  inverse LAYOUT --shape S --point P     the coordinate whose image holds P (e.g. laneid:8,warpid:6)",
            "  iters LAYOUT                           shard and replica iters, offset",
            "  canon LAYOUT                           the canonical form (same map, rewrites applied to a fixpoint)",
            "  group LAYOUT --shape S                 the shard refined into one block per dimension",
            "  tile --outer L --outer-shape S --inner L --inner-shape S",
            "                                         the Kronecker product: tiles of the inner layout placed by the outer",
            "  slice LAYOUT --shape S --region R      the layout of the box R, e.g. 0:4,8:16 (ends excluded)",
            "  equiv A B                              whether two layouts induce the same map (quote each)",
            "  storage LAYOUT                         the layout without its thread axes (where elements live)",
            "  pack LAYOUT --num N                    N contiguous elements as one (TIRx's pack)",
            "  unpack LAYOUT --num N                  each element as N contiguous ones (TIRx's unpack)",
            "  tile-to LAYOUT --shape S --to T        the layout over S repeated row-major over T (TIRx's tile_to)",
            "  is-direct-sum-right B --sum L --interleaved I --shape S",
            "                                         the left addend A with L = A + B over I = (A0,B0,A1,B1,..), S = B's",
            "  is-direct-sum-left A --sum L --interleaved I --shape S   the right addend B (S = A's shape)",
            "  permute-by-groups LAYOUT --seps P --perm Q   shard iters P[g]:P[g+1] as group g, groups in order Q",
            "  apply-to-shape LAYOUT --shape S --coord C    the value of each shard iter at coordinate C of S",
            "  verify-well-formed LAYOUT              whether the thread axes chain one order of scopes",
            "  batch                                  JSON Lines requests on stdin, one answer line each",
            "",
            "A LAYOUT is text such as 'S[(8,2,4,2):(4@laneid,1@warpid,1@laneid,1@reg)] + R[2:4@warpid] + 5@warpid'",
            "(quote it). A shape or coordinate is written 8,16 or (8,16); a region 0:4,8:16 (end excluded).",
            "--json prints the answer as one JSON object (the batch answer).",
            "",
            "batch requests (one JSON object per line; extra fields allowed, \"id\" is echoed):",
            "  {\"op\":\"apply\",\"layout\":L,\"shape\":[..],\"coord\":[..]}   -> {\"points\":[{\"laneid\":8,...},...]}",
            "    with \"mode\":\"count\"                                  -> {\"count\":N}",
            "    with \"mode\":\"stream\"   -> lines {\"points\":[..1024 points],\"more\":true} .. {\"points\":[..],\"more\":false,\"count\":N}",
            "  {\"op\":\"inverse\",\"layout\":L,\"shape\":[..],\"point\":{..}} -> {\"coord\":[..] or null}",
            "  {\"op\":\"iters\",\"layout\":L}                            -> {\"shard\":[[e,s,\"axis\"],..],\"replica\":[..],\"offset\":{..}}",
            "  {\"op\":\"group\",\"layout\":L,\"shape\":[..]}               -> {\"layout\":L2,\"seps\":[0,..,n]}",
            "  {\"op\":\"canon\",\"layout\":L}                            -> {\"layout\":L2}",
            "  {\"op\":\"tile\",\"inner\":L1,\"outer\":L2,\"inner_shape\":[..],\"outer_shape\":[..]} -> {\"layout\":L3,\"shape\":[..]}",
            "  {\"op\":\"slice\",\"layout\":L,\"shape\":[..],\"region\":[[begin,end],..]} -> {\"layout\":L2,\"shape\":[..]}",
            "  {\"op\":\"equiv\",\"a\":L1,\"b\":L2}                        -> {\"equivalent\":true|false}",
            "  {\"op\":\"storage\",\"layout\":L}                          -> {\"layout\":L2}",
            "  {\"op\":\"pack\" or \"unpack\",\"layout\":L,\"num\":N}        -> {\"layout\":L2}",
            "  {\"op\":\"tile_to\",\"layout\":L,\"shape\":[..],\"to_shape\":[..]} -> {\"layout\":L2,\"shape\":[..]}",
            "  {\"op\":\"is_direct_sum_right\" or \"is_direct_sum_left\",\"layout\":L,\"sum\":L2,\"interleaved_shape\":[..],",
            "   \"shape\":[..]}                                   -> {\"layout\":L3} or {\"layout\":null,\"reason\":..}",
            "  {\"op\":\"permute_by_groups\",\"layout\":L,\"seps\":[..],\"perm\":[..]} -> {\"layout\":L2}",
            "  {\"op\":\"apply_to_shape\",\"layout\":L,\"shape\":[..],\"coord\":[..]} -> {\"values\":[..],\"layout\":L2}",
            "  {\"op\":\"verify_well_formed\",\"layout\":L}               -> {\"well_formed\":true|false[,\"reason\":..]}",
            "  a failure            -> {\"error\":\"...\",\"kind\":\"parse|invalid|not_representable|too_large|internal\"}",
            "",
            "caps (every command; also from AXE4J_MAX_POINTS, AXE4J_MAX_ANSWER_BYTES, AXE4J_MAX_REQUEST_BYTES,",
            "AXE4J_MAX_MILLIS): --max-points N (default 65536 points enumerated per request: size x replicas),",
            "--max-answer-bytes N (4194304), --max-request-bytes N (1048576 per batch line), --max-millis N (10000).",
            "A request over a cap is refused with kind too_large (exit code 4).",
            "",
            "exit codes: 0 ok, 2 bad input, 3 not representable, 4 too large, 1 internal error,",
            "            141 batch output closed");

    private static final Set<String> NONE = Set.of();
    private static final Set<String> JSON = Set.of("json");

    /** The options that set the caps of a request's {@link Budget}, accepted by every command. */
    static final List<String> CAPS = List.of("max-points", "max-answer-bytes", "max-request-bytes", "max-millis");

    private LayoutCommands() {}

    /** {@code valueOptions} plus the cap options. */
    private static Set<String> withCaps(Set<String> valueOptions) {
        Set<String> all = new java.util.TreeSet<>(valueOptions);
        all.addAll(CAPS);
        return all;
    }

    /** The caps from the environment, then from the command's options. */
    static Budget budget(Args a, Map<String, String> env) {
        Budget b = Budget.fromEnvironment(env);
        for (String cap : CAPS) {
            String v = a.option(cap).orElse(null);
            if (v != null) {
                b = b.with(cap.replace('-', '_'), Budget.parseCap("option --" + cap, v));
            }
        }
        return b;
    }

    static int run(List<String> args, InputStream in, PrintStream out, Map<String, String> env) throws IOException {
        if (args.isEmpty() || args.get(0).equals("--help") || args.get(0).equals("-h") || args.get(0).equals("help")) {
            out.println(USAGE);
            return 0;
        }
        String command = args.get(0);
        List<String> rest = args.subList(1, args.size());
        if (rest.contains("--help") || rest.contains("-h")) {
            out.println(USAGE);
            return 0;
        }
        switch (command) {
            case "show": {
                Args a = new Args(command, rest, withCaps(Set.of("shape", "svg", "max-rows", "max-cols")), JSON);
                return show(a, out, budget(a, env));
            }
            case "batch": {
                Args a = new Args(command, rest, withCaps(NONE), NONE);
                if (!a.positional().isEmpty()) {
                    throw a.usage("takes no arguments (requests come on stdin), got '" + a.positional().get(0) + "'");
                }
                return Batch.run(in, out, budget(a, env));
            }
            default:
                break;
        }
        Args a;
        JsonObject req = new JsonObject();
        req.addProperty("op", command);
        switch (command) {
            case "apply" -> {
                a = new Args(command, rest, withCaps(Set.of("shape", "coord")), Set.of("json", "count", "stream"));
                req.addProperty("layout", a.joinedLayout());
                req.add("shape", CliText.integers("shape", a.required("shape")));
                req.add("coord", CliText.integers("coordinate", a.required("coord")));
                if (a.flag("count") && a.flag("stream")) {
                    throw a.usage("takes --count or --stream, not both");
                }
                if (a.flag("count") || a.flag("stream")) {
                    req.addProperty("mode", a.flag("count") ? "count" : "stream");
                }
            }
            case "inverse" -> {
                a = new Args(command, rest, withCaps(Set.of("shape", "point")), JSON);
                req.addProperty("layout", a.joinedLayout());
                req.add("shape", CliText.integers("shape", a.required("shape")));
                req.add("point", CliText.point(a.required("point")));
            }
            case "iters" -> {
                a = new Args(command, rest, withCaps(NONE), JSON);
                req.addProperty("layout", a.joinedLayout());
            }
            case "group" -> {
                a = new Args(command, rest, withCaps(Set.of("shape")), JSON);
                req.addProperty("layout", a.joinedLayout());
                req.add("shape", CliText.integers("shape", a.required("shape")));
            }
            case "canon", "storage" -> {
                a = new Args(command, rest, withCaps(NONE), JSON);
                req.addProperty("layout", a.joinedLayout());
            }
            case "pack", "unpack" -> {
                a = new Args(command, rest, withCaps(Set.of("num")), JSON);
                req.addProperty("layout", a.joinedLayout());
                JsonArray num = CliText.integers("num", a.required("num"));
                if (num.size() != 1) {
                    throw a.usage("--num takes one integer, got " + num.size());
                }
                req.add("num", num.get(0));
            }
            case "tile-to" -> {
                a = new Args(command, rest, withCaps(Set.of("shape", "to")), JSON);
                req.addProperty("op", "tile_to");
                req.addProperty("layout", a.joinedLayout());
                req.add("shape", CliText.integers("shape", a.required("shape")));
                req.add("to_shape", CliText.integers("shape", a.required("to")));
            }
            case "is-direct-sum-right", "is-direct-sum-left" -> {
                a = new Args(command, rest, withCaps(Set.of("sum", "interleaved", "shape")), JSON);
                req.addProperty("op", command.replace('-', '_'));
                req.addProperty("layout", a.joinedLayout());
                req.addProperty("sum", a.required("sum"));
                req.add("interleaved_shape", CliText.integers("shape", a.required("interleaved")));
                req.add("shape", CliText.integers("shape", a.required("shape")));
            }
            case "permute-by-groups" -> {
                a = new Args(command, rest, withCaps(Set.of("seps", "perm")), JSON);
                req.addProperty("op", "permute_by_groups");
                req.addProperty("layout", a.joinedLayout());
                req.add("seps", CliText.integers("seps", a.required("seps")));
                req.add("perm", CliText.integers("perm", a.required("perm")));
            }
            case "apply-to-shape" -> {
                a = new Args(command, rest, withCaps(Set.of("shape", "coord")), JSON);
                req.addProperty("op", "apply_to_shape");
                req.addProperty("layout", a.joinedLayout());
                req.add("shape", CliText.integers("shape", a.required("shape")));
                req.add("coord", CliText.integers("coordinate", a.required("coord")));
            }
            case "verify-well-formed" -> {
                a = new Args(command, rest, withCaps(NONE), JSON);
                req.addProperty("op", "verify_well_formed");
                req.addProperty("layout", a.joinedLayout());
            }
            case "equiv" -> {
                a = new Args(command, rest, withCaps(NONE), JSON);
                if (a.positional().size() != 2) {
                    throw a.usage("needs exactly two layouts, each quoted, got " + a.positional().size() + " words");
                }
                req.addProperty("a", a.positional().get(0));
                req.addProperty("b", a.positional().get(1));
            }
            case "slice" -> {
                a = new Args(command, rest, withCaps(Set.of("shape", "region")), JSON);
                req.addProperty("layout", a.joinedLayout());
                req.add("shape", CliText.integers("shape", a.required("shape")));
                req.add("region", CliText.region(a.required("region")));
            }
            case "tile" -> {
                a = new Args(command, rest, withCaps(Set.of("outer", "outer-shape", "inner", "inner-shape")), JSON);
                if (!a.positional().isEmpty()) {
                    throw a.usage("takes its layouts as --outer and --inner, not '" + a.positional().get(0) + "'");
                }
                req.addProperty("outer", a.required("outer"));
                req.add("outer_shape", CliText.integers("shape", a.required("outer-shape")));
                req.addProperty("inner", a.required("inner"));
                req.add("inner_shape", CliText.integers("shape", a.required("inner-shape")));
            }
            default -> throw new AxeException(AxeException.Kind.INVALID,
                    "unknown command 'axe layout " + command + "' (see: axe layout --help)");
        }
        Budget budget = budget(a, env);
        boolean json = a.flag("json");
        java.util.function.Consumer<JsonObject> partial = chunk -> print(out,
                capped(budget, json ? Json.write(chunk) : text(command, req, chunk)));
        try {
            String answer = budget.run(() -> {
                JsonObject o = Operations.answer(req, partial);
                return capped(budget, json ? Json.write(o) : text(command, req, o));
            });
            if (!answer.isEmpty() || !"stream".equals(modeOf(req))) {
                print(out, answer);
            }
        } catch (Batch.OutputClosed closed) {
            return Main.OUTPUT_CLOSED;
        }
        return 0;
    }

    private static String modeOf(JsonObject req) {
        return req.has("mode") ? req.get("mode").getAsString() : "list";
    }

    /** Prints one answer (or chunk) and stops the command when nobody reads the output any more. */
    private static void print(PrintStream out, String text) {
        out.println(text);
        out.flush();
        if (out.checkError()) {
            throw new Batch.OutputClosed();
        }
    }

    /** {@code text}, or a TOO_LARGE error when it has more bytes than the budget's answer cap. */
    static String capped(Budget budget, String text) {
        long bytes = Json.utf8Length(text);
        if (bytes > budget.maxAnswerBytes()) {
            throw Budget.tooLarge("the answer has " + bytes + " bytes, more than the cap of " + budget.maxAnswerBytes()
                    + " bytes (--max-answer-bytes)");
        }
        return text;
    }

    /** The human-readable form of an answer. */
    private static String text(String command, JsonObject req, JsonObject answer) {
        StringBuilder sb = new StringBuilder();
        switch (command) {
            case "apply" -> {
                String coord = tuple(req.getAsJsonArray("coord"));
                if (answer.has("points")) {
                    for (JsonElement p : answer.getAsJsonArray("points")) {
                        sb.append(sb.length() > 0 ? "\n" : "").append(coord).append(" -> ")
                                .append(pointText(p.getAsJsonObject()));
                    }
                } else {
                    long n = answer.get("count").getAsLong();
                    sb.append(coord).append(" -> ").append(n).append(n == 1 ? " point" : " points");
                }
            }
            case "inverse" -> sb.append(pointText(req.getAsJsonObject("point"))).append(" <- ")
                    .append(answer.get("coord").isJsonNull() ? "nothing (outside the image)"
                            : tuple(answer.getAsJsonArray("coord")));
            case "iters" -> {
                sb.append("shard   ").append(itersText(answer.getAsJsonArray("shard"))).append('\n');
                sb.append("replica ").append(itersText(answer.getAsJsonArray("replica"))).append('\n');
                sb.append("offset  ").append(pointText(answer.getAsJsonObject("offset")));
            }
            case "group" -> sb.append(answer.get("layout").getAsString()).append("\nseps ")
                    .append(answer.get("seps"));
            case "canon", "storage", "pack", "unpack", "permute-by-groups" -> sb.append(answer.get("layout").getAsString());
            case "is-direct-sum-right", "is-direct-sum-left" -> sb.append(answer.get("layout").isJsonNull()
                    ? "not a direct sum: " + answer.get("reason").getAsString() : answer.get("layout").getAsString());
            case "apply-to-shape" -> sb.append("values ").append(tuple(answer.getAsJsonArray("values")))
                    .append("\nover ").append(answer.get("layout").getAsString());
            case "verify-well-formed" -> sb.append(answer.get("well_formed").getAsBoolean() ? "well-formed"
                    : "not well-formed: " + answer.get("reason").getAsString());
            case "tile", "slice", "tile-to" -> sb.append(answer.get("layout").getAsString()).append("\nshape ")
                    .append(tuple(answer.getAsJsonArray("shape")));
            case "equiv" -> sb.append(answer.get("equivalent").getAsBoolean() ? "equivalent" : "not equivalent");
            default -> sb.append(Json.write(answer));
        }
        return sb.toString();
    }

    static String tuple(JsonArray a) {
        StringBuilder sb = new StringBuilder("(");
        for (int i = 0; i < a.size(); i++) {
            sb.append(i > 0 ? "," : "").append(a.get(i).getAsLong());
        }
        return sb.append(')').toString();
    }

    private static String pointText(JsonObject p) {
        StringBuilder sb = new StringBuilder("{");
        for (Map.Entry<String, JsonElement> e : p.entrySet()) {
            sb.append(sb.length() > 1 ? ", " : "").append(e.getKey()).append(':').append(e.getValue());
        }
        return sb.append('}').toString();
    }

    private static String itersText(JsonArray iters) {
        StringBuilder sb = new StringBuilder();
        for (JsonElement it : iters) {
            JsonArray t = it.getAsJsonArray();
            sb.append(sb.length() > 0 ? " " : "").append('(').append(t.get(0)).append(',').append(t.get(1))
                    .append('@').append(t.get(2).getAsString()).append(')');
        }
        return sb.length() == 0 ? "(none)" : sb.toString();
    }

    private static int intOption(Args a, String name, int fallback) {
        String v = a.option(name).orElse(null);
        if (v == null) {
            return fallback;
        }
        try {
            String t = CliText.trim(v);
            int n = t.chars().allMatch(ch -> ch >= '0' && ch <= '9') ? Integer.parseInt(t) : 0;
            if (n >= 1) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw a.usage("option --" + name + " must be a positive integer, got '" + v + "'");
    }

    /** {@code axe layout show}: summary, then the tile as a table (or JSON), optionally an SVG file. */
    static int show(Args a, PrintStream out, Budget budget) throws IOException {
        String[] texts = budget.run(() -> showTexts(a));
        String answer = capped(budget, texts[0]);
        if (texts[1] != null) {
            String svgPath = a.option("svg").get();
            Path p = Path.of(svgPath);
            if (p.getParent() != null) {
                Files.createDirectories(p.getParent());
            }
            Files.writeString(p, capped(budget, texts[1]), StandardCharsets.UTF_8);
        }
        out.print(answer);
        out.flush();
        return 0;
    }

    /** What show prints, and the SVG picture (null without --svg), computed under the caller's budget. */
    private static String[] showTexts(Args a) {
        String text = a.joinedLayout();
        Layout l;
        try {
            l = Layout.parse(text);
        } catch (AxeException e) {
            throw new AxeException(e.kind(), "show: " + e.getMessage(), e);
        }
        boolean defaulted = a.option("shape").isEmpty();
        Shape s;
        if (defaulted) {
            s = TileModel.defaultShape(l);
        } else {
            JsonArray dims = CliText.integers("shape", a.option("shape").get());
            long[] d = new long[dims.size()];
            for (int i = 0; i < d.length; i++) {
                d[i] = dims.get(i).getAsLong();
            }
            s = Shape.of(d);
        }
        TileModel model;
        try {
            model = TileModel.of(l, s, intOption(a, "max-rows", TileModel.DEFAULT_MAX_ROWS),
                    intOption(a, "max-cols", TileModel.DEFAULT_MAX_COLS));
        } catch (AxeException e) {
            throw new AxeException(e.kind(), "show " + l + " with shape " + s + ": " + e.getMessage(), e);
        }
        String svgPath = a.option("svg").orElse(null);
        String svg = svgPath == null ? null : SvgPicture.render(model);
        String printed;
        if (a.flag("json")) {
            printed = Json.write(showJson(model, svgPath)) + System.lineSeparator();
        } else {
            printed = summary(model, defaulted) + TextTable.render(model)
                    + (svgPath != null ? "svg written to " + svgPath + System.lineSeparator() : "");
        }
        return new String[] {printed, svg};
    }

    /** Layout, shape, size, per-axis sizes and spans, offset, injectivity. */
    static String summary(TileModel model, boolean defaultedShape) {
        Layout l = model.layout();
        StringBuilder sb = new StringBuilder();
        sb.append("layout   ").append(l).append('\n');
        sb.append("shape    ").append(model.shape())
                .append(defaultedShape ? "   (no --shape given: shard extents split into rows x columns)" : "")
                .append('\n');
        sb.append("size     ").append(l.size()).append(" elements");
        if (l.replicaCount() > 1) {
            sb.append(", ").append(l.replicaCount()).append(" replicas each");
        }
        sb.append('\n');
        StringBuilder sizes = new StringBuilder();
        StringBuilder spans = new StringBuilder();
        for (Map.Entry<Axis, Long> e : l.spans().entrySet()) {
            sizes.append(' ').append(e.getKey()).append(':').append(l.sizeOn(e.getKey()));
            spans.append(' ').append(e.getKey()).append(':').append(e.getValue());
        }
        sb.append("sizes   ").append(sizes.length() == 0 ? " (none)" : sizes).append('\n');
        sb.append("spans   ").append(spans.length() == 0 ? " (none)" : spans).append('\n');
        if (!l.offset().isEmpty()) {
            sb.append("offset   ").append(l.offsetPoint()).append('\n');
        }
        sb.append("shard    ").append(l.isShardInjective() ? "injective" : "not injective (several elements share a point)")
                .append('\n');
        return sb.toString();
    }

    private static JsonObject showJson(TileModel model, String svgPath) {
        Layout l = model.layout();
        JsonObject o = new JsonObject();
        o.addProperty("layout", l.toString());
        o.add("shape", Json.longs(model.shape().dims()));
        o.addProperty("size", l.size());
        JsonObject spans = new JsonObject();
        l.spans().forEach((a, v) -> spans.addProperty(a.name(), v));
        o.add("spans", spans);
        o.addProperty("rows", model.rows());
        o.addProperty("cols", model.cols());
        o.addProperty("capped", model.capped());
        JsonArray cells = new JsonArray();
        for (TileModel.Cell c : model.cells()) {
            JsonObject cell = new JsonObject();
            cell.add("coord", Json.longs(c.coord()));
            cell.add("points", Json.points(c.points()));
            cells.add(cell);
        }
        o.add("cells", cells);
        if (svgPath != null) {
            o.addProperty("svg", svgPath);
        }
        return o;
    }

    static String pointLine(List<Point> points) {
        StringBuilder sb = new StringBuilder();
        for (Point p : points) {
            sb.append(sb.length() > 0 ? " and " : "").append(p);
        }
        return sb.toString();
    }
}
