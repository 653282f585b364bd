package org.axe4j.layout.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.axe4j.layout.AxeException;
import org.axe4j.layout.Property;
import org.axe4j.layout.Shape;
import org.junit.jupiter.api.Test;

/** The CuTe text form: print then parse is the identity, and errors point at the column. */
class CuteLayoutTest {

    @Test
    void printThenParseIsTheIdentity() {
        Property.forAll("cute parse(print(c)) = c", random -> {
            CuteLayout c = CuteGen.layout(random);
            assertEquals(c, CuteLayout.parse(c.toString()));
            assertEquals(c.toString(), CuteLayout.parse(" " + c.toString().replace(",", " , ")).toString());
        });
    }

    @Test
    void leafAndTupleOfOneAreDifferentValuesWithTheSameMap() {
        CuteLayout leaf = CuteLayout.parse("8:1");
        CuteLayout tuple = CuteLayout.parse("(8):(1)");
        assertEquals("8:1", leaf.toString());
        assertEquals("(8):(1)", tuple.toString());
        assertEquals(Shape.of(8), leaf.topShape());
        assertEquals(Shape.of(8), tuple.topShape());
        for (long i = 0; i < 8; i++) {
            assertEquals(leaf.applyFlat(i), tuple.applyFlat(i));
        }
        assertTrue(!leaf.equals(tuple));
    }

    @Test
    void nestedExampleShapesAndSizes() {
        CuteLayout c = CuteLayout.parse("((2,2),4):((1,4),2)");
        assertEquals(Shape.of(4, 4), c.topShape());
        assertEquals(16, c.size());
        // (3, 1): mode 0 flat 3 = (1,1) -> 1 + 4; mode 1 -> 2.  Total 7.
        assertEquals(7, c.apply(3, 1));
        assertEquals(CuteLayout.tuple(CuteLayout.tuple(CuteLayout.of(2, 1), CuteLayout.of(2, 4)), CuteLayout.of(4, 2)), c);
    }

    @Test
    void errorsNameTheColumn() {
        assertParseError("(2,3):(1)", "column 7", "not congruent");
        assertParseError("(2,(3,4)):(1,2)", "column 14", "not congruent");
        assertParseError("(2,3):(1,2", "column 11", "expected ')'");
        assertParseError("(2,0):(1,2)", "column 4", "must be >= 1");
        assertParseError("(2,3)(1,2)", "column 6", "expected ':'");
        assertParseError("8:1 x", "column 5", "end of layout");
        assertParseError("8:a", "column 3", "expected an integer");
    }

    private static void assertParseError(String text, String column, String rule) {
        AxeException e = assertThrows(AxeException.class, () -> CuteLayout.parse(text));
        assertEquals(AxeException.Kind.PARSE, e.kind());
        assertTrue(e.getMessage().contains(column), e.getMessage());
        assertTrue(e.getMessage().contains(rule), e.getMessage());
    }

    @Test
    void applyRejectsCoordinatesOutsideTheShape() {
        CuteLayout c = CuteLayout.parse("(2,3):(1,2)");
        assertThrows(AxeException.class, () -> c.apply(2, 0));
        assertThrows(AxeException.class, () -> c.apply(0));
        assertThrows(AxeException.class, () -> c.applyFlat(6));
    }
}
