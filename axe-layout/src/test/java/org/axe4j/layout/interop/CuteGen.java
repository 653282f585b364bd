package org.axe4j.layout.interop;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/** Seeded random CuTe layouts (nested up to depth 3, size at most 2^9) and an independent reference map. */
final class CuteGen {
    private CuteGen() {}

    static CuteLayout layout(Random r) {
        while (true) {
            CuteLayout c = r.nextInt(6) == 0 ? leaf(r) : tuple(r, 0);
            if (c.size() <= 1 << 9) {
                return c;
            }
        }
    }

    private static CuteLayout tuple(Random r, int depth) {
        int n = 1 + r.nextInt(3);
        List<CuteLayout> modes = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            modes.add(depth < 2 && r.nextInt(3) == 0 ? tuple(r, depth + 1) : leaf(r));
        }
        return new CuteLayout.Tuple(modes);
    }

    private static CuteLayout leaf(Random r) {
        long[] sizes = {1, 2, 2, 3, 4, 4, 5, 8};
        long size = sizes[r.nextInt(sizes.length)];
        long stride = switch (r.nextInt(4)) {
            case 0 -> 0;
            case 1 -> -1 - r.nextInt(4);
            default -> 1 + r.nextInt(40);
        };
        return new CuteLayout.Leaf(size, stride);
    }

    /** CuTe's flat map from its leaves: sum_j ((i / (s_0 ... s_{j-1})) mod s_j) * d_j. */
    static long referenceFlat(CuteLayout c, long i) {
        long weight = 1;
        long sum = 0;
        for (CuteLayout.Leaf leaf : c.leaves()) {
            sum += ((i / weight) % leaf.size()) * leaf.stride();
            weight *= leaf.size();
        }
        return sum;
    }

    /** All coordinates of a shape, row-major order. */
    static List<long[]> coordinates(long[] shape) {
        List<long[]> out = new ArrayList<>();
        long size = 1;
        for (long d : shape) {
            size *= d;
        }
        long[] c = new long[shape.length];
        for (long x = 0; x < size; x++) {
            out.add(c.clone());
            for (int k = shape.length - 1; k >= 0; k--) {
                if (++c[k] < shape[k]) {
                    break;
                }
                c[k] = 0;
            }
        }
        return out;
    }
}
