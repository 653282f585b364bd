package org.axe4j.schedules;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;
import org.axe4j.layout.Property;
import org.junit.jupiter.api.Test;

/**
 * {@link Modular} against the sets it stands for, enumerated: {@code c n + b} for n in a window wide enough that
 * every residue class shows. A sum or multiple must contain every sum or multiple of members; divisibility and
 * alignment must hold of exactly the members.
 */
class ModularTest {

    static final int N = 24;

    static Modular random(Random r) {
        long c = new long[] {0, 1, 2, 3, 4, 6, 8, 12, 16, 32, 64}[r.nextInt(11)];
        return new Modular(c, r.nextInt(200) - 100);
    }

    /** Members c n + b for |n| <= N. */
    static List<Long> members(Modular m) {
        TreeSet<Long> out = new TreeSet<>();
        for (long n = -N; n <= N; n++) {
            out.add(m.coeff() * n + m.residue());
        }
        return new ArrayList<>(out);
    }

    /** The enumeration's membership test, independent of {@link Modular#contains}. */
    static boolean contains(Modular m, long v) {
        for (long n = -4 * N; n <= 4 * N; n++) {
            if (m.coeff() * n + m.residue() == v) {
                return true;
            }
        }
        return false;
    }

    /** Membership by arithmetic, for values far from the residue. */
    static boolean in(Modular m, long v) {
        return m.coeff() == 0 ? v == m.residue() : (v - m.residue()) % m.coeff() == 0;
    }

    @Test
    void containsIsMembership() {
        Property.forAll("modular contains", r -> {
            Modular m = random(r);
            for (long v = -30; v <= 30; v++) {
                assertEquals(contains(m, v), m.contains(v), m + " contains " + v);
            }
        });
    }

    @Test
    void sumsAndMultiplesContainEverySumAndMultipleOfMembers() {
        Property.forAll("modular sums and multiples", r -> {
            Modular a = random(r);
            Modular b = random(r);
            long k = r.nextInt(9) - 4;
            Modular product = a.times(k);
            Modular sum = a.plus(b);
            for (long x : members(a)) {
                assertTrue(in(product, x * k), a + " * " + k + " misses " + x * k);
                for (long y : members(b)) {
                    assertTrue(in(sum, x + y), a + " + " + b + " misses " + (x + y));
                }
            }
        });
    }

    @Test
    void aSumIsNoCoarserThanItsMembersAllow() {
        // gcd(c1, c2) is the exact coefficient: every value of the sum is a sum of members
        Property.forAll("modular sums are exact", r -> {
            Modular a = random(r);
            Modular b = random(r);
            Modular sum = a.plus(b);
            for (long k = -3; k <= 3; k++) {
                long v = sum.coeff() * k + sum.residue();
                boolean found = false;
                for (long n = -200; n <= 200 && !found; n++) {
                    long rest = v - (a.coeff() * n + a.residue());
                    found = b.coeff() == 0 ? rest == b.residue() : (rest - b.residue()) % b.coeff() == 0;
                }
                assertTrue(found, sum + " claims " + v + ", which no member of " + a + " plus one of " + b + " is");
            }
        });
    }

    @Test
    void divisibleByAndAlignmentHoldOfExactlyTheMembers() {
        Property.forAll("modular divisibility", r -> {
            Modular m = random(r);
            for (long k = 1; k <= 40; k++) {
                boolean all = true;
                for (long x : members(m)) {
                    all &= Math.floorMod(x, k) == 0;
                }
                assertEquals(all, m.divisibleBy(k), m + " divisible by " + k);
                if (m.alignment() != 0) {
                    assertEquals(all, m.alignment() % k == 0, m + " alignment " + m.alignment() + " vs " + k);
                }
            }
        });
    }

    @Test
    void valuesInAreTheMembersInTheRange() {
        Property.forAll("modular values in a range", r -> {
            Modular m = random(r);
            long lo = r.nextInt(40) - 20;
            long hi = lo + r.nextInt(40);
            List<Long> want = new ArrayList<>();
            for (long v = lo; v < hi; v++) {
                if (contains(m, v)) {
                    want.add(v);
                }
            }
            assertEquals(want, m.valuesIn(lo, hi), m + " in [" + lo + ", " + hi + ")");
        });
    }

    @Test
    void normalizesAndPrints() {
        assertEquals(new Modular(32, 0), new Modular(-32, 64));
        assertEquals("32n + 16", new Modular(32, -16).toString());
        assertEquals("7", Modular.constant(7).toString());
        assertThrows(IllegalArgumentException.class, () -> Modular.ANY.divisibleBy(0));
    }
}
