package org.axe4j.layout;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * TIRx's element-level reshapes of a layout: {@code storage} (where the elements live, without who holds them),
 * {@code unpack} (each element becomes n contiguous ones) and {@code pack} (n contiguous elements become one), and
 * {@code tile_to} (the layout repeated, row-major, over a larger shape).
 *
 * <p>{@code unpack(L, n)} over the shape (..., n) maps (x, j) to {@code n L_m(x) + j} on axis m and to L's thread
 * coordinates unchanged: the memory strides, replica strides and offset on m are multiplied by n and an inner iter
 * {@code (n):(1)} on m is appended. {@code pack(L, n)} is its inverse, defined when L's innermost iter is stride 1
 * on m with an extent that n divides, and every other stride and the offset on m are multiples of n. TIRx scales or
 * divides every shard stride, thread axes included, and leaves replicas and offsets alone; the two agree on
 * memory-only layouts without replicas or offsets, and {@code docs/divergences.md} lists the difference.
 *
 * <p>A swizzled layout {@code swz o L} packs and unpacks by powers of two {@code n = 2^k}: with {@code j < n},
 * {@code n swz_M(a) + j = swz_{M+k}(n a + j)}, because {@code swz} moves whole bit fields at and above bit M and the
 * low k bits of {@code n a + j} are j. So {@code unpack(swz_M o L, n) = swz_{M+k} o unpack(L, n)}, and {@code pack}
 * is its inverse, defined when {@code M >= k} (the n packed elements lie inside one unswizzled unit).
 */
public final class Packing {
    private Packing() {}

    /** L without its iters and offsets on thread axes (TIRx's {@code storage()}). */
    public static Layout storage(Layout l) {
        Map<Axis, Long> offset = new TreeMap<>();
        l.offset().forEach((axis, v) -> {
            if (axis.kind() != AxisKind.THREAD) {
                offset.put(axis, v);
            }
        });
        return Layout.of(withoutThreads(l.shard()), withoutThreads(l.replica()), offset);
    }

    private static List<Iter> withoutThreads(List<Iter> iters) {
        return iters.stream().filter(it -> it.axis().kind() != AxisKind.THREAD).toList();
    }

    /** Each element of L as {@code n} contiguous elements on m (see the class comment). */
    public static Layout unpack(Layout l, long n) {
        requirePositive(n, "unpack");
        List<Iter> shard = new ArrayList<>(scaled(l.shard(), n, l));
        shard.add(new Iter(n, 1, Axis.M));
        Map<Axis, Long> offset = new TreeMap<>(l.offset());
        if (offset.containsKey(Axis.M)) {
            offset.put(Axis.M, Checks.mul(() -> "offset of " + l + " times " + n, offset.get(Axis.M), n));
        }
        return Layout.of(shard, scaled(l.replica(), n, l), offset);
    }

    private static List<Iter> scaled(List<Iter> iters, long n, Layout l) {
        List<Iter> out = new ArrayList<>();
        for (Iter it : iters) {
            long stride = it.axis().isMemory() ? Checks.mul(() -> "stride of " + it + " in " + l + " times " + n,
                    it.stride(), n) : it.stride();
            out.add(new Iter(it.extent(), stride, it.axis()));
        }
        return out;
    }

    /** {@code n} contiguous elements of L on m as one (the inverse of {@link #unpack}; see the class comment). */
    public static Layout pack(Layout l, long n) {
        requirePositive(n, "pack");
        if (l.shard().isEmpty()) {
            throw invalid("pack(" + l + ", " + n + "): the layout has no iter to pack");
        }
        Iter inner = l.shard().get(l.shard().size() - 1);
        if (!inner.axis().isMemory() || inner.stride() != 1 || inner.extent() % n != 0) {
            throw invalid("pack(" + l + ", " + n + "): the innermost iter " + inner + " must be stride 1 on m with an "
                    + "extent that " + n + " divides");
        }
        List<Iter> shard = new ArrayList<>(divided(l.shard().subList(0, l.shard().size() - 1), n, l));
        if (inner.extent() > n) {
            shard.add(new Iter(inner.extent() / n, 1, Axis.M));
        }
        Map<Axis, Long> offset = new TreeMap<>(l.offset());
        long m = l.offsetOn(Axis.M);
        if (m % n != 0) {
            throw invalid("pack(" + l + ", " + n + "): the offset " + m + " on m is not a multiple of " + n);
        }
        if (m != 0) {
            offset.put(Axis.M, m / n);
        }
        return Layout.of(shard, divided(l.replica(), n, l), offset);
    }

    /** Each element of {@code swz o L} as {@code n} contiguous elements (see the class comment). */
    public static SwizzledLayout unpack(SwizzledLayout l, long n) {
        requirePositive(n, "unpack");
        if (l.swizzle().isIdentity()) {
            return new SwizzledLayout(l.swizzle(), unpack(l.layout(), n));
        }
        int k = powerOfTwo(l, n, "unpack");
        Swizzle s = l.swizzle();
        return new SwizzledLayout(new Swizzle(s.bits(), s.base() + k, s.shift()), unpack(l.layout(), n));
    }

    /** {@code n} contiguous elements of {@code swz o L} as one, the inverse of {@link #unpack(SwizzledLayout, long)}. */
    public static SwizzledLayout pack(SwizzledLayout l, long n) {
        requirePositive(n, "pack");
        if (l.swizzle().isIdentity()) {
            return new SwizzledLayout(l.swizzle(), pack(l.layout(), n));
        }
        int k = powerOfTwo(l, n, "pack");
        Swizzle s = l.swizzle();
        if (s.base() < k) {
            throw invalid("pack(" + l + ", " + n + "): the swizzle moves units of 2^" + s.base() + " elements, fewer "
                    + "than the " + n + " packed into one, so a packed element would be split by the swizzle");
        }
        return new SwizzledLayout(new Swizzle(s.bits(), s.base() - k, s.shift()), pack(l.layout(), n));
    }

    private static int powerOfTwo(SwizzledLayout l, long n, String op) {
        if (Long.bitCount(n) != 1) {
            throw invalid(op + "(" + l + ", " + n + "): num must be a power of two for a swizzled layout, as the "
                    + "swizzle moves bit fields of the address");
        }
        return Long.numberOfTrailingZeros(n);
    }

    private static List<Iter> divided(List<Iter> iters, long n, Layout l) {
        List<Iter> out = new ArrayList<>();
        for (Iter it : iters) {
            if (it.axis().isMemory() && it.stride() % n != 0) {
                throw invalid("pack(" + l + ", " + n + "): the stride of " + it + " is not a multiple of " + n
                        + ", so packed elements would straddle it");
            }
            out.add(new Iter(it.extent(), it.axis().isMemory() ? it.stride() / n : it.stride(), it.axis()));
        }
        return out;
    }

    /**
     * L repeated over {@code toShape}, row-major: {@code tile(compact(toShape / shape), L)} (TIRx's
     * {@code tile_to}); every dim of {@code toShape} must be a multiple of the same dim of {@code shape}.
     */
    public static Layout tileTo(Layout l, Shape toShape, Shape shape) {
        if (toShape.rank() != shape.rank()) {
            throw invalid("tile_to(" + l + "): shape " + toShape + " and the layout's shape " + shape + " differ in "
                    + "rank");
        }
        long[] outer = new long[shape.rank()];
        for (int d = 0; d < outer.length; d++) {
            if (toShape.dim(d) % shape.dim(d) != 0) {
                throw invalid("tile_to(" + l + "): dim " + d + " of " + toShape + " is not a multiple of " + shape.dim(d)
                        + " (the layout's shape " + shape + ")");
            }
            outer[d] = toShape.dim(d) / shape.dim(d);
        }
        Iter[] iters = new Iter[outer.length];
        long stride = 1;
        for (int d = outer.length - 1; d >= 0; d--) {
            iters[d] = new Iter(outer[d], stride, Axis.M);
            final long before = stride;
            final int dim = d;
            stride = Checks.mul(() -> "outer strides of tile_to " + toShape, before, outer[dim]);
        }
        return Tile.tile(Layout.shard(iters), Shape.of(outer), l, shape);
    }

    private static void requirePositive(long n, String op) {
        if (n < 1) {
            throw invalid(op + ": num must be >= 1, got " + n);
        }
    }

    private static AxeException invalid(String message) {
        return new AxeException(AxeException.Kind.INVALID, message);
    }
}
