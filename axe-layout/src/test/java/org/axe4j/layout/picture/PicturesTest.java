package org.axe4j.layout.picture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import javax.xml.parsers.DocumentBuilder;
import javax.xml.parsers.DocumentBuilderFactory;
import org.axe4j.layout.AxeException;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Oracle;
import org.axe4j.layout.Point;
import org.axe4j.layout.Property;
import org.axe4j.layout.RandomLayouts;
import org.axe4j.layout.Shape;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/** Both pictures show, for every drawn cell, exactly the set the brute-force oracle enumerates. */
class PicturesTest {
    static final String TENSOR_CORE = "S[(8,2,4,2):(4@laneid,1@warpid,1@laneid,1@reg)] + R[2:4@warpid] + 5@warpid";

    /** A random layout, an admitted shape of rank 0..3, and caps that sometimes cut the tile. */
    private static TileModel randomModel(Random r) {
        Layout l = RandomLayouts.layout(r);
        Shape s = r.nextInt(10) == 0 && l.size() == 1 ? Shape.of() : RandomLayouts.shapeOf(r, l.size(), 3);
        return TileModel.of(l, s, 1 + r.nextInt(12), 1 + r.nextInt(12));
    }

    /** Oracle's set at the flat index of row i, column j: x = i * cols + j (row-major, leading dims as rows). */
    private static Set<Point> expected(TileModel m, List<TreeSet<Point>> table, int i, int j) {
        return table.get((int) (i * m.cols() + j));
    }

    @Test
    void tableCellsListExactlyTheOraclePoints() {
        Property.forAll("text table cells = oracle sets", r -> {
            TileModel m = randomModel(r);
            Map<List<Integer>, Set<Point>> parsed = parseTable(TextTable.render(m), m);
            List<TreeSet<Point>> table = Oracle.table(m.layout());
            assertEquals(m.shownRows() * m.shownCols(), parsed.size(), "cells drawn");
            for (int i = 0; i < m.shownRows(); i++) {
                for (int j = 0; j < m.shownCols(); j++) {
                    assertEquals(expected(m, table, i, j), parsed.get(List.of(i, j)),
                            "cell " + i + "," + j + " of " + m.layout() + " shape " + m.shape());
                }
            }
        });
    }

    /** Reads the table back: a line with a row header starts a row; '|' separates cells; '-' lines are rules. */
    private static Map<List<Integer>, Set<Point>> parseTable(String text, TileModel m) {
        Map<List<Integer>, Set<Point>> cells = new HashMap<>();
        String[] lines = text.split("\n");
        int start = 0;
        while (!lines[start].startsWith("-")) {
            start++;
        }
        int row = -1;
        for (int k = start + 1; k < lines.length; k++) {
            if (lines[k].startsWith("-")) {
                continue;
            }
            String[] parts = lines[k].split("\\|", -1);
            if (!parts[0].isBlank()) {
                row++;
            }
            assertEquals(m.shownCols() + 2, parts.length, "segments of line '" + lines[k] + "'");
            for (int j = 0; j < m.shownCols(); j++) {
                Set<Point> set = cells.computeIfAbsent(List.of(row, j), x -> new TreeSet<>());
                if (!parts[j + 1].isBlank()) {
                    assertTrue(set.add(m.labels().parse(parts[j + 1])), "point listed twice in " + lines[k]);
                }
            }
        }
        return cells;
    }

    @Test
    void svgCellsListExactlyTheOraclePointsAndTheSvgIsWellFormed() throws Exception {
        DocumentBuilder xml = DocumentBuilderFactory.newInstance().newDocumentBuilder();
        Property.forAll("svg cells = oracle sets", r -> {
            TileModel m = randomModel(r);
            String svg = SvgPicture.render(m);
            Document doc = xml.parse(new ByteArrayInputStream(svg.getBytes(StandardCharsets.UTF_8)));
            assertEquals("svg", doc.getDocumentElement().getTagName());
            List<TreeSet<Point>> table = Oracle.table(m.layout());
            Set<List<Integer>> seen = new HashSet<>();
            NodeList groups = doc.getElementsByTagName("g");
            for (int g = 0; g < groups.getLength(); g++) {
                Element cell = (Element) groups.item(g);
                if (!cell.getAttribute("class").equals("cell")) {
                    continue;
                }
                long[] coord = coordinate(cell.getAttribute("data-coord"));
                long x = Oracle.flat(m.shape().toArray(), coord);
                int i = (int) (x / m.cols());
                int j = (int) (x % m.cols());
                assertTrue(seen.add(List.of(i, j)), "cell drawn twice: " + cell.getAttribute("data-coord"));
                Set<Point> want = expected(m, table, i, j);
                String[] title = cell.getElementsByTagName("title").item(0).getTextContent().split("\n");
                Set<Point> titled = new TreeSet<>();
                for (int t = 1; t < title.length; t++) {
                    titled.add(m.labels().parse(title[t]));
                }
                assertEquals(want, titled, "title of cell " + i + "," + j + " of " + m.layout());
                Set<Point> written = new TreeSet<>();
                boolean more = false;
                NodeList spans = cell.getElementsByTagName("tspan");
                for (int t = 0; t < spans.getLength(); t++) {
                    Element span = (Element) spans.item(t);
                    if (span.getAttribute("class").equals("more")) {
                        more = true;
                        assertEquals("+" + (want.size() - written.size()) + " more", span.getTextContent());
                    } else {
                        written.add(m.labels().parse(span.getTextContent()));
                    }
                }
                if (more) {
                    assertTrue(want.containsAll(written) && written.size() == SvgPicture.MAX_LINES - 1);
                } else {
                    assertEquals(want, written, "text of cell " + i + "," + j + " of " + m.layout());
                }
            }
            assertEquals(m.shownRows() * m.shownCols(), seen.size(), "cells drawn");
        });
    }

    private static long[] coordinate(String text) {
        if (text.isEmpty()) {
            return new long[0];
        }
        return java.util.Arrays.stream(text.split(",")).mapToLong(Long::parseLong).toArray();
    }

    @Test
    void labelsReadBackEvenWithCollidingAndDigitEndingAxisNames() {
        List<Axis> pool = List.of(Axis.of("laneid"), Axis.of("L"), Axis.of("warpid"), Axis.of("reg"), Axis.of("r"),
                Axis.of("x1"), Axis.of("x"), Axis.of("m"), Axis.of("gpuid"), Axis.of("P"));
        Property.forAll("parse(label(p)) = p", r -> {
            List<Axis> axes = new ArrayList<>();
            for (Axis a : pool) {
                if (r.nextBoolean()) {
                    axes.add(a);
                }
            }
            PointLabels labels = PointLabels.over(axes);
            TreeMap<Axis, Long> coords = new TreeMap<>();
            for (Axis a : axes) {
                coords.put(a, (long) r.nextInt(41) - 20);
            }
            Point p = new Point(coords);
            assertEquals(p, labels.parse(labels.label(p)), labels.legend());
        });
    }

    @Test
    void tensorCoreTileShowsBothWarpsOfElement2_9() {
        Layout l = Layout.parse(TENSOR_CORE);
        TileModel m = TileModel.of(l, Shape.of(8, 16));
        assertEquals("L = laneid, W = warpid, r = reg", m.labels().legend());
        // (2,9): laneid 2*4+0 = 8, reg 1, warpid 5+1 and 5+1+4.
        assertEquals(List.of(Point.of("laneid", 8, "reg", 1, "warpid", 6), Point.of("laneid", 8, "reg", 1, "warpid", 10)),
                m.cell(2, 9).points());
        String table = TextTable.render(m);
        String row2 = table.lines().filter(s -> s.startsWith("2 |")).findFirst().orElseThrow();
        assertEquals("L8 W6 r1", row2.split("\\|")[10].trim());
        assertTrue(table.contains("legend: L = laneid, W = warpid, r = reg"));
        assertTrue(SvgPicture.render(m).contains("<title>(2,9)\nL8 W6 r1\nL8 W10 r1</title>"));
    }

    @Test
    void defaultShapeSplitsTheShardIntoTheMostBalancedRowsAndColumns() {
        assertEquals(Shape.of(8, 16), TileModel.defaultShape(Layout.parse(TENSOR_CORE)));
        assertEquals(Shape.of(64, 128), TileModel.defaultShape(Layout.parse("S[(2,32,2,64):(1@gpuid,128@m,2@gpuid,1@m)]")));
        assertEquals(Shape.of(3, 4), TileModel.defaultShape(Layout.parse("S[(3,4):(1,3)]")));
        assertEquals(Shape.of(12), TileModel.defaultShape(Layout.parse("S[12:1]")));
        assertEquals(Shape.of(1), TileModel.defaultShape(Layout.parse("S[1:1]")));
    }

    @Test
    void bigTilesAreCappedAndSaySo() {
        TileModel m = TileModel.of(Layout.parse("S[(2,128,512):(512@F,1@P,1@F)]"), Shape.of(256, 512));
        assertTrue(m.capped());
        assertEquals(32 * 32, m.cells().size());
        assertEquals("showing 32 of 256 rows, 32 of 512 columns", m.capNote());
        String svg = SvgPicture.render(m);
        assertTrue(svg.contains("showing 32 of 256 rows, 32 of 512 columns"));
        assertFalse(TileModel.of(Layout.parse("S[(3,4):(1,3)]"), Shape.of(3, 4)).capped());
    }

    @Test
    void shapesThatTheLayoutDoesNotAdmitAreRejected() {
        AxeException e = assertThrows(AxeException.class,
                () -> TileModel.of(Layout.parse("S[(3,4):(1,3)]"), Shape.of(5, 2)));
        assertEquals(AxeException.Kind.INVALID, e.kind());
        assertTrue(e.getMessage().contains("(5,2)"), e.getMessage());
    }
}
