package org.axe4j.layout;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** AXE-SPEC section 8: the paper's worked examples with the values stated there. */
class PaperExamplesTest {
    static final String TENSOR_CORE = "S[(8,2,4,2):(4@laneid,1@warpid,1@laneid,1@reg)] + R[2:4@warpid] + 5@warpid";

    @Test
    void tensorCoreTileMapsCoordinate2_9ToTwoWarps() {
        Layout l = Layout.parse(TENSOR_CORE);
        Shape s = Shape.of(8, 16);
        // (2,9) -> x = 2*16+9 = 41 -> digits (2,1,0,1): laneid 2*4+0 = 8, warpid 1 (+5, +{0,4}), reg 1.
        assertEquals(List.of(Point.of("laneid", 8, "reg", 1, "warpid", 6),
                Point.of("laneid", 8, "reg", 1, "warpid", 10)), l.apply(s, 2, 9));
        for (Point p : l.apply(s, 2, 9)) {
            assertArrayEquals(new long[] {2, 9}, l.inverse(s, p).orElseThrow());
        }
    }

    @Test
    void meshLayoutsShardAndReplicate() {
        Layout sharded = Layout.parse("S[(2,32,2,64):(1@gpuid,128@m,2@gpuid,1@m)]");
        Shape s = Shape.of(64, 128);
        // Row 33 is in the second row block (gpuid +1); column 70 in the second column block (gpuid +2).
        assertEquals(List.of(Point.of("gpuid", 3, "m", 1 * 128 + 6)), sharded.apply(s, 33, 70));
        assertEquals(4, sharded.spanOn(Axis.of("gpuid")));
        Layout replicated = Layout.parse("S[(2,32,128):(1@gpuid,128@m,1@m)] + R[2:2@gpuid]");
        assertEquals(List.of(Point.of("gpuid", 1, "m", 128 + 70), Point.of("gpuid", 3, "m", 128 + 70)),
                replicated.apply(s, 33, 70));
    }

    @Test
    void trainiumAndTensorMemoryTiles() {
        Layout sbuf = Layout.parse("S[(2,128,512):(512@F,1@P,1@F)]");
        assertEquals(List.of(Point.of("P", 5, "F", 512 + 7)), sbuf.apply(Shape.of(256, 512), 128 + 5, 7));
        assertEquals(128, sbuf.spanOn(Axis.of("P")));
        assertEquals(1024, sbuf.spanOn(Axis.of("F")));
        Layout tmem = Layout.parse("S[(2,128,112):(112@Col,1@Lane,1@Col)]");
        assertEquals(List.of(Point.of("Lane", 3, "Col", 112 + 100)), tmem.apply(Shape.of(256, 112), 131, 100));
        assertTrue(tmem.isShardInjective());
    }

    @Test
    void columnMajor3x4() {
        Layout l = Layout.parse("S[(3,4):(1,3)]");
        Shape s = Shape.of(3, 4);
        for (long i = 0; i < 3; i++) {
            for (long j = 0; j < 4; j++) {
                assertEquals(List.of(Point.of("m", i + 3 * j)), l.apply(s, i, j));
            }
        }
    }
}
