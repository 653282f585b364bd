package org.axe4j.bench;

import java.util.concurrent.TimeUnit;
import org.axe4j.layout.Canonicalize;
import org.axe4j.layout.Group;
import org.axe4j.layout.Grouped;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Point;
import org.axe4j.layout.Region;
import org.axe4j.layout.Shape;
import org.axe4j.layout.Slice;
import org.axe4j.layout.Tile;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Nanoseconds per operation of the layout algebra on the paper's layouts:
 * parse (text to value), apply (one logical coordinate to its set of points; coordinates cycle
 * through 64 spread over the tile), canonicalize, group (by the layout's logical shape), tile (as the
 * inner layout of a 2x2 grid {@code S[(2,2):(2,1)]}) and slice (the top-left quarter of the tile,
 * rounded up).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class LayoutBench {
    @Param({"tensor-core", "mesh-replicated", "trainium-sbuf", "column-major"})
    public String layout;

    private String text;
    private Layout value;
    private Shape shape;
    private long[][] coords;
    private int next;
    private Region quarter;

    private static final Layout GRID = Layout.parse("S[(2,2):(2,1)]");
    private static final Shape GRID_SHAPE = Shape.of(2, 2);

    @Setup
    public void setUp() {
        PaperLayouts.Case c = PaperLayouts.get(layout);
        text = c.text();
        value = Layout.parse(text);
        shape = c.shape();
        coords = new long[64][];
        for (int i = 0; i < coords.length; i++) {
            // 64 flat indices spread over the tile by a multiplicative step, so no pattern repeats per row.
            coords[i] = shape.unflatten((i * 2_654_435_761L) % shape.size());
        }
        long[][] box = new long[shape.rank()][];
        for (int k = 0; k < box.length; k++) {
            box[k] = new long[] {0, (shape.dim(k) + 1) / 2};
        }
        quarter = Region.of(box);
        Slice.slice(value, shape, quarter); // fails here, not inside the measurement, if not representable
    }

    @Benchmark
    public Layout parse() {
        return Layout.parse(text);
    }

    @Benchmark
    public java.util.List<Point> apply() {
        long[] c = coords[next];
        next = (next + 1) & 63;
        return value.apply(shape, c);
    }

    @Benchmark
    public Layout canonicalize() {
        return Canonicalize.canonicalize(value);
    }

    @Benchmark
    public Grouped group() {
        return Group.group(value, shape);
    }

    @Benchmark
    public Layout tile() {
        return Tile.tile(GRID, GRID_SHAPE, value, shape);
    }

    @Benchmark
    public Layout slice() {
        return Slice.slice(value, shape, quarter);
    }
}
