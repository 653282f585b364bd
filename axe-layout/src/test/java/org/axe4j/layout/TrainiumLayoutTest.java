package org.axe4j.layout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * TileLayout.trainium and to_psum against their definitions, element by element: the P coordinate is the row-major
 * index of the P dims' coordinates (a single P dim over 128: its coordinate mod 128), the F coordinate the row-major
 * index of (a split P dim's coordinate / 128, the F dims' coordinates); to_psum's answer, each Bank step read as 512
 * F elements, is the SBUF map again.
 */
class TrainiumLayoutTest {
    private static final Axis P = Axis.of("P");
    private static final Axis F = Axis.of("F");
    private static final Axis BANK = Axis.of("Bank");
    private static final long[] EXTENTS = {1, 2, 3, 4, 64, 128, 256, 384, 200};

    private static Point expected(String annotation, Shape shape, long[] c) {
        int pDims = (int) annotation.chars().filter(ch -> ch == 'P').count();
        long pTotal = 1;
        for (int d = 0; d < shape.rank(); d++) {
            pTotal *= annotation.charAt(d) == 'P' ? shape.dim(d) : 1;
        }
        boolean split = pDims == 1 && pTotal > 128;
        long p = 0;
        long f = 0;
        if (split) {
            f = c[annotation.indexOf('P')] / 128;
        }
        for (int d = 0; d < shape.rank(); d++) {
            if (annotation.charAt(d) == 'P') {
                p = split ? c[d] % 128 : p * shape.dim(d) + c[d];
            } else {
                f = f * shape.dim(d) + c[d];
            }
        }
        return Point.of("P", p, "F", f);
    }

    @Test
    void annotatedLayoutsMapEveryElementAsDefined() {
        int built = 0;
        int refused = 0;
        java.util.Random r = new java.util.Random(36);
        for (int n = 0; n < 300; n++) {
            int rank = 1 + r.nextInt(3);
            StringBuilder a = new StringBuilder();
            long[] dims = new long[rank];
            for (int d = 0; d < rank; d++) {
                a.append(r.nextBoolean() ? 'P' : 'F');
                dims[d] = EXTENTS[r.nextInt(EXTENTS.length)];
            }
            String annotation = a.toString();
            Shape shape = Shape.of(dims);
            if (shape.size() > 1 << 16) {
                continue;
            }
            long pTotal = 1;
            for (int d = 0; d < rank; d++) {
                pTotal *= annotation.charAt(d) == 'P' ? dims[d] : 1;
            }
            boolean allowed = pTotal <= 128 || annotation.chars().filter(ch -> ch == 'P').count() == 1
                    && pTotal % 128 == 0;
            if (!allowed) {
                assertThrows(AxeException.class, () -> TrainiumLayout.annotated(annotation, shape), annotation + shape);
                refused++;
                continue;
            }
            Layout l = TrainiumLayout.annotated(annotation, shape);
            for (long x = 0; x < shape.size(); x++) {
                long[] c = shape.unflatten(x);
                assertEquals(List.of(expected(annotation, shape, c)), l.apply(shape, c), annotation + " " + shape);
            }
            built++;
        }
        assertTrue(built > 150 && refused > 20, built + " built, " + refused + " refused");
        assertEquals(Layout.parse("S[(2,128,64):(64@F,1@P,1@F)]"), TrainiumLayout.annotated("PF", Shape.of(256, 64)));
        assertEquals(Layout.parse("S[(3,3,128,5):(5@F,15@F,1@P,1@F)]"),
                TrainiumLayout.annotated("FPF", Shape.of(3, 384, 5)));
    }

    @Test
    void psumFormReadBackIsTheSbufMap() {
        int converted = 0;
        for (String annotation : List.of("PF", "FP", "PFF", "FPF")) {
            for (long cols : new long[] {1, 4, 128, 512, 1024, 2048}) {
                long[] dims = new long[annotation.length()];
                for (int d = 0; d < dims.length; d++) {
                    dims[d] = annotation.charAt(d) == 'P' ? 128 : cols;
                }
                Shape shape = Shape.of(dims);
                if (shape.size() > 1 << 22) {
                    continue;
                }
                Layout sbuf = TrainiumLayout.annotated(annotation, shape);
                Layout psum;
                try {
                    psum = TrainiumLayout.toPsum(sbuf);
                } catch (AxeException e) {
                    assertTrue(e.getMessage().contains("no PSUM form"), e.getMessage());
                    continue;
                }
                assertTrue(psum.shard().stream().filter(it -> it.axis().equals(F))
                        .allMatch(it -> it.reach() < 512), psum.toString());
                List<Iter> back = new ArrayList<>();
                for (Iter it : psum.shard()) {
                    back.add(it.axis().equals(BANK) ? new Iter(it.extent(), it.stride() * 512, F) : it);
                }
                assertTrue(Equivalence.equivalent(sbuf, psum.withShard(back)), sbuf + " vs " + psum);
                converted++;
            }
        }
        assertTrue(converted >= 16, "converted " + converted);
        assertEquals(Layout.parse("S[(2,128,2,512):(2@Bank,1@P,1@Bank,1@F)]"),
                TrainiumLayout.annotated("PF", Shape.of(256, 1024), true));
    }

    @Test
    void whatHasNoPsumFormIsNamed() {
        AxeException e = assertThrows(AxeException.class, () -> TrainiumLayout.toPsum(Layout.parse("S[1000:1@F]")));
        assertTrue(e.getMessage().contains("no PSUM form"), e.getMessage());
        e = assertThrows(AxeException.class, () -> TrainiumLayout.toPsum(Layout.parse("S[8:3@F]")));
        assertTrue(e.getMessage().contains("F stride 3"), e.getMessage());
        e = assertThrows(AxeException.class, () -> TrainiumLayout.toPsum(Layout.parse("S[1024:1@F] + 5@F")));
        assertTrue(e.getMessage().contains("offset on F"), e.getMessage());
        assertEquals(Layout.parse("S[(128,2,512):(1@P,1@Bank,1@F)] + R[2:1@laneid] + 3@P"),
                TrainiumLayout.toPsum(Layout.parse("S[(128,1024):(1@P,1@F)] + R[2:1@laneid] + 3@P")));
        for (String[] bad : new String[][] {{"PX", "2,3"}, {"PF", "3"}, {"PF", "200,3"}, {"PPF", "64,4,2"}}) {
            long[] dims = java.util.Arrays.stream(bad[1].split(",")).mapToLong(Long::parseLong).toArray();
            AxeException a = assertThrows(AxeException.class, () -> TrainiumLayout.annotated(bad[0], Shape.of(dims)));
            assertTrue(a.getMessage().startsWith("trainium: annotation '" + bad[0] + "'"), a.getMessage());
        }
    }
}
