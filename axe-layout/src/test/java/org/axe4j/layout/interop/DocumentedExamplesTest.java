package org.axe4j.layout.interop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Point;
import org.axe4j.layout.Shape;
import org.junit.jupiter.api.Test;

/** The tables of the package essay, checked value by value so that the text cannot drift from the code. */
class DocumentedExamplesTest {

    @Test
    void cuteFlatAndCoordinateReadings() {
        CuteLayout left = CuteLayout.parse("(2,3):(1,2)");
        Layout axe = CuteInterop.toAxe(left);
        Layout flat = CuteInterop.toAxeFlat(left);
        assertEquals("S[(3,2):(2,1)]", flat.toString());
        long[] axeFlat = {0, 2, 4, 1, 3, 5};
        for (int i = 0; i < 6; i++) {
            assertEquals(i, left.applyFlat(i));
            assertEquals(List.of(Point.of("m", axeFlat[i])), axe.apply(i));
            assertEquals(List.of(Point.of("m", i)), flat.apply(i));
            long r = i / 3;
            long c = i % 3;
            assertEquals(List.of(Point.of("m", left.apply(r, c))), axe.apply(Shape.of(2, 3), r, c));
        }
        assertEquals("S[(2,4,3):(1,6,2)]", CuteInterop.toAxe(CuteLayout.parse("(2,(3,4)):(1,(2,6))")).toString());
    }

    @Test
    void linearExampleTable() {
        Layout l = Layout.parse("S[(4,2):(1@laneid,1@reg)] + R[2:4@laneid]");
        Shape shape = Shape.of(4, 2);
        LinearLayout ll = LinearInterop.fromAxe(l, shape).orElseThrow();
        assertEquals("[reg: (0,1); laneid: (1,0) (2,0) (0,0)] -> (dim0:2, dim1:1)", ll.toString());
        long[][] coords = {{0, 0}, {2, 1}, {3, 1}};
        for (long[] c : coords) {
            assertEquals(List.of(Point.of("laneid", c[0], "reg", c[1]), Point.of("laneid", c[0] + 4, "reg", c[1])),
                    l.apply(shape, c));
            // ll takes (reg, laneid) in its input order.
            assertArrayEquals(c, ll.apply(c[1], c[0]));
            assertArrayEquals(c, ll.apply(c[1], c[0] + 4));
        }
    }

    @Test
    void shardingExampleTable() {
        DeviceMesh mesh = DeviceMesh.of(2);
        Shape shape = Shape.of(4, 4);
        assertEquals("S[(2,2,4):(1@gpuid,4,1)]", ShardingInterop.toAxe(ShardingSpec.parse(mesh, "[Shard(0)]"), shape)
                .toString());
        assertEquals("S[(4,4):(4,1)] + R[2:1@gpuid]",
                ShardingInterop.toAxe(ShardingSpec.parse(mesh, "[Replicate()]"), shape).toString());
        Layout byColumn = ShardingInterop.toAxe(ShardingSpec.parse(mesh, "[Shard(1)]"), shape);
        assertEquals("S[(4,2,2):(2,1@gpuid,1)]", byColumn.toString());
        for (long r = 0; r < 4; r++) {
            for (long c = 0; c < 4; c++) {
                assertEquals(List.of(Point.of("gpuid", c / 2, "m", 2 * r + c % 2)), byColumn.apply(shape, r, c));
            }
        }
    }
}
