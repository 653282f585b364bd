package org.axe4j.layout;

import java.util.ArrayList;
import java.util.List;

/**
 * TIRx's {@code apply_to_shape}: the value each shard iter takes at a coordinate of an input shape. For
 * {@code coord} of shape {@code S}, with {@code x = flatten(coord, S)}, the values are the row-major digits of
 * {@code x} over a shard with the same map as L, so that {@code L(coord) = sum_i v_i * stride_i@axis_i + Q}:
 * <ul>
 *   <li>where L's shard splits by S without fusing iters (iters of extent 1 dropped, an iter cut where a
 *       dimension ends inside it, one iter of extent 1 for a dimension of 1: TIRx's {@code group}), that split
 *       shard, so each dimension's coordinate is split within its own iters;</li>
 *   <li>otherwise L's own shard (TIRx's fallback: flatten, then split over the shard's extents).</li>
 * </ul>
 * The answer names that shard ({@link Values#layout}). TIRx takes symbolic coordinates and does not check them;
 * axe4j takes integers and refuses a coordinate outside S or a shape L does not admit.
 */
public final class ApplyToShape {
    private ApplyToShape() {}

    /** The values and the layout whose shard they index (the same map as the layout asked about). */
    public record Values(Layout layout, List<Long> values) {
        public Values {
            values = List.copyOf(values);
        }
    }

    /** The shard values of {@code coord} of {@code shape} (see the class comment). */
    public static Values applyToShape(Layout l, Shape shape, long... coord) {
        if (!l.admits(shape)) {
            throw AxeException.invalid("apply_to_shape: layout %s (size %d) does not admit input_shape %s (size %d)",
                    l, l.size(), shape, shape.size());
        }
        if (coord.length != shape.rank()) {
            throw AxeException.invalid("apply_to_shape: coord %s has rank %d but input_shape %s has rank %d",
                    java.util.Arrays.toString(coord), coord.length, shape, shape.rank());
        }
        long x;
        try {
            x = shape.flatten(coord);
        } catch (AxeException e) {
            throw AxeException.invalid("apply_to_shape: %s (layout %s)", e.getMessage(), l);
        }
        Layout split = splitBy(l, shape);
        List<Long> values = new ArrayList<>();
        List<Iter> shard = split.shard();
        long rest = x;
        for (int i = shard.size() - 1; i >= 0; i--) {
            values.add(0, rest % shard.get(i).extent());
            rest /= shard.get(i).extent();
        }
        return new Values(split, values);
    }

    /**
     * L with its shard cut so that consecutive iters multiply to each dimension of {@code shape}, iters never
     * fused and those of extent 1 dropped; L itself where some iter's extent neither divides nor is a multiple
     * of what a dimension still needs.
     */
    static Layout splitBy(Layout l, Shape shape) {
        List<Iter> queue = new ArrayList<>();
        for (Iter it : l.shard()) {
            if (it.extent() != 1) {
                queue.add(it);
            }
        }
        List<Iter> out = new ArrayList<>();
        int next = 0;
        for (int k = 0; k < shape.rank(); k++) {
            long need = shape.dim(k);
            if (need == 1) {
                out.add(new Iter(1, 1, Axis.M)); // a dimension of 1 has one iter of extent 1 (its value is 0)
            }
            while (need > 1) {
                Iter it = queue.get(next);
                long e = it.extent();
                if (need % e == 0) {
                    out.add(it);
                    need /= e;
                    next++;
                } else if (e % need == 0) {
                    out.add(new Iter(need, Checks.mul("apply_to_shape split stride", it.stride(), e / need),
                            it.axis()));
                    queue.set(next, new Iter(e / need, it.stride(), it.axis()));
                    need = 1;
                } else {
                    return l;
                }
            }
        }
        return l.withShard(out);
    }
}
