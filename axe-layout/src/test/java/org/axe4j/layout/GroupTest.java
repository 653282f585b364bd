package org.axe4j.layout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

class GroupTest {
    /**
     * D is additively separable over shape S iff D(c) = sum_k D(0,..,c_k,..,0) for every coordinate c;
     * a grouping exists exactly then (each block is then the layout of one dimension).
     */
    static boolean separable(Layout l, Shape s) {
        List<TreeSet<Point>> table = Oracle.table(l.withReplica(List.of()).withOffset(java.util.Map.of()));
        long[] dims = s.toArray();
        for (long x = 0; x < l.size(); x++) {
            long[] c = s.unflatten(x);
            Point sum = Point.ZERO;
            for (int k = 0; k < dims.length; k++) {
                long[] axisOnly = new long[dims.length];
                axisOnly[k] = c[k];
                sum = sum.plus(table.get((int) Oracle.flat(dims, axisOnly)).first());
            }
            if (!sum.equals(table.get((int) x).first())) {
                return false;
            }
        }
        return true;
    }

    @Test
    void groupPreservesTheMapAndFormsEachDimension() {
        int[] grouped = {0};
        Property.forAll("group(L,S) == L, blocks multiply to S", r -> {
            Layout l = RandomLayouts.layout(r);
            Shape s = RandomLayouts.shapeOf(r, l.size(), 4);
            Result<Grouped> g = Group.tryGroup(l, s);
            assertEquals(separable(l, s), g.isPresent(), l + " by " + s);
            if (g.isEmpty()) {
                return;
            }
            grouped[0]++;
            Grouped gr = g.get();
            assertTrue(Oracle.sameMap(l, gr.layout()), l + " -> " + gr.layout());
            assertEquals(l.replica(), gr.layout().replica());
            assertEquals(l.offset(), gr.layout().offset());
            for (int k = 0; k < s.rank(); k++) {
                long product = 1;
                List<Iter> block = gr.block(k);
                for (int i = 0; i < block.size(); i++) {
                    Iter it = block.get(i);
                    product *= it.extent();
                    assertTrue(it.extent() > 1, "extent-1 iter left in " + gr);
                    if (i > 0) {
                        Iter prev = block.get(i - 1);
                        boolean sameAxis = prev.axis().equals(it.axis());
                        assertFalse(sameAxis && prev.stride() == it.stride() * it.extent(),
                                "mergeable neighbours left in block " + k + " of " + gr);
                    }
                }
                assertEquals(s.dim(k), product);
            }
        });
        // Both outcomes must be exercised, or the property above could not fail.
        assertTrue(grouped[0] > Property.CASES / 4 && grouped[0] < Property.CASES, "grouped " + grouped[0]);
    }

    @Test
    void groupSplitsAndFusesAsInTheExamples() {
        Grouped g = Group.group(Layout.parse("S[(2,4):(4,1)]"), Shape.of(4, 2));
        assertEquals(Layout.parse("S[(4,2):(2,1)]"), g.layout());
        assertEquals(List.of(0, 1, 2), g.seps());
        // The tensor-core tile by its logical shape (8,16): rows are the first iter, columns the rest.
        Layout tc = Layout.parse(PaperExamplesTest.TENSOR_CORE);
        Grouped t = Group.group(tc, Shape.of(8, 16));
        assertEquals(List.of(0, 1, 4), t.seps());
        assertEquals(tc, t.layout());
        // A dimension of extent 1 has an empty block.
        Grouped one = Group.group(Layout.parse("S[6:1]"), Shape.of(1, 2, 1, 3));
        assertEquals(Layout.parse("S[(2,3):(3,1)]"), one.layout());
        assertEquals(List.of(0, 0, 1, 1, 2), one.seps());
    }

    @Test
    void groupFailureNamesTheDimension() {
        AxeException e = assertThrows(AxeException.class,
                () -> Group.group(Layout.parse("S[(3,2):(1,3)]"), Shape.of(2, 3)));
        assertEquals(AxeException.Kind.NOT_REPRESENTABLE, e.kind());
        assertEquals("layout S[(3,2):(1,3)] cannot be grouped by shape (2,3): dimension 0 (extent 2) would end inside"
                + " iter (3,1), whose extent 3 is neither a divisor nor a multiple of the 2 still needed", e.getMessage());
        assertEquals(e.getMessage(), Group.tryGroup(Layout.parse("S[(3,2):(1,3)]"), Shape.of(2, 3)).reason());
        AxeException notAdmitted = assertThrows(AxeException.class,
                () -> Group.group(Layout.parse("S[6:1]"), Shape.of(4)));
        assertEquals(AxeException.Kind.INVALID, notAdmitted.kind());
    }
}
