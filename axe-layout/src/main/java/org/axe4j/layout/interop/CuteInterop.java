package org.axe4j.layout.interop;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.TreeMap;
import org.axe4j.layout.AxeException;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Group;
import org.axe4j.layout.Grouped;
import org.axe4j.layout.Iter;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Result;
import org.axe4j.layout.Shape;

/**
 * CuTe {@code shape:stride} layouts and Axe layouts on one axis.
 *
 * <pre>
 *   toAxe(c)      : top-level mode k with leaves l_0..l_j (colexicographic, l_0 fastest) becomes the
 *                   Axe block (l_j.size, l_j.stride@a) ... (l_0.size, l_0.stride@a); blocks in mode order.
 *                   For every coordinate x of c.topShape():  toAxe(c)(x) = { c.apply(x) @ a }.
 *   toAxeFlat(c)  : all leaves reversed.  For every flat i:  toAxeFlat(c)(i) = { c.applyFlat(i) @ a }.
 *   fromAxe(L, S) : normal shard of L (unit iters dropped, contiguous iters merged), grouped by S;
 *                   block k = (e_0,s_0)..(e_j,s_j) becomes mode k = (e_j,...,e_0):(s_j,...,s_0).
 * </pre>
 *
 * Example: {@code (2,(3,4)):(1,(2,6))} becomes {@code S[(2,4,3):(1,6,2)]} for shape (2,12): coordinate (1,5)
 * is (1, 5 = 2 + 3*1) in CuTe, giving 1 + 2*2 + 6*1 = 11, and Axe digit (1,1,2) gives 1 + 6 + 4 = 11.
 */
public final class CuteInterop {
    private CuteInterop() {}

    /** {@link #toAxe(CuteLayout, Axis)} on the memory axis {@code m}. */
    public static Layout toAxe(CuteLayout c) {
        return toAxe(c, Axis.M);
    }

    /** The Axe layout on {@code axis} that agrees with {@code c} on every coordinate of {@code c.topShape()}. */
    public static Layout toAxe(CuteLayout c, Axis axis) {
        List<Iter> shard = new ArrayList<>();
        for (CuteLayout mode : c.modes()) {
            shard.addAll(reversedLeaves(mode, axis));
        }
        return new Layout(shard, List.of(), new TreeMap<>());
    }

    /** The Axe layout on {@code m} whose flat map equals CuTe's colexicographic flat map. */
    public static Layout toAxeFlat(CuteLayout c) {
        return new Layout(reversedLeaves(c, Axis.M), List.of(), new TreeMap<>());
    }

    private static List<Iter> reversedLeaves(CuteLayout mode, Axis axis) {
        List<CuteLayout.Leaf> leaves = mode.leaves();
        List<Iter> iters = new ArrayList<>();
        for (int i = leaves.size() - 1; i >= 0; i--) {
            iters.add(new Iter(leaves.get(i).size(), leaves.get(i).stride(), axis));
        }
        return iters;
    }

    /** The CuTe layout with top-level shape {@code shape} that agrees with {@code l}, if one is found. */
    public static Optional<CuteLayout> fromAxe(Layout l, Shape shape) {
        return tryFromAxe(l, shape).toOptional();
    }

    /**
     * {@link #fromAxe} with the reason for a refusal: replicas, an offset, several axes, or a shard that
     * cannot be grouped by {@code shape}. Throws INVALID if {@code l} does not admit {@code shape}.
     */
    public static Result<CuteLayout> tryFromAxe(Layout l, Shape shape) {
        if (!l.admits(shape)) {
            throw new AxeException(AxeException.Kind.INVALID, "CuTe conversion: shape " + shape + " (size "
                    + shape.size() + ") is not admitted by layout " + l + " (size " + l.size() + ")");
        }
        if (shape.rank() == 0) {
            return Result.absent("shape " + shape + " has rank 0; a CuTe layout has at least one mode");
        }
        if (!l.replica().isEmpty()) {
            return Result.absent("layout " + l + " has replicas " + l.replica()
                    + "; a CuTe layout maps each coordinate to one integer");
        }
        if (!l.offset().isEmpty()) {
            return Result.absent("layout " + l + " has offset " + l.offsetPoint()
                    + "; a CuTe layout has none (it would belong to the pointer)");
        }
        List<Iter> shard = new ArrayList<>();
        for (Iter it : l.shard()) {
            if (it.extent() > 1) {
                shard.add(it);
            }
        }
        long axes = shard.stream().filter(it -> it.stride() != 0).map(Iter::axis).distinct().count();
        if (axes > 1) {
            return Result.absent("layout " + l + " uses several axes " + l.axes()
                    + "; a CuTe layout has one integer codomain");
        }
        Result<Grouped> grouped = Group.tryGroup(Layout.of(shard, List.of(), java.util.Map.of()), shape);
        if (grouped.isEmpty()) {
            return Result.absent(grouped.reason());
        }
        List<CuteLayout> modes = new ArrayList<>();
        for (int k = 0; k < shape.rank(); k++) {
            modes.add(mode(grouped.get().block(k)));
        }
        return Result.of(new CuteLayout.Tuple(modes));
    }

    /** A block (outer iter first) as a CuTe mode (fastest leaf first). */
    private static CuteLayout mode(List<Iter> block) {
        if (block.isEmpty()) {
            return new CuteLayout.Leaf(1, 0);
        }
        if (block.size() == 1) {
            return new CuteLayout.Leaf(block.get(0).extent(), block.get(0).stride());
        }
        List<CuteLayout> leaves = new ArrayList<>();
        for (int i = block.size() - 1; i >= 0; i--) {
            leaves.add(new CuteLayout.Leaf(block.get(i).extent(), block.get(i).stride()));
        }
        return new CuteLayout.Tuple(leaves);
    }
}
