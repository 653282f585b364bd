package org.axe4j.layout.picture;

import java.util.List;
import org.axe4j.layout.Point;

/**
 * The logical tile as a fixed-width text table: one column per index of the last dimension, one row
 * per index of the leading dimensions, and in each cell one line per point of {@code L(c)}:
 *
 * <pre>
 *   tile (8,16) of S[(8,2,4,2):(4@laneid,1@warpid,1@laneid,1@reg)] + R[2:4@warpid] + 5@warpid
 *   legend: L = laneid, W = warpid, r = reg
 *       |     0     |     1     | ...
 *   ----+-----------+-----------+
 *     0 | L0 W5 r0  | L0 W5 r1  |
 *       | L0 W9 r0  | L0 W9 r1  |
 * </pre>
 */
public final class TextTable {
    private TextTable() {}

    public static String render(TileModel model) {
        int lines = model.maxPoints();
        int width = 1;
        for (TileModel.Cell c : model.cells()) {
            for (Point p : c.points()) {
                width = Math.max(width, model.labels().label(p).length());
            }
        }
        for (int j = 0; j < model.shownCols(); j++) {
            width = Math.max(width, Integer.toString(j).length());
        }
        int head = 1;
        for (int i = 0; i < model.shownRows(); i++) {
            head = Math.max(head, model.rowLabel(i).length());
        }

        StringBuilder sb = new StringBuilder();
        sb.append("tile ").append(model.shape()).append(" of ").append(model.layout()).append('\n');
        sb.append("legend: ").append(model.labels().legend()).append('\n');
        if (model.capped()) {
            sb.append(model.capNote()).append('\n');
        }
        sb.append(pad("", head)).append(" |");
        for (int j = 0; j < model.shownCols(); j++) {
            sb.append(' ').append(center(Integer.toString(j), width)).append(" |");
        }
        sb.append('\n');
        String rule = rule(head, width, model.shownCols());
        sb.append(rule);
        for (int i = 0; i < model.shownRows(); i++) {
            for (int line = 0; line < lines; line++) {
                sb.append(pad(line == 0 ? model.rowLabel(i) : "", head)).append(" |");
                for (int j = 0; j < model.shownCols(); j++) {
                    List<Point> points = model.cell(i, j).points();
                    String text = line < points.size() ? model.labels().label(points.get(line)) : "";
                    sb.append(' ').append(padRight(text, width)).append(" |");
                }
                sb.append('\n');
            }
            if (lines > 1) {
                sb.append(rule); // replicas make rows several lines tall: separate them
            }
        }
        return sb.toString();
    }

    private static String rule(int head, int width, int cols) {
        StringBuilder sb = new StringBuilder("-".repeat(head + 1)).append('+');
        for (int j = 0; j < cols; j++) {
            sb.append("-".repeat(width + 2)).append('+');
        }
        return sb.append('\n').toString();
    }

    private static String pad(String s, int width) {
        return " ".repeat(width - s.length()) + s;
    }

    private static String padRight(String s, int width) {
        return s + " ".repeat(width - s.length());
    }

    private static String center(String s, int width) {
        int left = (width - s.length()) / 2;
        return " ".repeat(left) + s + " ".repeat(width - s.length() - left);
    }
}
