package org.axe4j.passes.transform;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.axe4j.layout.Equivalence;
import org.axe4j.layout.Iter;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Shape;
import org.axe4j.schedules.trn.TrainiumMemory;
import org.junit.jupiter.api.Test;

/**
 * InferLayouts' Trainium layouts (axe-passes, which cannot depend on this module) against
 * {@link TrainiumMemory#annotated}, the layouts the Trainium rules' tests build: the same maps for every annotation
 * of 1- to 3-D shapes (a split partition dim's outer part outermost on F in both, as TIRx's trainium_layout puts it),
 * and every such layout stays within 128 partitions on P and F only.
 */
class InferredTrnLayoutsMatchMemoryTest {
    @Test
    void annotatedLayoutsAreTheSameMaps() {
        int compared = 0;
        List<Long> extents = List.of(1L, 4L, 128L, 256L);
        for (int rank = 1; rank <= 3; rank++) {
            for (int code = 0; code < Math.pow(extents.size(), rank); code++) {
                Long[] shape = new Long[rank];
                for (int d = 0, c = code; d < rank; d++, c /= extents.size()) {
                    shape[d] = extents.get(c % extents.size());
                }
                for (int bits = 0; bits < 1 << rank; bits++) {
                    StringBuilder pf = new StringBuilder();
                    for (int d = 0; d < rank; d++) {
                        pf.append((bits >> d & 1) == 1 ? 'P' : 'F');
                    }
                    String ann = pf.toString();
                    Layout mine;
                    try {
                        mine = TrnLayouts.annotated(ann, shape);
                    } catch (IllegalArgumentException e) {
                        continue;
                    }
                    Shape s = new Shape(List.of(shape));
                    Layout rules = TrainiumMemory.annotated(ann, s);
                    assertTrue(Equivalence.equivalent(mine, rules), ann + " " + s + ": " + mine + " vs " + rules);
                    assertTrue(TrainiumMemory.footprint(mine, 2, TrainiumMemory.Space.SBUF).partitions() <= 128
                            && List.of(TrainiumMemory.P, TrainiumMemory.F).containsAll(mine.axes()), ann + " " + s);
                    compared++;
                }
            }
        }
        assertTrue(compared > 100, "compared " + compared);
    }

    /** The PSUM form is the SBUF form with F cut into banks: reading a Bank step as 512 F elements gives it back. */
    @Test
    void psumFormsAreTheSbufFormsCutIntoBanks() {
        for (long cols : new long[] {1, 128, 512, 1024, 2048}) {
            Long[] shape = {128L, cols};
            Layout sbuf = TrnLayouts.annotated("PF", shape);
            Layout psum = TrnLayouts.toPsum(sbuf);
            var fp = TrainiumMemory.check("d", psum, new Shape(List.of(shape)), 4, TrainiumMemory.Space.PSUM);
            assertTrue(fp.banks() == (cols * 4 + 2047) / 2048, cols + ": " + psum + " spans " + fp.banks() + " banks");
            Layout flat = psum.withShard(psum.shard().stream().map(it -> it.axis().equals(TrnLayouts.BANK)
                    ? new Iter(it.extent(), it.stride() * TrnLayouts.BANK_ELEMENTS, TrnLayouts.F) : it).toList());
            assertTrue(Equivalence.equivalent(flat, sbuf), cols + ": " + psum + " vs " + sbuf);
            assertTrue(cols < 512 || psum.axes().contains(TrnLayouts.BANK), cols + ": " + psum);
        }
    }
}
