package org.axe4j.layout.interop;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.axe4j.layout.AxeException;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Canonicalize;
import org.axe4j.layout.Iter;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Result;
import org.axe4j.layout.Shape;

/**
 * Triton linear layouts (hardware bits to logical bits over GF(2)) and Axe layouts (logical index to
 * hardware points over the integers), for the layouts both can express.
 *
 * <pre>
 *   logical bits   : x = row-major index of shape (2^c_0, ..., 2^c_{r-1}); dim k holds bits
 *                    [o_k, o_k + c_k) of x, o_k = c_{k+1} + ... + c_{r-1}
 *   shard iter i   : (2^a, 2^b @X) with B_i = 2^q (q = sum of log2 extents after i) reads bits [q, q+a) of x
 *                    and writes hardware bits [b, b+a) of X:  basis(X, b+t) = unit of logical bit q+t
 *   replica iter   : (2^a, 2^b @X) writes hardware bits [b, b+a) of X with basis 0 (a broadcast)
 *   input dims     : the layout's axes, memory-like axes first, then by execution scope, then by name;
 *                    axis X has log2(span_X) bits
 * </pre>
 *
 * {@link #fromAxe} needs power-of-two shape, extents and strides, no offset, and hardware bits that are
 * pairwise disjoint and fill {@code [0, log2 span_X)} on every axis; then for every logical c and hardware
 * point p: {@code p in L(c)  <=>  ll.apply(p) = c}. {@link #toAxe} needs every non-zero basis to be one
 * bit of one output, no two alike, and every output bit produced. XOR mixing (swizzles) is refused: in Axe
 * a swizzle is a separate composition after the layout.
 *
 * <p>Example: Axe {@code S[(2,2):(1@lane,1@register)]} with shape (2,2) is
 * {@code [register: (0,1); lane: (1,0)] -> (dim0:1, dim1:1)}.
 */
public final class LinearInterop {
    private LinearInterop() {}

    /** {@link #tryFromAxe} as an optional. */
    public static Optional<LinearLayout> fromAxe(Layout l, Shape shape) {
        return tryFromAxe(l, shape).toOptional();
    }

    /** The linear layout from {@code l}'s hardware axes to the logical dims of {@code shape}, or why none is. */
    public static Result<LinearLayout> tryFromAxe(Layout l, Shape shape) {
        if (!l.admits(shape)) {
            throw new AxeException(AxeException.Kind.INVALID, "linear layout conversion: shape " + shape + " (size "
                    + shape.size() + ") is not admitted by layout " + l + " (size " + l.size() + ")");
        }
        for (int k = 0; k < shape.rank(); k++) {
            if (Long.bitCount(shape.dim(k)) != 1) {
                return Result.absent("shape " + shape + " dimension " + k + " (" + shape.dim(k)
                        + ") is not a power of two: layout " + l + " is not bit-linear, no linear layout expresses it");
            }
        }
        if (!l.offset().isEmpty()) {
            return Result.absent("layout " + l + " has offset " + l.offsetPoint()
                    + ": a linear layout maps hardware 0 to logical 0 and has no offset");
        }
        // owner.get(X)[bit] = the iter writing that hardware bit; a zero basis marks a replica bit.
        Map<Axis, Map<Integer, Iter>> owner = new TreeMap<>();
        Map<Axis, Map<Integer, Integer>> logicalBit = new TreeMap<>();
        int q = 0;
        for (int i = l.shard().size() - 1; i >= 0; i--) {
            Iter it = l.shard().get(i);
            Optional<String> bad = claimBits(l, it, "shard", q, owner, logicalBit);
            if (bad.isPresent()) {
                return Result.absent(bad.get());
            }
            q += Long.numberOfTrailingZeros(it.extent());
        }
        for (Iter it : l.replica()) {
            if (it.extent() > 1 && it.stride() == 0) {
                continue; // adds only the displacement 0: the replica set is unchanged
            }
            Optional<String> bad = claimBits(l, it, "replica", -1, owner, logicalBit);
            if (bad.isPresent()) {
                return Result.absent(bad.get());
            }
        }
        List<Axis> axes = new ArrayList<>(owner.keySet());
        axes.sort(HARDWARE_ORDER);
        List<LinearLayout.Dim> inputs = new ArrayList<>();
        List<List<List<Long>>> bases = new ArrayList<>();
        int[] outBits = new int[shape.rank()];
        for (int k = 0; k < shape.rank(); k++) {
            outBits[k] = Long.numberOfTrailingZeros(shape.dim(k));
        }
        for (Axis axis : axes) {
            Map<Integer, Iter> bits = owner.get(axis);
            int n = bits.size();
            for (int b = 0; b < n; b++) {
                if (!bits.containsKey(b)) {
                    return Result.absent("layout " + l + " leaves bit " + b + " of axis " + axis
                            + " unused: its span " + l.spanOn(axis) + " is not a power of two filled by the iters, and"
                            + " a linear layout would read the unused bit as a broadcast");
                }
            }
            inputs.add(new LinearLayout.Dim(axis.name(), n));
            List<List<Long>> axisBases = new ArrayList<>();
            for (int b = 0; b < n; b++) {
                Integer logical = logicalBit.get(axis).get(b);
                axisBases.add(logical == null ? zeros(shape.rank()) : unitOfLogicalBit(logical, outBits));
            }
            bases.add(axisBases);
        }
        List<LinearLayout.Dim> outputs = new ArrayList<>();
        for (int k = 0; k < shape.rank(); k++) {
            outputs.add(new LinearLayout.Dim("dim" + k, outBits[k]));
        }
        return Result.of(new LinearLayout(inputs, outputs, bases));
    }

    /**
     * Records the hardware bits of one iter; {@code q} is its first logical bit, or -1 for a replica.
     * Returns why the iter is not bit-linear or overlaps another, if it does.
     */
    private static Optional<String> claimBits(Layout l, Iter it, String role, int q, Map<Axis, Map<Integer, Iter>> owner,
            Map<Axis, Map<Integer, Integer>> logicalBit) {
        if (it.extent() == 1) {
            return Optional.empty();
        }
        if (Long.bitCount(it.extent()) != 1) {
            return Optional.of(role + " iter " + it + " of " + l + " has extent " + it.extent()
                    + ", not a power of two: the layout is not bit-linear");
        }
        if (it.stride() < 0) {
            return Optional.of(role + " iter " + it + " of " + l + " has a negative stride " + it.stride()
                    + ": hardware bits cannot count down");
        }
        if (it.stride() == 0) {
            return Optional.of(role + " iter " + it + " of " + l + " has stride 0: " + it.extent()
                    + " logical indices share one point, the shard is not injective");
        }
        if (Long.bitCount(it.stride()) != 1) {
            return Optional.of(role + " iter " + it + " of " + l + " has stride " + it.stride()
                    + ", not a power of two: the layout is not bit-linear");
        }
        int b0 = Long.numberOfTrailingZeros(it.stride());
        int a = Long.numberOfTrailingZeros(it.extent());
        Map<Integer, Iter> bits = owner.computeIfAbsent(it.axis(), x -> new TreeMap<>());
        Map<Integer, Integer> logical = logicalBit.computeIfAbsent(it.axis(), x -> new TreeMap<>());
        for (int t = 0; t < a; t++) {
            Iter other = bits.putIfAbsent(b0 + t, it);
            if (other != null) {
                return Optional.of("iters " + other + " and " + it + " of " + l + " both use bit " + (b0 + t)
                        + " of axis " + it.axis() + ": overlapping bits (the hardware points are not distinct)");
            }
            if (q >= 0) {
                logical.put(b0 + t, q + t);
            }
        }
        return Optional.empty();
    }

    /** The one-hot output vector of logical flat bit {@code bit} (dims row-major, the last dim lowest). */
    private static List<Long> unitOfLogicalBit(int bit, int[] outBits) {
        List<Long> v = zeros(outBits.length);
        int low = 0;
        for (int k = outBits.length - 1; k >= 0; k--) {
            if (bit < low + outBits[k]) {
                v.set(k, 1L << (bit - low));
                return v;
            }
            low += outBits[k];
        }
        throw new IllegalStateException("logical bit " + bit + " is beyond the shape");
    }

    private static List<Long> zeros(int n) {
        List<Long> v = new ArrayList<>();
        for (int k = 0; k < n; k++) {
            v.add(0L);
        }
        return v;
    }

    /** Memory-like axes (no execution scope) first, then axes by scope, innermost first; ties by name. */
    static final Comparator<Axis> HARDWARE_ORDER = Comparator
            .comparingInt((Axis a) -> a.scope().map(s -> s.ordinal() + 1).orElse(0))
            .thenComparing(Axis::name);

    /** {@link #tryToAxe} as an optional. */
    public static Optional<ShapedLayout> toAxe(LinearLayout ll) {
        return tryToAxe(ll).toOptional();
    }

    /**
     * The Axe layout (and logical shape {@code (2^c_0, ...)}) of a linear layout whose non-zero bases are
     * distinct single output bits covering every output bit; zero bases become replica iters. Refuses
     * XOR-mixed bases (swizzles), repeated bases and outputs no input produces.
     */
    public static Result<ShapedLayout> tryToAxe(LinearLayout ll) {
        List<LinearLayout.Dim> outs = ll.outputs();
        int[] low = new int[outs.size()];
        int total = 0;
        for (int k = outs.size() - 1; k >= 0; k--) {
            low[k] = total;
            total += outs.get(k).bits();
        }
        // producer[q] = {input index, input bit} writing logical flat bit q.
        int[][] producer = new int[total][];
        List<Iter> replica = new ArrayList<>();
        for (int i = 0; i < ll.inputs().size(); i++) {
            LinearLayout.Dim in = ll.inputs().get(i);
            Axis axis = Axis.of(in.name());
            for (int j = 0; j < in.bits(); j++) {
                long[] v = ll.basis(i, j);
                int setBits = 0;
                int q = -1;
                for (int k = 0; k < v.length; k++) {
                    setBits += Long.bitCount(v[k]);
                    if (v[k] != 0) {
                        q = low[k] + Long.numberOfTrailingZeros(v[k]);
                    }
                }
                if (setBits == 0) {
                    replica.add(new Iter(2, 1L << j, axis));
                    continue;
                }
                if (setBits > 1) {
                    return Result.absent("basis " + in.name() + "=" + (1L << j) + " -> " + LinearLayout.tuple(v)
                            + " sets " + setBits + " output bits: an XOR mix (a swizzle), which an Axe layout cannot"
                            + " express by adding coordinates; compose the swizzle after the layout instead");
                }
                if (producer[q] != null) {
                    LinearLayout.Dim other = ll.inputs().get(producer[q][0]);
                    return Result.absent("bases " + other.name() + "=" + (1L << producer[q][1]) + " and " + in.name()
                            + "=" + (1L << j) + " are both " + LinearLayout.tuple(v) + ": their XOR maps to 0, the map is"
                            + " not injective on non-zero bases");
                }
                producer[q] = new int[] {i, j};
            }
        }
        List<Iter> shard = new ArrayList<>();
        for (int q = total - 1; q >= 0; q--) {
            if (producer[q] == null) {
                return Result.absent("output bit " + outputBitName(outs, low, q) + " of " + ll
                        + " is produced by no input bit: the linear layout is not surjective, and an Axe layout maps"
                        + " every logical index");
            }
            shard.add(new Iter(2, 1L << producer[q][1], Axis.of(ll.inputs().get(producer[q][0]).name())));
        }
        long[] dims = new long[outs.size()];
        for (int k = 0; k < dims.length; k++) {
            dims[k] = outs.get(k).size();
        }
        Layout layout = new Layout(Canonicalize.canonicalShard(shard), mergeReplicas(replica), new TreeMap<>());
        return Result.of(new ShapedLayout(layout, Shape.of(dims)));
    }

    private static String outputBitName(List<LinearLayout.Dim> outs, int[] low, int q) {
        for (int k = 0; k < outs.size(); k++) {
            if (q >= low[k] && q < low[k] + outs.get(k).bits()) {
                return outs.get(k).name() + " bit " + (q - low[k]);
            }
        }
        return "bit " + q;
    }

    /** Replica bits (2, 2^b @X) sorted by axis and bit, runs of consecutive bits merged into (2^n, 2^b @X). */
    private static List<Iter> mergeReplicas(List<Iter> bits) {
        List<Iter> sorted = new ArrayList<>(bits);
        sorted.sort(Comparator.comparing(Iter::axis).thenComparingLong(Iter::stride));
        List<Iter> out = new ArrayList<>();
        for (Iter it : sorted) {
            Iter last = out.isEmpty() ? null : out.get(out.size() - 1);
            if (last != null && last.axis().equals(it.axis()) && last.stride() * last.extent() == it.stride()) {
                out.set(out.size() - 1, new Iter(last.extent() * 2, last.stride(), last.axis()));
            } else {
                out.add(it);
            }
        }
        return out;
    }
}
