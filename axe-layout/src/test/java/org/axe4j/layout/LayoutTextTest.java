package org.axe4j.layout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

class LayoutTextTest {
    @Test
    void printThenParseGivesTheSameValue() {
        Property.forAll("parse(print(L)) == L", r -> {
            Layout l = RandomLayouts.layout(r);
            assertEquals(l, Layout.parse(l.toString()), l.toString());
        });
    }

    @Test
    void paperTensorCoreTileReadsAsWritten() {
        Layout l = Layout.parse("S[(8,2,4,2):(4@laneid,1@warpid,1@laneid,1@reg)] + R[2:4@warpid] + 5@warpid");
        assertEquals(List.of(Iter.of(8, 4, "laneid"), Iter.of(2, 1, "warpid"), Iter.of(4, 1, "laneid"),
                Iter.of(2, 1, "reg")), l.shard());
        assertEquals(List.of(Iter.of(2, 4, "warpid")), l.replica());
        assertEquals(5L, l.offsetOn(Axis.of("warpid")));
        assertEquals("S[(8,2,4,2):(4@laneid,1@warpid,1@laneid,1@reg)] + R[2:4@warpid] + 5@warpid", l.toString());
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "S[1:1]                          | S[1:1]",
        "S[(1):(1)]                      | S[(1):(1)]",
        "S[ 8 : 1 ]                      | S[8:1]",
        "S[(8):(1)]                      | S[8:1]",
        "S[4:1] + R[(2):(4@warpid)]      | S[4:1] + R[2:4@warpid]",
        "S[4:1] + 3 + 2                  | S[4:1] + 5",
        "S[4:1] - 3@laneid               | S[4:1] - 3@laneid",
        "S[4:1] + -3@laneid              | S[4:1] - 3@laneid",
        "S[4:1] + 3 - 3                  | S[4:1]",
        "S[(2,3):(-1@m,0@tx)]            | S[(2,3):(-1,0@tx)]",
        "S[4:1] + R[2:1@a] + R[3:2@b]    | S[4:1] + R[(2,3):(1@a,2@b)]",
    })
    void equivalentSpellingsPrintCanonically(String text, String printed) {
        assertEquals(printed, Layout.parse(text).toString());
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "S[(8,2):(1)]         | 2 extents but 1 strides                 | 11",
        "S[(8,2):(1,2]        | expected ')'                            | 13",
        "S(8):(1)             | expected '['                            | 2",
        "S[8:1] * 2           | expected '+', '-' or end of layout      | 8",
        "S[8:1@]              | expected an axis name after '@'         | 7",
        "S[8:x]               | expected an integer                     | 5",
        "S[8:1] - R[2:1]      | a replica term cannot be subtracted     | 10",
        "S[99999999999999999999:1] | integer does not fit in 64 bits    | 3",
        "''                   | expected 'S'                            | 1",
    })
    void malformedTextNamesTheColumn(String text, String what, int column) {
        AxeException e = assertThrows(AxeException.class, () -> Layout.parse(text));
        assertEquals(AxeException.Kind.PARSE, e.kind());
        assertTrue(e.getMessage().contains(what), e.getMessage());
        assertTrue(e.getMessage().contains("at column " + column + "\n"), e.getMessage());
        String[] lines = e.getMessage().split("\n");
        assertEquals(column - 1, lines[2].indexOf('^') - 2, e.getMessage());
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "S[(8,0):(1,1)]                       | extent (0) must be >= 1",
        "S[(8,-3):(1,1)]                      | extent (-3) must be >= 1",
        "S[(4294967296,4294967296):(1,1)]     | size of layout shard",
        "S[4611686018427387904:4]             | reach",
        "S[2:1] + R[(4294967296,4294967296):(0,0)] | replica count",
    })
    void invalidValuesAreRejectedWithTheRule(String text, String rule) {
        AxeException e = assertThrows(AxeException.class, () -> Layout.parse(text));
        assertEquals(AxeException.Kind.INVALID, e.kind());
        assertTrue(e.getMessage().contains(rule), e.getMessage());
    }

    @Test
    void axisNamesMustBeIdentifiers() {
        AxeException e = assertThrows(AxeException.class, () -> Axis.of("9lane"));
        assertTrue(e.getMessage().contains("axis name (9lane)"), e.getMessage());
    }
}
