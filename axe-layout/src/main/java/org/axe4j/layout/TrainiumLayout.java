package org.axe4j.layout;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.axe4j.targets.Trainium;

/**
 * Trainium tile layouts as TIRx writes them ({@code TileLayout.trainium}, {@code to_psum}, {@code is_trainium}).
 *
 * <p>{@link #annotated}: one 'P' or 'F' per dim; the P dims row-major on P, the F dims row-major on F, each iter in
 * its dim's place. A single P dim longer than 128 (then a multiple of 128) splits into {@code (p/128)} on F, the
 * outermost F digit, and {@code 128} on P; several P dims must multiply to at most 128.
 *
 * <p>{@link #toPsum}: F cut into PSUM banks of 512 elements, iter by iter: an F iter {@code (e, s@F)} with
 * {@code 512 | s} moves to {@code (e, s/512 @Bank)}; one with {@code s | 512} stays while {@code e < c = 512/s} and
 * otherwise, when {@code c | e}, splits into {@code (e/c, 1@Bank), (c, s@F)}; any other F iter has no PSUM form
 * (NOT_REPRESENTABLE). Other shard iters stay. Replicas and offsets on axes other than F stay (TIRx drops every
 * replica and offset); those on F are refused, since cutting F into banks would have to move them too.
 *
 * <p>{@link #isTrainium}: no shard iter on a memory axis other than P, F and Bank (thread axes, replicas and offsets
 * are not looked at), TIRx's {@code TileLayoutIsTrainium}.
 */
public final class TrainiumLayout {
    private TrainiumLayout() {}

    private static final Axis P = Trainium.P;
    private static final Axis F = Trainium.F;
    private static final Axis BANK = Trainium.BANK;
    private static final long PARTITIONS = Trainium.PARTITIONS;
    private static final long BANK_ELEMENTS = Trainium.PSUM_BANK_FLOAT32;

    /** TIRx's {@code TileLayout.trainium(annotation, shape)} (see the class comment). */
    public static Layout annotated(String annotation, Shape shape) {
        if (annotation == null || !annotation.matches("[PF]*")) {
            throw AxeException.invalid("trainium: annotation '%s' must be a string of 'P' and 'F'", annotation);
        }
        if (annotation.length() != shape.rank()) {
            throw AxeException.invalid("trainium: annotation '%s' has %d letters but shape %s has %d dims",
                    annotation, annotation.length(), shape, shape.rank());
        }
        long pTotal = 1;
        int pDims = 0;
        for (int d = 0; d < shape.rank(); d++) {
            if (annotation.charAt(d) == 'P') {
                pTotal = Checks.mulSaturating(pTotal, shape.dim(d));
                pDims++;
            }
        }
        boolean split = pDims == 1 && pTotal > PARTITIONS;
        if (split && pTotal % PARTITIONS != 0) {
            throw AxeException.invalid("trainium: annotation '%s' on %s: the one P dim %d must be <= %d or a "
                    + "multiple of %d", annotation, shape, pTotal, PARTITIONS, PARTITIONS);
        }
        if (pDims > 1 && pTotal > PARTITIONS) {
            throw AxeException.invalid("trainium: annotation '%s' on %s: the %d P dims hold %s partitions, more than "
                    + "%d", annotation, shape, pDims, pTotal == Long.MAX_VALUE ? "over 2^63" : pTotal, PARTITIONS);
        }
        // F strides row-major over (the outer part of a split P dim, then the F dims in order); P strides
        // row-major over the P dims (a split one counting 128)
        long[] fStride = new long[shape.rank()];
        long next = 1;
        for (int d = shape.rank() - 1; d >= 0; d--) {
            if (annotation.charAt(d) == 'F') {
                fStride[d] = next;
                next = Checks.mul("trainium: F size of " + shape, next, shape.dim(d));
            }
        }
        long outerStride = next;
        long[] pStride = new long[shape.rank()];
        next = 1;
        for (int d = shape.rank() - 1; d >= 0; d--) {
            if (annotation.charAt(d) == 'P') {
                pStride[d] = next;
                next *= split ? PARTITIONS : shape.dim(d);
            }
        }
        List<Iter> shard = new ArrayList<>();
        for (int d = 0; d < shape.rank(); d++) {
            if (annotation.charAt(d) == 'F') {
                shard.add(new Iter(shape.dim(d), fStride[d], F));
            } else if (split) {
                shard.add(new Iter(shape.dim(d) / PARTITIONS, outerStride, F));
                shard.add(new Iter(PARTITIONS, 1, P));
            } else {
                shard.add(new Iter(shape.dim(d), pStride[d], P));
            }
        }
        return Layout.of(shard, List.of(), Map.of());
    }

    /** TIRx's {@code TileLayout.trainium(annotation, shape, is_psum)}. */
    public static Layout annotated(String annotation, Shape shape, boolean psum) {
        Layout sbuf = annotated(annotation, shape);
        return psum ? toPsum(sbuf) : sbuf;
    }

    /** TIRx's {@code to_psum()} (see the class comment). */
    public static Layout toPsum(Layout l) {
        if (l.replica().stream().anyMatch(it -> it.axis().equals(F)) || l.offset().containsKey(F)) {
            throw new AxeException(AxeException.Kind.NOT_REPRESENTABLE, "to_psum: " + l + " has a replica or an "
                    + "offset on F; cutting F into banks of " + BANK_ELEMENTS + " moves only shard iters");
        }
        List<Iter> out = new ArrayList<>();
        for (Iter it : l.shard()) {
            if (!it.axis().equals(F)) {
                out.add(it);
            } else if (it.stride() % BANK_ELEMENTS == 0) {
                out.add(new Iter(it.extent(), it.stride() / BANK_ELEMENTS, BANK));
            } else if (it.stride() > 0 && BANK_ELEMENTS % it.stride() == 0) {
                long c = BANK_ELEMENTS / it.stride();
                if (it.extent() < c) {
                    out.add(it);
                } else if (it.extent() % c == 0) {
                    out.add(new Iter(it.extent() / c, 1, BANK));
                    out.add(new Iter(c, it.stride(), F));
                } else {
                    throw new AxeException(AxeException.Kind.NOT_REPRESENTABLE, "to_psum: " + l + " has no PSUM "
                            + "form: F iter " + it + " neither fits a bank of " + BANK_ELEMENTS
                            + " nor fills whole banks (" + c + " elements each)");
                }
            } else {
                throw new AxeException(AxeException.Kind.NOT_REPRESENTABLE, "to_psum: " + l + " has no PSUM form: F "
                        + "stride " + it.stride() + " neither divides nor is a multiple of a bank of " + BANK_ELEMENTS);
            }
        }
        return Layout.of(out, l.replica(), new TreeMap<>(l.offset()));
    }

    /** TIRx's {@code is_trainium()} (see the class comment). */
    public static boolean isTrainium(Layout l) {
        return l.shard().stream().map(Iter::axis).allMatch(a -> ScopePair.isTirxThreadAxis(a) || a.equals(P)
                || a.equals(F) || a.equals(BANK));
    }
}
