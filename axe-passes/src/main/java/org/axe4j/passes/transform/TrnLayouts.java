package org.axe4j.passes.transform;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Group;
import org.axe4j.layout.Grouped;
import org.axe4j.layout.Iter;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Result;
import org.axe4j.layout.Shape;
import org.axe4j.targets.Trainium;

/**
 * Trainium tile layouts from a "P"/"F" annotation per dim, as TVM's {@code trainium_layout} builds them: the P dims
 * row-major on P, the F dims row-major on F; a single P dim longer than 128 (a multiple of 128) is split into 128
 * partitions and an outer part that becomes the outermost F digit. PSUM tiles then cut F into banks of 512
 * elements ({@link #toPsum}, TVM's {@code to_psum_layout}).
 */
final class TrnLayouts {
    static final Axis P = Trainium.P;
    static final Axis F = Trainium.F;
    static final Axis BANK = Trainium.BANK;
    static final long PARTITIONS = Trainium.PARTITIONS;
    /** PSUM bank: 2 KiB per partition, 512 float32 elements. */
    static final long BANK_ELEMENTS = Trainium.PSUM_BANK_FLOAT32;

    private TrnLayouts() {}

    /** The SBUF layout of {@code shape} for annotation {@code pf}; IllegalArgumentException naming what fails. */
    static Layout annotated(String pf, Long[] shape) {
        if (!pf.matches("[PF]*") || pf.length() != shape.length) {
            throw new IllegalArgumentException("annotation '" + pf + "' must be one P or F per dim of "
                    + java.util.Arrays.toString(shape));
        }
        long pTotal = 1;
        int pDims = 0;
        for (int d = 0; d < pf.length(); d++) {
            if (pf.charAt(d) == 'P') {
                pTotal *= shape[d];
                pDims++;
            }
        }
        boolean split = pDims == 1 && pTotal > PARTITIONS;
        if (split ? pTotal % PARTITIONS != 0 : pTotal > PARTITIONS) {
            throw new IllegalArgumentException("annotation '" + pf + "' on " + java.util.Arrays.toString(shape) + ": "
                    + pTotal + " elements on P, neither <= " + PARTITIONS + (pDims == 1 ? " nor a multiple of it" : ""));
        }
        // F strides row-major over [outer part of a split P dim] + the F dims in order
        long[] fStride = new long[pf.length()];
        long next = 1;
        for (int d = pf.length() - 1; d >= 0; d--) {
            if (pf.charAt(d) == 'F') {
                fStride[d] = next;
                next *= shape[d];
            }
        }
        long outerStride = next;
        long[] pStride = new long[pf.length()];
        next = 1;
        for (int d = pf.length() - 1; d >= 0; d--) {
            if (pf.charAt(d) == 'P') {
                pStride[d] = next;
                next *= split ? PARTITIONS : shape[d];
            }
        }
        List<Iter> shard = new ArrayList<>();
        for (int d = 0; d < pf.length(); d++) {
            if (pf.charAt(d) == 'F') {
                shard.add(new Iter(shape[d], fStride[d], F));
            } else if (split) {
                shard.add(new Iter(shape[d] / PARTITIONS, outerStride, F));
                shard.add(new Iter(PARTITIONS, 1, P));
            } else {
                shard.add(new Iter(shape[d], pStride[d], P));
            }
        }
        return Layout.of(shard, List.of(), java.util.Map.of());
    }

    /**
     * The PSUM form: an F iter whose stride is a multiple of 512 moves to Bank (stride / 512); one whose stride
     * divides 512 stays on F while it fits a bank, else splits into Bank (extent / c, 1) and F (c, stride), c =
     * 512 / stride.
     */
    static Layout toPsum(Layout sbuf) {
        List<Iter> out = new ArrayList<>();
        for (Iter it : sbuf.shard()) {
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
                    throw new IllegalArgumentException(sbuf + " has no PSUM form: F iter " + it
                            + " neither fits a bank of " + BANK_ELEMENTS + " nor fills whole banks");
                }
            } else {
                throw new IllegalArgumentException(sbuf + " has no PSUM form: F stride " + it.stride()
                        + " neither divides nor is a multiple of a bank of " + BANK_ELEMENTS);
            }
        }
        return Layout.of(out, sbuf.replica(), sbuf.offset());
    }

    /**
     * The annotation of a laid-out on-chip tile: a dim is 'P' when one of its iters is on P, else 'F' (F or Bank);
     * a unit dim takes the axis of its own unit iter ('F' when it has none). Empty when the layout does not group
     * by the shape.
     */
    static Optional<String> annotationOf(Layout l, Long[] shape) {
        Result<Grouped> g = Group.tryGroup(l, new Shape(List.of(shape)));
        if (g.isEmpty()) {
            return Optional.empty();
        }
        Axis[] units = CanonicalizeLayouts.unitAxes(l.shard(), shape);
        StringBuilder out = new StringBuilder();
        for (int d = 0; d < shape.length; d++) {
            boolean onP = g.get().block(d).stream().anyMatch(it -> it.axis().equals(P))
                    || (shape[d] == 1 && P.equals(units[d]));
            out.append(onP ? 'P' : 'F');
        }
        return Optional.of(out.toString());
    }
}
