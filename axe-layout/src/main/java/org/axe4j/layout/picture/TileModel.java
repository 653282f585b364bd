package org.axe4j.layout.picture;

import java.util.ArrayList;
import java.util.List;
import org.axe4j.layout.AxeException;
import org.axe4j.layout.Budget;
import org.axe4j.layout.Iter;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Point;
import org.axe4j.layout.Shape;

/**
 * The logical tile of a layout, as the pictures draw it: for an admitted shape {@code S} of rank m,
 *
 * <pre>
 *   rows = S_0 * ... * S_{m-2}      cols = S_{m-1}        (rank 1: one row; rank 0: one cell)
 *   cell (i, j) = coordinate c with row-major(c_0..c_{m-2}) = i and c_{m-1} = j,  points = L(c)
 * </pre>
 *
 * Only the first {@code shownRows x shownCols} cells are computed (a picture of a 256 x 512 tile is
 * capped, and says so); under a {@link Budget}, cells times points per cell must stay within its point cap. Every renderer reads this model, so they agree on what each cell holds.
 */
public record TileModel(Layout layout, Shape shape, long rows, long cols, int shownRows, int shownCols,
        List<Cell> cells, PointLabels labels) {

    /** One element of the tile: its place, logical coordinate, flat index and the set {@code L(c)}. */
    public record Cell(int row, int col, List<Long> coord, long index, List<Point> points) {
        public Cell {
            coord = List.copyOf(coord);
            points = List.copyOf(points);
        }
    }

    /** Rows and columns drawn at most, unless the caller asks otherwise. */
    public static final int DEFAULT_MAX_ROWS = 32;
    public static final int DEFAULT_MAX_COLS = 32;

    public TileModel {
        cells = List.copyOf(cells);
    }

    /** The model with the default caps. */
    public static TileModel of(Layout layout, Shape shape) {
        return of(layout, shape, DEFAULT_MAX_ROWS, DEFAULT_MAX_COLS);
    }

    /** The model of {@code layout} under {@code shape}, drawing at most {@code maxRows x maxCols} cells. */
    public static TileModel of(Layout layout, Shape shape, int maxRows, int maxCols) {
        if (maxRows < 1 || maxCols < 1) {
            throw new AxeException(AxeException.Kind.INVALID,
                    "picture of " + layout + ": cell caps (" + maxRows + " rows, " + maxCols + " cols) must be >= 1");
        }
        layout.requireAdmits(shape);
        int rank = shape.rank();
        long cols = rank == 0 ? 1 : shape.dim(rank - 1);
        long rows = rank == 0 ? 1 : shape.size() / cols;
        int shownRows = (int) Math.min(rows, maxRows);
        int shownCols = (int) Math.min(cols, maxCols);
        long perCell = layout.replicas().count();
        long cellCount = (long) shownRows * shownCols;
        Budget.requirePoints(cellCount > Long.MAX_VALUE / perCell ? Long.MAX_VALUE : cellCount * perCell,
                () -> "the picture of " + layout + " (" + shownRows + " x " + shownCols + " cells, " + perCell
                        + " points each)");
        List<Cell> cells = new ArrayList<>();
        for (int i = 0; i < shownRows; i++) {
            for (int j = 0; j < shownCols; j++) {
                long index = i * cols + j; // row-major: the leading dims form the row number
                long[] c = shape.unflatten(index);
                List<Long> coord = new ArrayList<>();
                for (long v : c) {
                    coord.add(v);
                }
                cells.add(new Cell(i, j, coord, index, layout.apply(index)));
            }
        }
        return new TileModel(layout, shape, rows, cols, shownRows, shownCols, cells, PointLabels.over(layout.axes()));
    }

    /**
     * A 2-D shape for a layout given without one: its shard extents split into a leading and a trailing
     * product, at the cut that makes the two closest (ties give more columns). The tensor-core tile
     * {@code (8,2,4,2)} becomes (8,16); the mesh layout {@code (2,32,2,64)} becomes (64,128).
     */
    public static Shape defaultShape(Layout layout) {
        List<Iter> d = layout.shard();
        if (d.isEmpty()) {
            return Shape.of(1);
        }
        long total = layout.size();
        long best = 1;
        double bestGap = Double.MAX_VALUE;
        long lead = 1;
        for (int k = 0; k < d.size(); k++) {
            lead *= d.get(k).extent();
            long trail = total / lead;
            double gap = Math.abs(Math.log((double) lead) - Math.log((double) trail));
            if (trail > 1 && gap < bestGap - 1e-9) {
                best = lead;
                bestGap = gap;
            }
        }
        return best == 1 ? Shape.of(total) : Shape.of(best, total / best);
    }

    /** True if the tile has more cells than are drawn. */
    public boolean capped() {
        return shownRows < rows || shownCols < cols;
    }

    /** The cell at row {@code i}, column {@code j} (both within the drawn part). */
    public Cell cell(int i, int j) {
        return cells.get(i * shownCols + j);
    }

    /** Row header: the leading coordinates {@code (c_0,...,c_{m-2})} of row {@code i}, or its number for rank <= 2. */
    public String rowLabel(int i) {
        int rank = shape.rank();
        if (rank <= 2) {
            return Long.toString(i);
        }
        List<Long> c = cell(i, 0).coord().subList(0, rank - 1);
        StringBuilder sb = new StringBuilder("(");
        for (int k = 0; k < c.size(); k++) {
            sb.append(k > 0 ? "," : "").append(c.get(k));
        }
        return sb.append(')').toString();
    }

    /** "showing 32 of 256 rows, 32 of 512 columns", or empty if nothing is cut. */
    public String capNote() {
        if (!capped()) {
            return "";
        }
        return "showing " + shownRows + " of " + rows + " rows, " + shownCols + " of " + cols + " columns";
    }

    /** Most points in any drawn cell (the replica count, unless replicas coincide). */
    public int maxPoints() {
        int n = 1;
        for (Cell c : cells) {
            n = Math.max(n, c.points().size());
        }
        return n;
    }
}
