package org.axe4j.schedules.trn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Point;
import org.axe4j.layout.Property;
import org.axe4j.layout.Shape;
import org.junit.jupiter.api.Test;

/** Annotated layouts enumerate to a dense P x F box, and footprints and limits agree with enumeration. */
class TrainiumMemoryTest {

    @Test
    void annotatedLayoutsFillADensePartitionByFreeBox() {
        Property.forAll("PF annotation = dense P x F box", 2000, r -> {
            int rank = 1 + r.nextInt(3);
            StringBuilder pf = new StringBuilder();
            long[] dims = new long[rank];
            long p = 1;
            for (int d = 0; d < rank; d++) {
                boolean isP = r.nextInt(3) == 0;
                pf.append(isP ? 'P' : 'F');
                dims[d] = new long[] {1, 2, 3, 4, 8, 16}[r.nextInt(6)];
                p *= isP ? dims[d] : 1;
            }
            if (pf.indexOf("P") >= 0 && pf.indexOf("P") == pf.lastIndexOf("P") && r.nextInt(4) == 0) {
                dims[pf.indexOf("P")] = 128L * (1 + r.nextInt(3)); // one long P dim: split into F x 128
            }
            Shape shape = Shape.of(dims);
            if (pf.indexOf("P") != pf.lastIndexOf("P") && p > TrainiumMemory.PARTITIONS) {
                IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                        () -> TrainiumMemory.annotated(pf.toString(), shape));
                assertTrue(e.getMessage().contains(p + " partitions > 128"), e.getMessage());
                return;
            }
            Layout layout = TrainiumMemory.annotated(pf.toString(), shape);
            Set<List<Long>> seen = new HashSet<>();
            long maxP = 0;
            long maxF = 0;
            for (long x = 0; x < shape.size(); x++) {
                List<Point> pts = layout.apply(x);
                assertEquals(1, pts.size());
                Point pt = pts.get(0);
                assertTrue(seen.add(List.of(pt.get(TrainiumMemory.P), pt.get(TrainiumMemory.F))), layout + " twice");
                maxP = Math.max(maxP, pt.get(TrainiumMemory.P));
                maxF = Math.max(maxF, pt.get(TrainiumMemory.F));
            }
            assertTrue(maxP < TrainiumMemory.PARTITIONS, layout.toString());
            assertEquals(shape.size(), (maxP + 1) * (maxF + 1), "not dense: " + layout);
            TrainiumMemory.Footprint fp = TrainiumMemory.footprint(layout, 2, TrainiumMemory.Space.SBUF);
            assertEquals(maxP + 1, fp.partitions());
            assertEquals(2 * (maxF + 1), fp.freeBytes());
        });
    }

    /** AXE-SPEC's Trainium SBUF example: a (256, 512) tile with its rows on partitions. */
    @Test
    void theSpecsSbufTileIsThePfAnnotation() {
        assertEquals(Layout.parse("S[(2,128,512):(512@F,1@P,1@F)]"),
                TrainiumMemory.annotated("PF", Shape.of(256, 512)));
    }

    @Test
    void limitsAreReportedTogetherWithTheNumbers() {
        Layout wide = Layout.parse("S[(256,4):(1@P,1@F)]");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () ->
                TrainiumMemory.check("X", wide, Shape.of(256, 4), 4, TrainiumMemory.Space.SBUF));
        assertTrue(e.getMessage().contains("SBUF tile X (256,4) with layout S[(256,4):(1@P,1@F)]: 256 partitions > 128"),
                e.getMessage());
        Layout psum = Layout.parse("S[(128,8192):(1@P,1@F)]");
        e = assertThrows(IllegalArgumentException.class, () ->
                TrainiumMemory.check("acc", psum, Shape.of(128, 8192), 4, TrainiumMemory.Space.PSUM));
        assertTrue(e.getMessage().contains("16 PSUM banks > 8"), e.getMessage());
        assertEquals(2, TrainiumMemory.check("acc", Layout.parse("S[(128,1024):(1@P,1@F)]"), Shape.of(128, 1024), 4,
                TrainiumMemory.Space.PSUM).banks());
        Layout banked = Layout.parse("S[(128,2,600):(1@P,1@Bank,1@F)]");
        e = assertThrows(IllegalArgumentException.class, () ->
                TrainiumMemory.check("acc", banked, Shape.of(128, 2, 600), 4, TrainiumMemory.Space.PSUM));
        assertTrue(e.getMessage().contains("2400 bytes per partition in one bank > 2048"), e.getMessage());
        Layout lanes = Layout.parse("S[(128,4):(1@laneid,1@F)]");
        e = assertThrows(IllegalArgumentException.class, () ->
                TrainiumMemory.check("t", lanes, Shape.of(128, 4), 2, TrainiumMemory.Space.SBUF));
        assertTrue(e.getMessage().contains("axis laneid is not P or F"), e.getMessage());
        TrainiumMemory.Footprint ok = TrainiumMemory.check("acc", Layout.parse("S[(128,512):(1@P,1@F)]"),
                Shape.of(128, 512), 4, TrainiumMemory.Space.PSUM);
        assertEquals(new TrainiumMemory.Footprint(128, 2048, 1), ok);
        assertThrows(IllegalArgumentException.class, () -> TrainiumMemory.annotated("PP", Shape.of(64, 4)));
        assertThrows(IllegalArgumentException.class, () -> TrainiumMemory.annotated("PF", Shape.of(200, 4)));
    }
}
