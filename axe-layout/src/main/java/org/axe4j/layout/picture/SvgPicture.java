package org.axe4j.layout.picture;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.axe4j.layout.Axis;
import org.axe4j.layout.AxisKind;
import org.axe4j.layout.Point;

/**
 * The logical tile as an SVG picture: one rectangle per drawn cell, filled by the cell's execution
 * coordinates and labelled with every point of {@code L(c)}.
 *
 * <pre>
 *   colour axes = thread and device axes of the layout, innermost first
 *                 (none: the axis with the smallest span, e.g. P of a Trainium SBUF tile)
 *   hue         = 137.5 deg * k,  k = mixed-radix index of the outer colour axes (warps, devices)
 *   lightness   = 90% .. 60% along the innermost colour axis (lanes)
 * </pre>
 *
 * The colour comes from a cell's first point; replicas are listed in the cell (at most
 * {@link #MAX_LINES} lines, then "+n more") and all of them in the cell's {@code <title>}, one per
 * line after the coordinate. Each cell is a {@code <g class="cell" data-coord="i,j,..">}.
 */
public final class SvgPicture {
    /** Points written inside a cell; further replicas go to the cell's title only. */
    public static final int MAX_LINES = 4;

    private static final double CHAR_W = 6.8;
    private static final int LINE_H = 13;
    private static final int PAD = 6;

    private SvgPicture() {}

    public static String render(TileModel model) {
        Colours colours = new Colours(model);
        PointLabels labels = model.labels();
        int labelChars = 1;
        for (TileModel.Cell c : model.cells()) {
            for (Point p : c.points()) {
                labelChars = Math.max(labelChars, labels.label(p).length());
            }
        }
        int lines = Math.min(model.maxPoints(), MAX_LINES);
        double cellW = Math.max(28, labelChars * CHAR_W + 2 * PAD);
        double cellH = lines * LINE_H + 2 * PAD;
        int rowHeadChars = 1;
        for (int i = 0; i < model.shownRows(); i++) {
            rowHeadChars = Math.max(rowHeadChars, model.rowLabel(i).length());
        }
        double left = 12 + rowHeadChars * CHAR_W + 8;

        List<String> header = new ArrayList<>();
        header.add(model.layout().toString());
        StringBuilder stats = new StringBuilder("shape " + model.shape() + "   size " + model.layout().size());
        stats.append("   replicas ").append(model.layout().replicaCount()).append("   spans");
        model.layout().spans().forEach((a, s) -> stats.append(' ').append(a).append(':').append(s));
        header.add(stats.toString());
        header.add("legend: " + labels.legend());
        header.add(colours.describe());
        if (model.capped()) {
            header.add(model.capNote() + " (cells beyond are not drawn)");
        }
        double top = 16 + header.size() * 17 + 8;
        double keyTop = top + 18 + model.shownRows() * cellH + 14;
        List<String> key = colours.key();
        double width = left + model.shownCols() * cellW + 12;
        for (String h : header) {
            width = Math.max(width, 12 + h.length() * CHAR_W + 12);
        }
        width = Math.max(width, 12 + Math.min(key.size(), 8) * 110 + 12);
        double height = keyTop + ((key.size() + 7) / 8) * 20 + 10;

        StringBuilder sb = new StringBuilder();
        sb.append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        sb.append(String.format(Locale.ROOT,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\""
                        + " font-family=\"DejaVu Sans Mono, monospace\" font-size=\"11\">\n",
                width, height, width, height));
        sb.append("<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n");
        for (int h = 0; h < header.size(); h++) {
            sb.append(String.format(Locale.ROOT, "<text x=\"12\" y=\"%d\"%s>%s</text>\n", 20 + h * 17,
                    h == 0 ? " font-weight=\"bold\" font-size=\"12\"" : "", escape(header.get(h))));
        }
        for (int j = 0; j < model.shownCols(); j++) {
            sb.append(String.format(Locale.ROOT, "<text class=\"col\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\""
                    + " fill=\"#555555\">%d</text>\n", left + j * cellW + cellW / 2, top + 12, j));
        }
        for (int i = 0; i < model.shownRows(); i++) {
            double y = top + 18 + i * cellH;
            sb.append(String.format(Locale.ROOT, "<text class=\"row\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\""
                    + " fill=\"#555555\">%s</text>\n", left - 6, y + cellH / 2 + 4, escape(model.rowLabel(i))));
            for (int j = 0; j < model.shownCols(); j++) {
                cell(sb, model, model.cell(i, j), colours, left + j * cellW, y, cellW, cellH);
            }
        }
        for (int k = 0; k < key.size(); k++) {
            double x = 12 + (k % 8) * 110;
            double y = keyTop + (k / 8) * 20;
            String[] parts = key.get(k).split("=", 2);
            sb.append(String.format(Locale.ROOT, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"14\" fill=\"%s\""
                    + " stroke=\"#555555\" stroke-width=\"0.5\"/>", x, y, parts[1]));
            sb.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", x + 18, y + 11,
                    escape(parts[0])));
        }
        sb.append("</svg>\n");
        return sb.toString();
    }

    private static void cell(StringBuilder sb, TileModel model, TileModel.Cell c, Colours colours,
            double x, double y, double w, double h) {
        PointLabels labels = model.labels();
        StringBuilder coord = new StringBuilder();
        for (long v : c.coord()) {
            coord.append(coord.length() > 0 ? "," : "").append(v);
        }
        sb.append("<g class=\"cell\" data-coord=\"").append(coord).append("\" data-index=\"").append(c.index())
                .append("\">");
        sb.append(String.format(Locale.ROOT, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\""
                + " stroke=\"#444444\" stroke-width=\"0.6\"/>", x, y, w, h, colours.fill(c.points().get(0))));
        StringBuilder title = new StringBuilder("(" + coord + ")");
        for (Point p : c.points()) {
            title.append('\n').append(labels.label(p));
        }
        sb.append("<title>").append(escape(title.toString())).append("</title>");
        sb.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#111111\">", x + PAD, y + PAD));
        List<Point> points = c.points();
        int shown = points.size() <= MAX_LINES ? points.size() : MAX_LINES - 1;
        for (int k = 0; k < shown; k++) {
            sb.append(String.format(Locale.ROOT, "<tspan class=\"point\" x=\"%.1f\" dy=\"%d\">%s</tspan>",
                    x + PAD, k == 0 ? LINE_H - 3 : LINE_H, escape(labels.label(points.get(k)))));
        }
        if (shown < points.size()) {
            sb.append(String.format(Locale.ROOT, "<tspan class=\"more\" x=\"%.1f\" dy=\"%d\">+%d more</tspan>",
                    x + PAD, LINE_H, points.size() - shown));
        }
        sb.append("</text></g>\n");
    }

    static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }

    /** The fill colour of a cell from the coordinates of its first point on the colour axes. */
    private static final class Colours {
        private final List<Axis> axes;
        private final Map<Axis, long[]> ranges = new TreeMap<>();
        private final boolean memoryOnly;
        private final PointLabels labels;

        Colours(TileModel model) {
            labels = model.labels();
            List<Axis> exec = new ArrayList<>();
            for (Axis a : model.labels().axes()) {
                if (a.kind() == AxisKind.THREAD || a.kind() == AxisKind.DEVICE) {
                    exec.add(a);
                }
            }
            memoryOnly = exec.isEmpty();
            if (memoryOnly) {
                Axis narrowest = null;
                for (Map.Entry<Axis, Long> e : model.layout().spans().entrySet()) {
                    if (e.getValue() > 1 && (narrowest == null || e.getValue() < model.layout().spanOn(narrowest))) {
                        narrowest = e.getKey();
                    }
                }
                if (narrowest != null) {
                    exec.add(narrowest);
                }
            }
            axes = exec;
            for (Axis a : axes) {
                long lo = Long.MAX_VALUE;
                long hi = Long.MIN_VALUE;
                for (TileModel.Cell c : model.cells()) {
                    long v = c.points().get(0).get(a);
                    lo = Math.min(lo, v);
                    hi = Math.max(hi, v);
                }
                ranges.put(a, new long[] {lo, hi});
            }
        }

        String describe() {
            if (axes.isEmpty()) {
                return "colour: one colour (the layout has no axis to tell cells apart)";
            }
            if (axes.size() == 1) {
                return "colour: hue by " + axes.get(0) + (memoryOnly ? " (no thread axis)" : "");
            }
            return "colour: hue by " + axes.subList(1, axes.size()) + ", shade by " + axes.get(0)
                    + " (of each cell's first point)";
        }

        /** Hue key: mixed-radix index of the outer colour axes (all of them when there is only one). */
        private long hueKey(Point p) {
            List<Axis> outer = axes.size() == 1 ? axes : axes.subList(1, axes.size());
            long key = 0;
            for (int k = outer.size() - 1; k >= 0; k--) {
                long[] r = ranges.get(outer.get(k));
                key = key * (r[1] - r[0] + 1) + (p.get(outer.get(k)) - r[0]);
            }
            return key;
        }

        String fill(Point p) {
            if (axes.isEmpty()) {
                return "#cfe2f3";
            }
            long key = hueKey(p);
            double hue = memoryOnly ? 240.0 * key / Math.max(1, span(axes.get(0))) : (key * 137.508) % 360;
            double light = 0.80;
            if (axes.size() > 1) {
                long[] r = ranges.get(axes.get(0));
                double t = r[1] == r[0] ? 0 : (double) (p.get(axes.get(0)) - r[0]) / (r[1] - r[0]);
                light = 0.90 - 0.30 * t;
            }
            return hsl(hue, 0.65, light);
        }

        private long span(Axis a) {
            long[] r = ranges.get(a);
            return r[1] - r[0];
        }

        /** Swatches "W5=#rrggbb" for the hue values present (at most 24), lightest shade. */
        List<String> key() {
            List<String> out = new ArrayList<>();
            if (axes.isEmpty() || memoryOnly) {
                return out;
            }
            List<Axis> outer = axes.size() == 1 ? axes : axes.subList(1, axes.size());
            long count = 1;
            for (Axis a : outer) {
                long[] r = ranges.get(a);
                count *= r[1] - r[0] + 1;
                if (count > 24) {
                    return out;
                }
            }
            for (long key = 0; key < count; key++) {
                StringBuilder name = new StringBuilder();
                long rest = key;
                for (Axis a : outer) {
                    long[] r = ranges.get(a);
                    long n = r[1] - r[0] + 1;
                    name.append(name.length() > 0 ? " " : "").append(labels.shortName(a)).append(r[0] + rest % n);
                    rest /= n;
                }
                out.add(name + "=" + hsl((key * 137.508) % 360, 0.65, 0.80));
            }
            return out;
        }

        private static String hsl(double h, double s, double l) {
            double c = (1 - Math.abs(2 * l - 1)) * s;
            double hp = h / 60.0;
            double x = c * (1 - Math.abs(hp % 2 - 1));
            double[] rgb = hp < 1 ? new double[] {c, x, 0} : hp < 2 ? new double[] {x, c, 0}
                    : hp < 3 ? new double[] {0, c, x} : hp < 4 ? new double[] {0, x, c}
                    : hp < 5 ? new double[] {x, 0, c} : new double[] {c, 0, x};
            double m = l - c / 2;
            return String.format(Locale.ROOT, "#%02x%02x%02x", Math.round((rgb[0] + m) * 255),
                    Math.round((rgb[1] + m) * 255), Math.round((rgb[2] + m) * 255));
        }
    }
}
