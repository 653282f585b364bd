package org.axe4j.schedules;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * TVM's element type names, bits per lane as TVM's {@code DataType} gives them (test_first_hour.py compares every
 * name with TVM's own parser), and names that are not types declined by name.
 */
class ElementTypeTest {
    @Test
    void tvmNamesParseWithTheirBitsAndFamily() {
        Object[][] table = {
            {"int8", ElementType.Family.INT, 8, 1}, {"uint32", ElementType.Family.UINT, 32, 1},
            {"float16", ElementType.Family.FLOAT, 16, 1}, {"bfloat16", ElementType.Family.FLOAT, 16, 1},
            {"float64", ElementType.Family.FLOAT, 64, 1}, {"bool", ElementType.Family.BOOL, 8, 1},
            {"float8_e4m3fn", ElementType.Family.FLOAT, 8, 1}, {"float8_e5m2", ElementType.Family.FLOAT, 8, 1},
            {"float8_e8m0fnu", ElementType.Family.FLOAT, 8, 1}, {"float6_e2m3fn", ElementType.Family.FLOAT, 6, 1},
            {"float4_e2m1fn", ElementType.Family.FLOAT, 4, 1}, {"float16x2", ElementType.Family.FLOAT, 16, 2},
            {"int4", ElementType.Family.INT, 4, 1},
        };
        for (Object[] row : table) {
            ElementType type = ElementType.parse((String) row[0]);
            assertEquals(row[1], type.family(), (String) row[0]);
            assertEquals(row[2], type.bits(), (String) row[0]);
            assertEquals(row[3], type.lanes(), (String) row[0]);
        }
        assertEquals(1, ElementType.parse("float8_e4m3fn").bytes());
        assertEquals(4, ElementType.parse("float16x2").bytes());
        assertFalse(ElementType.parse("float4_e2m1fn").wholeBytes());
        assertTrue(ElementType.parse("float8_e4m3fn").isFloat());
        assertFalse(ElementType.parse("int32").isFloat());
    }

    @Test
    void namesThatAreNotTypesAreDeclinedByName() {
        for (String name : new String[] {"float8", "float7_e4m3fn", "float16_e4m3fn", "int7", "bfloat32", "floaty",
            "bool8", "float8_e9m9", ""}) {
            Declined e = assertThrows(Declined.class, () -> ElementType.parse(name), name);
            assertTrue(e.getMessage().contains("element type '" + name + "' is not one axe4j's rules know"),
                    e.getMessage());
        }
    }
}
