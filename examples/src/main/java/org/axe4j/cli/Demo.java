package org.axe4j.cli;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.axe4j.layout.Canonicalize;
import org.axe4j.layout.Equivalence;
import org.axe4j.layout.Group;
import org.axe4j.layout.Grouped;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Point;
import org.axe4j.layout.Region;
import org.axe4j.layout.Shape;
import org.axe4j.layout.Slice;
import org.axe4j.layout.Tile;
import org.axe4j.layout.picture.SvgPicture;
import org.axe4j.layout.picture.TextTable;
import org.axe4j.layout.picture.TileModel;

/**
 * {@code axe demo}: the worked examples of the Axe paper (AXE-SPEC section 8), each with coordinates
 * mapped through {@code L}, and an SVG picture of each tile written into a folder.
 */
final class Demo {
    /** One worked example: a layout, an admitted shape, and logical coordinates worth mapping. */
    record Example(String file, String title, String layout, Shape shape, List<long[]> coords) {}

    static final String TENSOR_CORE = "S[(8,2,4,2):(4@laneid,1@warpid,1@laneid,1@reg)] + R[2:4@warpid] + 5@warpid";

    static final List<Example> EXAMPLES = List.of(
            new Example("tensor-core", "Tensor-core tile 8x16: lanes and warps, replicated over warps 4 apart",
                    TENSOR_CORE, Shape.of(8, 16), List.of(new long[] {2, 9}, new long[] {0, 0}, new long[] {7, 15})),
            new Example("mesh-sharded", "64x128 on a 2x2 GPU mesh, fully sharded (as printed in the paper)",
                    "S[(2,32,2,64):(1@gpuid,128@m,2@gpuid,1@m)]", Shape.of(64, 128),
                    List.of(new long[] {33, 70}, new long[] {0, 127})),
            new Example("mesh-replicated", "64x128 on a 2x2 GPU mesh, sharded by rows, replicated over columns",
                    "S[(2,32,128):(1@gpuid,128@m,1@m)] + R[2:2@gpuid]", Shape.of(64, 128),
                    List.of(new long[] {33, 70})),
            new Example("trainium-sbuf", "Trainium SBUF tile 256x512: 128 partitions P, free axis F",
                    "S[(2,128,512):(512@F,1@P,1@F)]", Shape.of(256, 512), List.of(new long[] {133, 7})),
            new Example("blackwell-tmem", "Blackwell tensor memory 256x112: 128 lanes, columns",
                    "S[(2,128,112):(112@Col,1@Lane,1@Col)]", Shape.of(256, 112), List.of(new long[] {131, 100})),
            new Example("column-major-3x4", "Column-major 3x4 (not bit-linear: no linear layout expresses it)",
                    "S[(3,4):(1,3)]", Shape.of(3, 4), List.of(new long[] {1, 2})));

    private Demo() {}

    static int run(List<String> argList, PrintStream out) throws IOException {
        Args args = new Args("demo", argList, Set.of("out"), Set.of());
        Path dir = Path.of(args.option("out").orElse("out/demo"));
        Files.createDirectories(dir);
        List<String> written = new ArrayList<>();
        int n = 0;
        for (Example e : EXAMPLES) {
            Layout l = Layout.parse(e.layout());
            out.println("== " + (++n) + ". " + e.title());
            out.println("   layout " + l + "   shape " + e.shape() + "   size " + l.size() + "   spans " + spans(l));
            for (long[] c : e.coords()) {
                List<Point> points = l.apply(e.shape(), c);
                out.println("   " + tuple(c) + " -> " + LayoutCommands.pointLine(points));
                if (l.isShardInjective()) {
                    for (Point p : points) {
                        out.println("      backward: " + p + " -> "
                                + l.inverse(e.shape(), p).map(Demo::tuple).orElse("outside the image"));
                    }
                }
            }
            TileModel model = TileModel.of(l, e.shape(), 16, 16);
            Path svg = dir.resolve(e.file() + ".svg");
            Files.writeString(svg, SvgPicture.render(TileModel.of(l, e.shape())), StandardCharsets.UTF_8);
            written.add(svg.toString());
            if (e.file().equals("column-major-3x4") || e.file().equals("tensor-core")) {
                out.println();
                TextTable.render(model).lines().forEach(line -> out.println("   " + line));
            }
            out.println();
        }
        written.add(operations(out, dir));
        out.println("pictures: " + written.size() + " SVG files in " + dir + "/");
        for (String w : written) {
            out.println("   " + w);
        }
        return 0;
    }

    /** One example per operation of the algebra. */
    private static String operations(PrintStream out, Path dir) throws IOException {
        Layout tc = Layout.parse(TENSOR_CORE);
        Grouped g = Group.group(tc, Shape.of(8, 16));
        out.println("== group: the tensor-core tile refined for shape (8,16)");
        out.println("   " + g.layout() + "   block boundaries " + g.seps());
        for (int k = 0; k < g.shape().rank(); k++) {
            out.println("   dimension " + k + " (extent " + g.shape().dim(k) + "): " + g.block(k));
        }
        out.println();

        Layout messy = Layout.parse("S[(2,1,4,3):(12,5,3,1@warpid)] + R[(1,2):(9,-4@laneid)]");
        Layout canonical = Canonicalize.canonicalize(messy);
        out.println("== canonicalize: drop extent-1 iters, merge contiguous ones, flip negative replica strides");
        out.println("   " + messy + "\n   -> " + canonical);
        out.println("   equivalent: " + Equivalence.equivalent(messy, canonical) + "; equivalent to S[24:1]: "
                + Equivalence.equivalent(messy, Layout.parse("S[24:1]")));
        out.println();

        Layout warpTile = Layout.parse("S[(8,4,2):(4@laneid,1@laneid,1@reg)]");
        Layout warps = Layout.parse("S[(2,2):(2@warpid,1@warpid)]");
        Shape inner = Shape.of(8, 8);
        Shape outer = Shape.of(2, 2);
        Layout tiled = Tile.tile(warps, outer, warpTile, inner);
        Shape tiledShape = Tile.tiledShape(outer, inner);
        out.println("== tile: an 8x8 warp fragment (32 lanes x 2 registers) placed on a 2x2 grid of warps");
        out.println("   outer " + warps + " by " + outer + ",  inner " + warpTile + " by " + inner);
        out.println("   -> " + tiled + " by " + tiledShape);
        out.println("   (9,13) -> " + LayoutCommands.pointLine(tiled.apply(tiledShape, 9, 13))
                + "   (warp 1*2+1 = 3 holds the lower right 8x8 block)");
        out.println();

        Region right = Region.of(new long[] {0, 8}, new long[] {8, 16});
        Layout half = Slice.slice(tc, Shape.of(8, 16), right);
        out.println("== slice: the right half " + right + " of the tensor-core tile");
        out.println("   -> " + half + " by " + right.extents());
        out.println("   (2,1) -> " + LayoutCommands.pointLine(half.apply(right.extents(), 2, 1))
                + "   (the tile's (2,9), as above)");
        Path svg = dir.resolve("tiled-warps.svg");
        Files.writeString(svg, SvgPicture.render(TileModel.of(tiled, tiledShape)), StandardCharsets.UTF_8);
        out.println();
        return svg.toString();
    }

    private static String spans(Layout l) {
        StringBuilder sb = new StringBuilder();
        l.spans().forEach((a, v) -> sb.append(sb.length() > 0 ? " " : "").append(a).append(':').append(v));
        return sb.toString();
    }

    static String tuple(long[] c) {
        StringBuilder sb = new StringBuilder("(");
        for (int i = 0; i < c.length; i++) {
            sb.append(i > 0 ? "," : "").append(c[i]);
        }
        return sb.append(')').toString();
    }
}
