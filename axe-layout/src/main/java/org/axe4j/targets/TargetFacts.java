package org.axe4j.targets;

import java.util.Map;

/**
 * The scalar hardware facts Python needs, as the JSON of {@code python/axe4j/targets.json}: generated from this
 * class ({@code make targets-json}, {@link #main}), never written by hand; {@code TargetFactsTest} fails when the
 * file and this class disagree.
 */
public final class TargetFacts {
    private TargetFacts() {}

    /** {"cuda": {...}, "trn": {...}} with keys in a fixed order, two-space indented, one fact per line. */
    public static String json() {
        StringBuilder out = new StringBuilder("{\n");
        section(out, "cuda", Map.of("lanes", MatrixFragments.LANES), false);
        section(out, "trn", Trainium.facts(), true);
        return out.append("}\n").toString();
    }

    private static void section(StringBuilder out, String name, Map<String, Long> facts, boolean last) {
        out.append("  \"").append(name).append("\": {\n");
        int i = 0;
        for (Map.Entry<String, Long> fact : facts.entrySet()) {
            out.append("    \"").append(fact.getKey()).append("\": ").append(fact.getValue())
                    .append(++i < facts.size() ? ",\n" : "\n");
        }
        out.append(last ? "  }\n" : "  },\n");
    }

    /** Prints {@link #json()} (written to python/axe4j/targets.json by {@code make targets-json}). */
    public static void main(String[] args) {
        System.out.print(json());
    }
}
