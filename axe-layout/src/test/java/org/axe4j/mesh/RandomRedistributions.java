package org.axe4j.mesh;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/** Seeded random redistribution requests (JSON), over meshes of 2, 4, 2x2 and 2x4 ranks. */
final class RandomRedistributions {
    static final long[][] MESHES = {{2}, {4}, {2, 2}, {2, 4}, {4, 2}, {8}};

    private RandomRedistributions() {}

    static String request(Random rnd) {
        return request(rnd, false);
    }

    /** With {@code uneven}, dimensions may not divide by their shards (padded like torch.chunk). */
    static String request(Random rnd, boolean uneven) {
        long[] mesh = MESHES[rnd.nextInt(MESHES.length)];
        boolean named = mesh.length == 2 && rnd.nextBoolean();
        int rank = 1 + rnd.nextInt(3);
        long[] shape = new long[rank];
        for (int d = 0; d < rank; d++) {
            shape[d] = rank == 3 ? 4L << rnd.nextInt(2) : 8L << rnd.nextInt(2);
            if (uneven && rnd.nextBoolean()) {
                shape[d] = 1 + rnd.nextInt(rank == 3 ? 7 : 13);
            }
        }
        StringBuilder b = new StringBuilder("{\"mesh\": {\"shape\": ").append(list(mesh));
        if (named) {
            b.append(", \"axes\": [\"dp\", \"tp\"]");
        }
        b.append("}, \"global_shape\": ").append(list(shape)).append(", \"element_bytes\": 8, ");
        b.append("\"src\": ").append(tensor(rnd, mesh, shape, true, uneven)).append(", ");
        b.append("\"dst\": ").append(tensor(rnd, mesh, shape, false, uneven)).append('}');
        return b.toString();
    }

    static String tensor(Random rnd, long[] mesh, long[] shape, boolean mayBePartial, boolean uneven) {
        long[] split = new long[shape.length];
        java.util.Arrays.fill(split, 1);
        List<String> places = new ArrayList<>();
        List<Integer> replicated = new ArrayList<>();
        for (int j = 0; j < mesh.length; j++) {
            int pick = rnd.nextInt(mayBePartial ? 4 : 3);
            int d = rnd.nextInt(shape.length);
            if (pick >= 1 && pick <= 2 && (uneven || shape[d] % (split[d] * mesh[j]) == 0)) {
                split[d] *= mesh[j];
                places.add("Shard(" + d + ")");
            } else if (pick == 3) {
                places.add("Partial()");
            } else {
                places.add("Replicate()");
                replicated.add(j);
            }
        }
        StringBuilder b = new StringBuilder("{\"placements\": \"[").append(String.join(", ", places)).append("]\"");
        if (rnd.nextInt(3) == 0) {
            List<Integer> order = new ArrayList<>();
            for (int d = 0; d < shape.length; d++) {
                order.add(d);
            }
            java.util.Collections.shuffle(order, rnd);
            b.append(", \"local_order\": ").append(order);
        }
        if (!replicated.isEmpty() && rnd.nextInt(4) == 0) {
            int j = replicated.get(rnd.nextInt(replicated.size()));
            b.append(", \"held_at\": [[").append(j).append(", ").append(rnd.nextInt((int) mesh[j])).append("]]");
        }
        return b.append('}').toString();
    }

    private static String list(long[] v) {
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < v.length; i++) {
            b.append(i > 0 ? ", " : "").append(v[i]);
        }
        return b.append(']').toString();
    }
}
