package org.axe4j.mesh;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

/**
 * Seeded random redistribution requests with explicit Axe layouts on a 1-D {@code gpuid} mesh (2, 4 or 8 ranks):
 * device iters interleaved with memory iters in any order (block, cyclic, block-cyclic), local buffers in any
 * iter order with gaps, replicas on the device axis, device offsets, and partial sources.
 */
final class RandomLayouts {
    private static final int[] MESH = {2, 4, 8};

    private RandomLayouts() {}

    static String request(Random rnd) {
        int n = MESH[rnd.nextInt(MESH.length)];
        List<Long> memory = new ArrayList<>();
        int count = 1 + rnd.nextInt(3);
        for (int i = 0; i < count; i++) {
            memory.add((long) (2 + rnd.nextInt(3)));
        }
        long size = n;
        for (long f : memory) {
            size *= f;
        }
        boolean partial = rnd.nextInt(4) == 0;
        String src = partial ? replicated(rnd, memory, n, size) : layout(rnd, n, memory);
        String dst = rnd.nextInt(5) == 0 ? replicated(rnd, memory, n, size) : layout(rnd, n, memory);
        return "{\"mesh\": {\"shape\": [" + n + "]}, \"global_shape\": " + shape(rnd, size)
                + ", \"element_bytes\": 8, \"src\": {\"layout\": \"" + src + "\"" + (partial ? ", \"partial_dims\": [0]" : "")
                + "}, \"dst\": {\"layout\": \"" + dst + "\"}}";
    }

    /** The whole tensor on every rank (compact buffer), as a partial source or a replicated destination. */
    private static String replicated(Random rnd, List<Long> memory, int n, long size) {
        return "S[" + size + ":1] + R[" + n + ":1@gpuid]";
    }

    /** Device factors of n and the memory factors, in a random order, with random compact-with-gaps strides. */
    private static String layout(Random rnd, int n, List<Long> memory) {
        List<long[]> iters = new ArrayList<>(); // {extent, isDevice}
        List<Long> device = new ArrayList<>();
        int rest = n;
        while (rest > 1) {
            int f = rest % 4 == 0 && rnd.nextBoolean() ? 4 : 2;
            device.add((long) f);
            rest /= f;
        }
        // one device factor may become a replica (the data is copied instead of split)
        long replica = 1;
        if (device.size() > 1 && rnd.nextInt(3) == 0) {
            replica = device.remove(device.size() - 1);
            memory = new ArrayList<>(memory);
            memory.add(replica);
        }
        for (long f : device) {
            iters.add(new long[] {f, 1});
        }
        for (long f : memory) {
            iters.add(new long[] {f, 0});
        }
        Collections.shuffle(iters, rnd);
        long[] stride = new long[iters.size()];
        List<Integer> deviceOrder = new ArrayList<>();
        List<Integer> memoryOrder = new ArrayList<>();
        for (int i = 0; i < iters.size(); i++) {
            (iters.get(i)[1] == 1 ? deviceOrder : memoryOrder).add(i);
        }
        Collections.shuffle(deviceOrder, rnd);
        Collections.shuffle(memoryOrder, rnd);
        long w = 1;
        for (int i : deviceOrder) {
            stride[i] = w;
            w *= iters.get(i)[0];
        }
        long deviceSpan = w;
        w = 1;
        for (int i : memoryOrder) {
            stride[i] = w;
            w *= iters.get(i)[0] + (rnd.nextInt(4) == 0 ? 1 : 0); // sometimes a gap
        }
        StringBuilder e = new StringBuilder();
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < iters.size(); i++) {
            e.append(i > 0 ? "," : "").append(iters.get(i)[0]);
            s.append(i > 0 ? "," : "").append(stride[i]).append(iters.get(i)[1] == 1 ? "@gpuid" : "");
        }
        String text = "S[(" + e + "):(" + s + ")]";
        if (replica > 1) {
            // the replica factor was placed on m above; copy over the devices it left free instead
            text += " + R[" + replica + ":" + deviceSpan + "@gpuid]";
        } else if (rnd.nextInt(6) == 0) {
            text += " + 3";
        }
        return text;
    }

    private static String shape(Random rnd, long size) {
        for (long a : new long[] {4, 2, 3}) {
            if (size % a == 0 && rnd.nextBoolean()) {
                return "[" + a + ", " + size / a + "]";
            }
        }
        return "[" + size + "]";
    }
}
