package org.axe4j.layout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.math.BigInteger;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The checked arithmetic every derived quantity goes through, against exact BigInteger arithmetic at the 64-bit edge. */
class ChecksTest {
    private static final BigInteger MIN = BigInteger.valueOf(Long.MIN_VALUE);
    private static final BigInteger MAX = BigInteger.valueOf(Long.MAX_VALUE);

    /** Operands that crowd the edges: 0, +-1, powers of two, near +-2^63, and random ones. */
    static long edge(Random r) {
        return switch (r.nextInt(6)) {
            case 0 -> r.nextInt(5) - 2;
            case 1 -> (r.nextBoolean() ? 1 : -1) * (1L << r.nextInt(63));
            case 2 -> Long.MAX_VALUE - r.nextInt(4);
            case 3 -> Long.MIN_VALUE + r.nextInt(4);
            case 4 -> (r.nextBoolean() ? 1 : -1) * (long) Math.sqrt(Long.MAX_VALUE) + r.nextInt(5) - 2;
            default -> r.nextLong();
        };
    }

    private static void exactOrInvalid(BigInteger exact, java.util.function.LongSupplier checked) {
        if (exact.compareTo(MIN) < 0 || exact.compareTo(MAX) > 0) {
            AxeException e = assertThrows(AxeException.class, checked::getAsLong, exact.toString());
            assertEquals(AxeException.Kind.INVALID, e.kind());
            assertEquals(true, e.getMessage().contains("overflows 64 bits"), e.getMessage());
        } else {
            assertEquals(exact.longValueExact(), checked.getAsLong());
        }
    }

    @Test
    void checkedOperationsAreExactOrRefuse() {
        Property.forAll("Checks.add/sub/mul == BigInteger or INVALID", r -> {
            long a = edge(r);
            long b = edge(r);
            BigInteger x = BigInteger.valueOf(a);
            BigInteger y = BigInteger.valueOf(b);
            exactOrInvalid(x.add(y), () -> Checks.add("sum", a, b));
            exactOrInvalid(x.subtract(y), () -> Checks.sub("difference", a, b));
            exactOrInvalid(x.multiply(y), () -> Checks.mul("product", a, b));
        });
    }

    @Test
    void saturatingOperationsCapAtTheLargestLong() {
        Property.forAll("saturating == min(exact, 2^63 - 1); ceilDiv == ceiling", r -> {
            long a = Math.abs(edge(r) >>> 1);
            long b = Math.abs(edge(r) >>> 1);
            BigInteger x = BigInteger.valueOf(a);
            BigInteger y = BigInteger.valueOf(b);
            assertEquals(x.multiply(y).min(MAX).longValueExact(), Checks.mulSaturating(a, b), a + " * " + b);
            assertEquals(x.add(y).min(MAX).longValueExact(), Checks.addSaturating(a, b), a + " + " + b);
            if (b > 0) {
                BigInteger[] qr = x.divideAndRemainder(y);
                BigInteger ceil = qr[1].signum() == 0 ? qr[0] : qr[0].add(BigInteger.ONE);
                assertEquals(ceil.longValueExact(), Checks.ceilDiv(a, b), a + " / " + b);
            }
        });
    }
}
