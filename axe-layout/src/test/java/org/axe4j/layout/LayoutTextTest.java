package org.axe4j.layout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

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
        "S[2,3,4]                        | S[(2,3,4):(12,4,1)]",
        "S[ (2, 3, 4) ] + 1              | S[(2,3,4):(12,4,1)] + 1",
        "S[8]                            | S[8:1]",
        "64 + S[8:1]                     | S[8:1] + 64",
        "-4 + 3@laneid + S[8] + 4        | S[8:1] + 3@laneid",
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
        "64 S[8:1]            | expected '+' after a leading offset     | 4",
        "64 + R[2:1]          | expected 'S'                            | 6",
        "S[2,x]               | expected an integer                     | 5",
        "S[2,3:(1,1)]         | expected ']'                            | 6",
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
        "S[2:9223372036854775807] + 1         | layout S[2:9223372036854775807] + 1 reaches 9223372036854775808 at x = 1 on axis m",
        "S[2:9223372036854775806] + 1         | on axis m: span + offset overflows 64 bits",
        "S[2:9223372036854775806] + R[2:2]    | reaches 9223372036854775808 at x = 1 (farthest replica) on axis m: a coordinate overflows",
        "S[(2,2):(-9223372036854775807,-1)]   | reaches -9223372036854775808 at x = 3 on axis m",
        "S[1:1] - 9223372036854775807         | layout S[1:1] - 9223372036854775807 reaches -9223372036854775807",
    })
    void invalidValuesAreRejectedWithTheRule(String text, String rule) {
        AxeException e = assertThrows(AxeException.class, () -> Layout.parse(text));
        assertEquals(AxeException.Kind.INVALID, e.kind());
        assertTrue(e.getMessage().contains(rule), e.getMessage());
    }

    /** Every point of S[2:2^63-1] fits, its span (2^63) does not: apply answers, span names the layout. */
    @Test
    void aLayoutWhosePointsFitButNotItsSpanIsApplicable() {
        Layout l = Layout.parse("S[2:9223372036854775807]");
        assertEquals(List.of(Point.of("m", Long.MAX_VALUE)), l.apply(1));
        assertEquals(List.of(Point.ZERO), l.apply(0));
        assertEquals(l, Layout.parse(l.toString()));
        assertEquals(List.of(1L), l.preimages(Point.of("m", Long.MAX_VALUE)));
        AxeException span = assertThrows(AxeException.class, () -> l.spanOn(Axis.M));
        assertTrue(span.getMessage().contains("span of S[2:9223372036854775807] on axis m overflows 64 bits"),
                span.getMessage());
        assertEquals(l, Canonicalize.canonicalize(l));
        assertTrue(Equivalence.equivalent(l, Layout.parse("S[2:9223372036854775807] + 0")));
        assertEquals(Layout.parse("S[1:1]"), Slice.slice(l, Shape.of(2), Region.of(new long[] {0, 1})));
        // Its second element alone would be S[1:1] + 2^63-1, whose span + offset (2^63) is refused by name.
        AxeException second = assertThrows(AxeException.class,
                () -> Slice.slice(l, Shape.of(2), Region.of(new long[] {1, 2})));
        assertTrue(second.getMessage().contains("span + offset overflows 64 bits"), second.getMessage());
        assertEquals(l, Group.group(l, Shape.of(2)).layout());
        Layout down = Layout.parse("S[2:-9223372036854775807]");
        assertEquals(List.of(Point.of("m", -Long.MAX_VALUE)), down.apply(1));
        assertThrows(AxeException.class, () -> down.spanOn(Axis.M));
    }

    @Test
    void theLargestSpanThatFitsIsKeptExactly() {
        Layout l = Layout.parse("S[2:9223372036854775806]");
        assertEquals(Long.MAX_VALUE, l.spanOn(Axis.M));
        assertEquals(l, Layout.parse(l.toString()));
        Layout negative = Layout.parse("S[2:-4611686018427387903] + R[2:4611686018427387903]");
        assertEquals(Long.MAX_VALUE, negative.spanOn(Axis.M));
        assertEquals(List.of(Point.of("m", -4611686018427387903L), Point.ZERO), negative.apply(1));
    }

    /** The grammar is ASCII: digits 0-9, blanks space, tab, CR, LF; anything else is named by its code point. */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "S[(\u0668,\u0661\u0666):(\u0661\u0666,\u0661)] | U+0668 | 4",
        "S[(\uff18,\uff11\uff16):(16,1)]                  | U+FF18 | 4",
        "S[8:1]\u2003+ 2                                    | U+2003 | 7",
        "S[8:\u00a01]                                       | U+00A0 | 5",
        "S[8:1@lane\u00e9]                                  | U+00E9 | 11",
        "S[8:1] + 2@\u03bb                                   | U+03BB | 12",
        "S[8:\u00001]                                        | U+0000 | 5",
    })
    void nonAsciiDigitsAndBlanksAreRejected(String escaped, String what, int column) {
        String text = unescape(escaped.strip());
        AxeException e = assertThrows(AxeException.class, () -> Layout.parse(text), text);
        assertEquals(AxeException.Kind.PARSE, e.kind());
        assertTrue(e.getMessage().contains(what), e.getMessage());
        assertTrue(e.getMessage().contains("at column " + column + "\n"), e.getMessage());
    }

    @Test
    void asciiBlanksAreSkipped() {
        assertEquals(Layout.parse("S[(8,16):(16,1)] + 2"), Layout.parse("S[ (8,\t16) :\r\n(16, 1)]\t+  2"));
    }

    @Test
    void longTextShowsAWindowAroundTheError() {
        String text = "S[(" + "1,".repeat(5000) + "x):(1)]";
        AxeException e = assertThrows(AxeException.class, () -> Layout.parse(text));
        assertTrue(e.getMessage().length() < 400, e.getMessage());
        String[] lines = e.getMessage().split("\n");
        assertEquals('x', lines[1].charAt(lines[2].indexOf('^')), e.getMessage());
    }

    private static String unescape(String s) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < s.length(); i++) {
            if (s.startsWith("\\u", i)) {
                sb.append((char) Integer.parseInt(s.substring(i + 2, i + 6), 16));
                i += 5;
            } else {
                sb.append(s.charAt(i));
            }
        }
        return sb.toString();
    }

    @Test
    void axisNamesMustBeIdentifiers() {
        AxeException e = assertThrows(AxeException.class, () -> Axis.of("9lane"));
        assertTrue(e.getMessage().contains("axis name (9lane)"), e.getMessage());
    }
}
