package org.axe4j.mesh;

import java.util.Arrays;

/** A growable int array (plans list millions of offsets; boxing them would dominate). */
final class IntList {
    private int[] a = new int[8];
    private int n;

    void add(int v) {
        if (n == a.length) {
            a = Arrays.copyOf(a, n * 2);
        }
        a[n++] = v;
    }

    void addAll(IntList o) {
        for (int i = 0; i < o.n; i++) {
            add(o.a[i]);
        }
    }

    int size() {
        return n;
    }

    int get(int i) {
        return a[i];
    }

    int[] toArray() {
        return Arrays.copyOf(a, n);
    }

    boolean sameAs(IntList o) {
        return Arrays.equals(a, 0, n, o.a, 0, o.n);
    }
}
