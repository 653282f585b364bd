package org.axe4j.serve;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/** The JSON number reader against Double.parseDouble, bit for bit, over seeded random decimals of many forms. */
class DecimalToDoubleTest {
    private static final int PER_FORM = 120_000;

    private static void assertSameBits(String text) {
        long expected = Double.doubleToRawLongBits(Double.parseDouble(text));
        long actual = Double.doubleToRawLongBits(JsonInputs.number(text));
        if (expected != actual) {
            throw new AssertionError(text + ": read as " + Double.longBitsToDouble(actual) + " (bits "
                    + Long.toHexString(actual) + "), Double.parseDouble gives " + Double.longBitsToDouble(expected)
                    + " (bits " + Long.toHexString(expected) + ")");
        }
    }

    private static void check(int count, Supplier<String> form) {
        for (int i = 0; i < count; i++) {
            assertSameBits(form.get());
        }
    }

    private static String digits(Random r, int n) {
        StringBuilder s = new StringBuilder(n);
        s.append((char) ('1' + r.nextInt(9)));
        for (int i = 1; i < n; i++) {
            s.append((char) ('0' + r.nextInt(10)));
        }
        return s.toString();
    }

    /** Digits with a point somewhere (or none), an optional exponent and sign: JSON's number grammar. */
    private static String decimal(Random r, int digitCount, int minExponent, int maxExponent) {
        String d = digits(r, digitCount);
        int point = r.nextInt(digitCount + 1);
        String mantissa = point == 0 ? "0." + d : point == digitCount ? d : d.substring(0, point) + "." + d.substring(point);
        String sign = r.nextBoolean() ? "-" : "";
        if (r.nextInt(4) == 0) {
            return sign + mantissa;
        }
        int e = minExponent + r.nextInt(maxExponent - minExponent + 1);
        String marker = r.nextBoolean() ? "e" : "E";
        return sign + mantissa + marker + (e >= 0 && r.nextBoolean() ? "+" : "") + e;
    }

    @Test
    void randomDecimalsOfOneTo25DigitsReadBitIdenticalToParseDouble() {
        Random r = new Random(47);
        check(PER_FORM, () -> decimal(r, 1 + r.nextInt(25), -30, 30));
        check(PER_FORM, () -> decimal(r, 1 + r.nextInt(25), -360, 330));
    }

    @Test
    void seventeenDigitRoundTripsOfRandomDoublesReadBack() {
        Random r = new Random(48);
        check(PER_FORM / 10, () -> {
            double d = Double.longBitsToDouble(r.nextLong());
            return Double.isFinite(d) ? String.format("%.16e", d) : "0";
        });
        check(PER_FORM, () -> {
            double d = Double.longBitsToDouble(r.nextLong() & 0x7FFF_FFFF_FFFF_FFFFL);
            return Double.isFinite(d) ? Double.toString(d) : "1";
        });
        // the bench's inputs: normal floats as 17 significant decimals, as json.dumps writes them
        check(PER_FORM / 10, () -> String.format("%.17g", (double) (float) r.nextGaussian()));
    }

    @Test
    void halfwayPointsAndTheirNeighboursRoundToEven() {
        Random r = new Random(49);
        List<String> cases = new ArrayList<>();
        for (int i = 0; i < 6_000; i++) {
            // doubles with exponents near 0 (short exact halfway decimals) and anywhere (long ones)
            double d = i % 3 != 0 ? Math.scalb(1 + r.nextDouble(), r.nextInt(140) - 70)
                    : Double.longBitsToDouble(r.nextLong() & 0x7FEF_FFFF_FFFF_FFFFL);
            BigDecimal half = new BigDecimal(d).add(new BigDecimal(Math.nextUp(d))).divide(BigDecimal.valueOf(2));
            cases.add(half.toString());
            cases.add(half.toPlainString());
            BigDecimal nudge = half.ulp().multiply(BigDecimal.valueOf(r.nextInt(9) + 1));
            cases.add(half.add(nudge).toString());
            cases.add(half.subtract(nudge).toString());
            cases.add(half.round(new java.math.MathContext(17 + r.nextInt(4))).toString());
        }
        // odd integers between 2^53 and 2^54 sit halfway between doubles: ties to even at q = 0 and scaled
        for (int i = 0; i < 20_000; i++) {
            long odd = (1L << 53) + 2 * (long) r.nextInt(1 << 30) + 1;
            cases.add(Long.toString(odd));
            cases.add(odd + "0".repeat(r.nextInt(3)));
            cases.add(odd + "e" + r.nextInt(40));
            cases.add("-" + odd / 10 + "." + odd % 10 + "e1");
        }
        cases.forEach(DecimalToDoubleTest::assertSameBits);
    }

    @Test
    void subnormalsHugeTinyIntegersAndZerosReadBack() {
        Random r = new Random(50);
        check(PER_FORM / 4, () -> Double.toString(Double.longBitsToDouble(r.nextLong() & 0x000F_FFFF_FFFF_FFFFL)));
        check(PER_FORM / 4, () -> decimal(r, 1 + r.nextInt(20), -345, -300));
        check(PER_FORM / 4, () -> decimal(r, 1 + r.nextInt(20), 290, 320));
        check(PER_FORM / 4, () -> Long.toString(r.nextLong() >> r.nextInt(64)));
        check(PER_FORM / 4, () -> digits(r, 1 + r.nextInt(25)));
        for (String s : List.of("0", "-0", "0.0", "-0.0", "0e0", "-0e-999", "0.000e+400", "1", "-1", "9007199254740992",
                "9007199254740993", "9007199254740995", "4.9e-324", "2.4703282292062327e-324",
                "2.4703282292062328e-324", "2.2250738585072011e-308", "2.2250738585072014e-308",
                "1.7976931348623157e308", "1.7976931348623158e308", "1.7976931348623159e308", "1e309", "1e-400",
                "123456789012345678901234567890", "0.000000000000000000000000000001", "1e22", "1e23", "8.5e-323",
                "179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587"
                        + "207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817"
                        + "711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699"
                        + "508093042880177904174497792")) {
            assertSameBits(s);
        }
    }

    @Test
    void theFastStepsDecideAlmostEveryDecimalOfAtMost19Digits() {
        Random r = new Random(51);
        int undecided = 0;
        int n = 100_000;
        for (int i = 0; i < n; i++) {
            long w = Long.parseLong(digits(r, 1 + r.nextInt(18)));
            undecided += DecimalToDouble.bits(false, w, r.nextInt(600) - 320, false) == DecimalToDouble.UNDECIDED
                    ? 1 : 0;
        }
        assertTrue(undecided < n / 1000, undecided + " of " + n + " left to Double.parseDouble");
    }

    @Test
    void textThatIsNotOneJsonNumberIsRefused() {
        for (String s : List.of("", "-", ".5", "5.", "1e", "1e+", "+1", "--1", "01", "1.5x", "0x10", "NaN", "Infinity")) {
            assertTrue(Double.isNaN(JsonInputs.number(s)), s);
        }
        assertEquals(1.0, JsonInputs.number("1"));
    }
}
