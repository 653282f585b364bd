package org.axe4j.layout.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Iter;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Oracle;
import org.axe4j.layout.Property;
import org.axe4j.layout.RandomLayouts;
import org.junit.jupiter.api.Test;

/** The local same-map test agrees with brute-force enumeration, on rewritten (equal) and mutated (mostly different) pairs. */
class AxeFormsTest {

    /** A map-preserving rewrite: split an iter, insert a unit iter, negate a replica, shuffle replicas, move a zero stride. */
    static Layout rewrite(Random r, Layout l) {
        List<Iter> d = new ArrayList<>(l.shard());
        List<Iter> rep = new ArrayList<>(l.replica());
        TreeMap<Axis, Long> offset = new TreeMap<>(l.offset());
        for (int step = 0; step < 3; step++) {
            switch (r.nextInt(5)) {
                case 0 -> {
                    if (!d.isEmpty()) {
                        int k = r.nextInt(d.size());
                        Iter it = d.get(k);
                        for (long c = 2; c < it.extent(); c++) {
                            if (it.extent() % c == 0) {
                                d.set(k, new Iter(it.extent() / c, it.stride() * c, it.axis()));
                                d.add(k + 1, new Iter(c, it.stride(), it.axis()));
                                break;
                            }
                        }
                    }
                }
                case 1 -> d.add(r.nextInt(d.size() + 1), new Iter(1, r.nextInt(7) - 3, RandomLayouts.axis(r)));
                case 2 -> {
                    if (!rep.isEmpty()) {
                        int k = r.nextInt(rep.size());
                        Iter it = rep.get(k);
                        rep.set(k, it.withStride(-it.stride()));
                        offset.merge(it.axis(), (it.extent() - 1) * it.stride(), Long::sum);
                    }
                }
                case 3 -> Collections.shuffle(rep, r);
                default -> {
                    for (int k = 0; k < d.size(); k++) {
                        if (d.get(k).stride() == 0) {
                            d.set(k, new Iter(d.get(k).extent(), 0, RandomLayouts.axis(r)));
                        }
                    }
                }
            }
        }
        return new Layout(d, rep, offset);
    }

    /** One random change: a stride, an offset, or two adjacent iters swapped. */
    static Layout mutate(Random r, Layout l) {
        List<Iter> d = new ArrayList<>(l.shard());
        TreeMap<Axis, Long> offset = new TreeMap<>(l.offset());
        int choice = r.nextInt(3);
        if (choice == 0 && !d.isEmpty()) {
            int k = r.nextInt(d.size());
            d.set(k, d.get(k).withStride(d.get(k).stride() + 1 + r.nextInt(2)));
        } else if (choice == 1 && d.size() > 1) {
            int k = r.nextInt(d.size() - 1);
            Collections.swap(d, k, k + 1);
        } else {
            offset.merge(RandomLayouts.axis(r), 1L, Long::sum);
        }
        return new Layout(d, l.replica(), offset);
    }

    @Test
    void sameMapAgreesWithEnumeration() {
        int[] equal = {0};
        int[] different = {0};
        // A fifth of the default count: each case enumerates two layouts of up to 2^15 points.
        int cases = Math.max(200, Property.CASES / 5);
        Property.forAll("sameMap = Oracle.sameMap", cases, seeded -> {
            Random random = new Random(seeded.nextLong() * 0x9E3779B97F4A7C15L);
            Layout a = RandomLayouts.layout(random);
            Layout b = random.nextBoolean() ? rewrite(random, a) : mutate(random, rewrite(random, a));
            boolean expected = Oracle.sameMap(a, b);
            assertEquals(expected, AxeForms.sameMap(a, b), a + " vs " + b);
            (expected ? equal : different)[0]++;
        });
        assertTrue(equal[0] > cases / 4 && different[0] > cases / 10, equal[0] + " / " + different[0]);
    }
}
