package org.axe4j.layout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** Swizzles and swizzle-after-layout, against a bit-by-bit oracle and enumeration of the layout. */
class SwizzledLayoutTest {
    /** Bit by bit: target bit t of the field takes source bit t +- |S| XOR itself. */
    static long oracleSwizzle(long a, int bits, int base, int shift) {
        long out = a;
        for (int k = 0; k < bits; k++) {
            int low = base + k;
            int high = base + Math.abs(shift) + k;
            int target = shift >= 0 ? low : high;
            int source = shift >= 0 ? high : low;
            long bit = (a >> source) & 1;
            out ^= bit << target;
        }
        return out;
    }

    static Swizzle randomSwizzle(Random r) {
        int bits = r.nextInt(4);
        int base = r.nextInt(4);
        int magnitude = bits + r.nextInt(3);
        return new Swizzle(bits, base, r.nextBoolean() ? magnitude : -magnitude);
    }

    static Layout memoryLayout(Random r) {
        List<Iter> shard = new ArrayList<>();
        for (Iter it : RandomLayouts.shard(r, 4)) {
            shard.add(new Iter(it.extent(), Math.abs(it.stride()), Axis.M));
        }
        List<Iter> replica = new ArrayList<>();
        for (Iter it : RandomLayouts.replica(r)) {
            replica.add(new Iter(it.extent(), Math.abs(it.stride()), Axis.M));
        }
        TreeMap<Axis, Long> offset = new TreeMap<>();
        if (r.nextBoolean()) {
            offset.put(Axis.M, (long) r.nextInt(40));
        }
        return new Layout(shard, replica, offset);
    }

    @Test
    void swizzleMatchesTheBitOracleAndIsAnInvolution() {
        Property.forAll("swizzle bits", r -> {
            Swizzle s = randomSwizzle(r);
            for (int i = 0; i < 64; i++) {
                long a = r.nextInt(1 << 14);
                assertEquals(oracleSwizzle(a, s.bits(), s.base(), s.shift()), s.apply(a), s + " at " + a);
                assertEquals(a, s.apply(s.apply(a)), s + " twice at " + a);
            }
        });
    }

    /** An offset that is a multiple of the period commutes with the swizzle; one below it (if any) does not. */
    @Test
    void offsetsByWholePeriodsCommuteWithTheSwizzle() {
        Property.forAll("swizzle period", 2000, r -> {
            Swizzle s = randomSwizzle(r);
            long period = s.period();
            long offset = period * (1 + r.nextInt(5));
            for (long x = 0; x < 2 * period; x++) {
                assertEquals(offset + s.apply(x), s.apply(offset + x), s + " offset " + offset + " x " + x);
            }
            if (!s.isIdentity()) {
                long half = period / 2;
                boolean differs = false;
                for (long x = 0; x < 2 * period && !differs; x++) {
                    differs = half + s.apply(x) != s.apply(half + x);
                }
                assertTrue(differs, s + ": half a period already commutes, so the period is not the smallest");
            }
        });
    }

    @Test
    void swizzledLayoutIsTheSwizzleOfEveryEnumeratedPoint() {
        Property.forAll("swizzled layout apply", r -> {
            Layout l = memoryLayout(r);
            Swizzle s = randomSwizzle(r);
            SwizzledLayout sl = new SwizzledLayout(s, l);
            List<TreeSet<Point>> table = Oracle.table(l);
            for (int x = 0; x < table.size(); x++) {
                TreeSet<Long> expected = new TreeSet<>();
                for (Point p : table.get(x)) {
                    expected.add(oracleSwizzle(p.get(Axis.M), s.bits(), s.base(), s.shift()));
                }
                TreeSet<Long> got = new TreeSet<>();
                sl.apply(x).forEach(p -> got.add(p.get(Axis.M)));
                assertEquals(expected, got, sl + " at " + x);
                assertTrue(got.contains(sl.base(x).get(Axis.M)), sl + " base at " + x);
            }
            assertEquals(sl, SwizzledLayout.parse(sl.toString()), "round trip of " + sl);
        });
    }

    @Test
    void textAndErrors() {
        SwizzledLayout sl = SwizzledLayout.parse("Swizzle<3,4,3> ∘ S[(8,64):(64,1)]");
        assertEquals("Swizzle<3,4,3> o S[(8,64):(64,1)]", sl.toString());
        // Swizzle<3,4,3>: source bits [7,10), target bits [4,7). Row 1 (address 64 = bit 6) is unchanged,
        // row 2 (address 128 = bit 7) flips bit 4.
        assertEquals(64, sl.base(64).get(Axis.M));
        assertEquals(128 ^ 16, sl.base(128).get(Axis.M));
        // The 128-byte swizzle of 16-bit elements, Swizzle<3,3,3>: row 1 flips bit 3 (8 elements = 16 bytes).
        assertEquals(64 ^ 8, SwizzledLayout.parse("Swizzle<3,3,3> o S[(8,64):(64,1)]").base(64).get(Axis.M));
        assertTrue(SwizzledLayout.isSwizzledText("  Swizzle<1,0,1> o S[2:1]"));
        AxeException overlap = assertThrows(AxeException.class, () -> new Swizzle(3, 0, 2));
        assertTrue(overlap.getMessage().contains("Swizzle<3,0,2>") && overlap.getMessage().contains("|S| must be >= B"),
                overlap.getMessage());
        AxeException thread = assertThrows(AxeException.class,
                () -> SwizzledLayout.parse("Swizzle<1,0,1> o S[(2,2):(1,1@laneid)]"));
        assertTrue(thread.getMessage().contains("only axis m") && thread.getMessage().contains("laneid"),
                thread.getMessage());
        AxeException parse = assertThrows(AxeException.class, () -> SwizzledLayout.parse("Swizzle<1,0> o S[2:1]"));
        assertEquals(AxeException.Kind.PARSE, parse.kind());
        assertTrue(parse.getMessage().contains("column 12"), parse.getMessage());
        AxeException noO = assertThrows(AxeException.class, () -> SwizzledLayout.parse("Swizzle<1,0,1> S[2:1]"));
        assertTrue(noO.getMessage().contains("expected 'o'"), noO.getMessage());
    }
}
