package org.axe4j.layout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.NoSuchElementException;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The partial result: a value, or the reason there is none, through every operation that reads or maps it. */
class ResultTest {
    private final Result<Integer> three = Result.of(3);
    private final Result<Integer> none = Result.absent("extent %d is odd", 5);

    @Test
    void presentResultHasTheValueAndAnEmptyReason() {
        assertTrue(three.isPresent());
        assertFalse(three.isEmpty());
        assertEquals(3, three.get());
        assertEquals(3, three.orElseThrow());
        assertEquals("", three.reason());
        assertEquals(Optional.of(3), three.toOptional());
        assertEquals(3, three.orElse(7));
    }

    @Test
    void absentResultKeepsTheFormattedReason() {
        assertFalse(none.isPresent());
        assertTrue(none.isEmpty());
        assertEquals("extent 5 is odd", none.reason());
        assertEquals(Optional.empty(), none.toOptional());
        assertEquals(7, none.orElse(7));
        assertEquals(8, none.orElseGet(() -> 8));
        assertEquals("100% of a string is kept as it is", Result.absent("100% of a string is kept as it is").reason());
    }

    @Test
    void absentResultThrowsNotRepresentableOrTheCallersExceptionWithTheReason() {
        AxeException e = assertThrows(AxeException.class, none::orElseThrow);
        assertEquals(AxeException.Kind.NOT_REPRESENTABLE, e.kind());
        assertEquals("extent 5 is odd", e.getMessage());
        IllegalStateException mine = assertThrows(IllegalStateException.class,
                () -> none.orElseThrow(reason -> new IllegalStateException("declined: " + reason)));
        assertEquals("declined: extent 5 is odd", mine.getMessage());
        NoSuchElementException get = assertThrows(NoSuchElementException.class, none::get);
        assertEquals("extent 5 is odd", get.getMessage());
    }

    @Test
    void mapAndFlatMapCarryTheReasonThrough() {
        assertEquals(Result.of(6), three.map(x -> 2 * x));
        assertEquals(Result.absent("extent 5 is odd"), none.map(x -> 2 * x));
        assertEquals(Result.absent("3 is odd"), three.flatMap(x -> x % 2 == 0 ? Result.of(x / 2)
                : Result.absent("%d is odd", x)));
        assertEquals("extent 5 is odd", none.<Integer>flatMap(Result::of).reason());
        int[] seen = {0};
        three.ifPresent(x -> seen[0] += x);
        none.ifPresent(x -> seen[0] += 100);
        assertEquals(3, seen[0]);
    }

    @Test
    void equalityIsByValueOrByReason() {
        assertEquals(Result.of(3), three);
        assertEquals(Result.of(3).hashCode(), three.hashCode());
        assertEquals(Result.absent("extent 5 is odd"), none);
        assertNotEquals(Result.absent("another reason"), none);
        assertNotEquals(three, none);
        assertEquals("Result[3]", three.toString());
        assertEquals("Absent[extent 5 is odd]", none.toString());
    }

    @Test
    void nullValueOrReasonIsRejected() {
        assertThrows(NullPointerException.class, () -> Result.of(null));
        assertThrows(NullPointerException.class, () -> Result.absent((String) null));
    }
}
