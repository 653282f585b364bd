package org.axe4j.layout.interop;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.axe4j.layout.AxeException;

/**
 * What one mesh dimension does with a tensor (PyTorch DTensor placements; GSPMD / SBP {@code split(d)} and
 * {@code broadcast}): {@code Shard(d)} splits tensor dimension {@code d} across the mesh dimension's devices,
 * {@code Replicate()} gives every one of them a full copy.
 */
public sealed interface Placement permits Placement.Shard, Placement.Replicate {

    /** Tensor dimension {@code dim} is split in equal contiguous chunks, chunk i on mesh index i. */
    record Shard(int dim) implements Placement {
        public Shard {
            if (dim < 0) {
                throw new AxeException(AxeException.Kind.INVALID, "Shard dimension (" + dim + ") must be >= 0");
            }
        }

        @Override
        public String toString() {
            return "Shard(" + dim + ")";
        }
    }

    /** Every device along the mesh dimension holds the whole tensor (as far as the other dimensions allow). */
    record Replicate() implements Placement {
        @Override
        public String toString() {
            return "Replicate()";
        }
    }

    static Placement shard(int dim) {
        return new Shard(dim);
    }

    static Placement replicate() {
        return new Replicate();
    }

    /** {@code [Shard(0), Replicate()]}. */
    static String text(List<Placement> placements) {
        return placements.toString();
    }

    /**
     * Reads {@code [Shard(0), Replicate()]} (brackets optional, spaces ignored); OneFlow SBP spellings
     * {@code split(d)} and {@code broadcast} read as {@code Shard(d)} and {@code Replicate()}. A
     * {@code Partial()} placement (a pending reduction) is refused: no layout describes unreduced values.
     */
    static List<Placement> parseList(String text) {
        String body = text.strip();
        if (body.startsWith("[") && body.endsWith("]")) {
            body = body.substring(1, body.length() - 1);
        }
        List<Placement> out = new ArrayList<>();
        if (body.isBlank()) {
            return out;
        }
        Pattern one = Pattern.compile(
                "\\s*(?:(?:Shard|split)\\(\\s*(\\d{1,9})\\s*\\)|(Replicate\\(\\s*\\)|broadcast))\\s*");
        int column = text.indexOf(body) + 1;
        for (String part : body.split(",", -1)) {
            Matcher m = one.matcher(part);
            if (!m.matches()) {
                String rule = part.strip().startsWith("Partial") || part.strip().startsWith("partial")
                        ? "a Partial placement holds unreduced partial values, which no Axe layout describes"
                        : "expected Shard(d) or Replicate()";
                int at = column + part.length() - part.stripLeading().length();
                throw new AxeException(AxeException.Kind.PARSE, "cannot parse placement '" + part.strip() + "' at column "
                        + at + " of '" + text + "': " + rule);
            }
            out.add(m.group(1) != null ? new Shard(Integer.parseInt(m.group(1))) : new Replicate());
            column += part.length() + 1;
        }
        return List.copyOf(out);
    }
}
