package org.axe4j.bench;

import java.util.concurrent.TimeUnit;
import org.axe4j.layout.Group;
import org.axe4j.layout.Grouped;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Point;
import org.axe4j.layout.Shape;
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
 * through 64 spread over the tile), and group (by the layout's logical shape).
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
    public Grouped group() {
        return Group.group(value, shape);
    }
}
