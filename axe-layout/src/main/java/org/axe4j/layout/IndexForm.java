package org.axe4j.layout;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The base point {@code D(x) + O} written as a formula in the flat index, for an index that is not a number yet
 * (a TIR expression): on each axis a,
 * <pre>
 *   coordinate_a(x) = O_a + sum over shard iters k on a of s_k * ((x / B_k) mod e_k)
 * </pre>
 * with iters of extent 1 or stride 0 left out, chained iters read as one, and the outermost written without the mod
 * ({@code x / B_k < e_k} for every {@code x} in {@code [0, size)}). {@link #evaluate} computes the formula at an
 * integer index, so the formula is checked against {@link Layout#base} by enumeration.
 *
 * <p>The shift of a region start with a symbolic part ({@link #startShift}) is the other symbolic question: where
 * {@code x = sigma + z} with {@code sigma} a symbolic multiple of {@code B_k}, {@code D(x) = s_k * sigma / B_k + D(z)}
 * when the iters {@code 0..k} read {@code x / B_k} linearly.
 */
public record IndexForm(SortedMap<Axis, List<Digit>> digits, SortedMap<Axis, Long> offset) {
    /** {@code stride * ((x / divisor) mod extent)}, or {@code stride * (x / divisor)} when {@code outermost}. */
    public record Digit(long divisor, long extent, long stride, boolean outermost) {
        /** The term at integer index {@code x}. */
        public long at(long x) {
            long q = x / divisor;
            return stride * (outermost ? q : q % extent);
        }
    }

    public IndexForm {
        TreeMap<Axis, List<Digit>> copy = new TreeMap<>();
        digits.forEach((a, ds) -> copy.put(a, List.copyOf(ds)));
        digits = Collections.unmodifiableSortedMap(copy);
        offset = Collections.unmodifiableSortedMap(new TreeMap<>(offset));
    }

    /** The formula of {@code l}'s base point; every axis of {@code l} appears (with no digits where none moves it). */
    public static IndexForm of(Layout l) {
        TreeMap<Axis, List<Digit>> digits = new TreeMap<>();
        for (Axis a : l.axes()) {
            digits.put(a, new ArrayList<>());
        }
        // Adjacent iters that chain (outer stride = inner stride * inner extent, one axis) read one digit of
        // their product extent: S[(4,8):(8,1)] is x itself, as TIRx writes it.
        Iter pending = null;
        long pendingDivisor = 1;
        long divisor = 1;
        for (int k = l.shard().size() - 1; k >= 0; k--) {
            Iter it = l.shard().get(k);
            if (it.extent() == 1) {
                continue;
            }
            if (pending != null && chains(it, pending)) {
                pending = new Iter(pending.extent() * it.extent(), pending.stride(), pending.axis()); // <= size
            } else {
                if (pending != null && pending.stride() != 0) {
                    digits.get(pending.axis()).add(0, new Digit(pendingDivisor, pending.extent(), pending.stride(), false));
                }
                pending = it;
                pendingDivisor = divisor;
            }
            divisor *= it.extent(); // at most the size, which fits
        }
        if (pending != null && pending.stride() != 0) {
            digits.get(pending.axis()).add(0, new Digit(pendingDivisor, pending.extent(), pending.stride(), true));
        }
        return new IndexForm(digits, l.offset());
    }

    /** {@code outer}'s digit continues {@code inner}'s: same axis, outer stride = inner stride * inner extent. */
    private static boolean chains(Iter outer, Iter inner) {
        if (inner.stride() == 0 || !outer.axis().equals(inner.axis())) {
            return false;
        }
        try {
            return outer.stride() == Math.multiplyExact(inner.stride(), inner.extent());
        } catch (ArithmeticException e) {
            return false; // no stride of a layout reaches past 64 bits
        }
    }

    /** The formula at integer index {@code x} (equal to {@link Layout#base} for {@code x} in range). */
    public Point evaluate(long x) {
        TreeMap<Axis, Long> p = new TreeMap<>(offset);
        digits.forEach((a, ds) -> {
            for (Digit d : ds) {
                p.merge(a, d.at(x), Long::sum);
            }
        });
        return new Point(p);
    }

    /** Where a symbolic start moves the image: {@code stride * (sigma / divisor)} on {@code axis}. */
    public record Shift(Axis axis, long divisor, long stride) {
        /** The coefficient on {@code axis} of a variable whose coefficient in the flat start is {@code c}. */
        public long coefficient(long c) {
            return Checks.mul(() -> "the offset of a symbolic start (" + c + " / " + divisor + " * " + stride + ")",
                    c / divisor, stride);
        }
    }

    /**
     * The shift of the image when the flat index gains {@code sigma = sum c_j v_j} (the symbolic part of a region
     * start, with the coefficients {@code c_j} of the flat index): {@code D(sigma + z) = s_k * sigma / B_k + D(z)}
     * for every value of the variables that keeps {@code sigma + z} and {@code z} in {@code [0, size)}. Holds for an
     * iter k with {@code B_k} dividing every {@code c_j} whose outer iters (extent above 1) chain linearly: each
     * outer stride is the next one's stride times its extent, on the same axis. The innermost such k is taken;
     * absent, naming the reason, when there is none.
     */
    public static Result<Shift> startShift(Layout l, long[] coefficients) {
        List<Iter> shard = l.shard();
        long[] divisor = new long[shard.size()];
        long b = 1;
        for (int k = shard.size() - 1; k >= 0; k--) {
            divisor[k] = b;
            b *= shard.get(k).extent();
        }
        boolean any = false;
        for (long c : coefficients) {
            any |= c != 0;
        }
        if (!any || l.size() == 1) {
            // sigma = 0 (or, with one element, sigma = 0 at every in-range value): nothing moves
            return Result.of(new Shift(Axis.M, 1, 0));
        }
        for (int k = shard.size() - 1; k >= 0; k--) {
            Iter it = shard.get(k);
            if (it.extent() == 1 || !dividesAll(divisor[k], coefficients) || !chainsLinearly(shard, k)) {
                continue;
            }
            return Result.of(new Shift(it.axis(), divisor[k], it.stride()));
        }
        return Result.absent("no shard iter of %s reads the start linearly: the symbolic part's coefficients %s "
                + "(in the flat index) are multiples of no iter's divisor B_k whose outer iters chain "
                + "(s_outer = e_inner * s_inner, one axis)", l, java.util.Arrays.toString(coefficients));
    }

    private static boolean dividesAll(long divisor, long[] coefficients) {
        for (long c : coefficients) {
            if (c % divisor != 0) {
                return false;
            }
        }
        return true;
    }

    /** Iters {@code 0..k} of extent above 1: each stride the next one's times its extent, on one axis. */
    private static boolean chainsLinearly(List<Iter> shard, int k) {
        Iter inner = shard.get(k);
        for (int j = k - 1; j >= 0; j--) {
            Iter outer = shard.get(j);
            if (outer.extent() == 1) {
                continue;
            }
            boolean sameAxis = outer.axis().equals(inner.axis()) || (outer.stride() == 0 && inner.stride() == 0);
            long next;
            try {
                next = Math.multiplyExact(inner.stride(), inner.extent());
            } catch (ArithmeticException e) {
                return false; // no stride of a layout reaches past 64 bits
            }
            if (!sameAxis || outer.stride() != next) {
                return false;
            }
            inner = outer;
        }
        return true;
    }
}
