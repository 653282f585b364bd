package org.axe4j.passes.transform;

import java.util.List;
import java.util.Optional;
import org.axe4j.layout.AxeException;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Group;
import org.axe4j.layout.Grouped;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Result;
import org.axe4j.layout.Shape;
import org.axe4j.layout.TrainiumLayout;
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

    /**
     * The SBUF layout of {@code shape} for annotation {@code pf} ({@link TrainiumLayout#annotated}, TIRx's
     * {@code TileLayout.trainium}); IllegalArgumentException naming what fails.
     */
    static Layout annotated(String pf, Long[] shape) {
        try {
            return TrainiumLayout.annotated(pf, new Shape(List.of(shape)));
        } catch (AxeException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
    }

    /**
     * The PSUM form ({@link TrainiumLayout#toPsum}, TIRx's {@code to_psum}): an F iter whose stride is a multiple of
     * 512 moves to Bank (stride / 512); one whose stride divides 512 stays on F while it fits a bank, else splits into
     * Bank (extent / c, 1) and F (c, stride), c = 512 / stride. IllegalArgumentException where there is none.
     */
    static Layout toPsum(Layout sbuf) {
        try {
            return TrainiumLayout.toPsum(sbuf);
        } catch (AxeException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
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
