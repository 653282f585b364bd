package org.axe4j.schedules.trn;

import java.util.ArrayList;
import java.util.List;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Checks;
import org.axe4j.layout.Iter;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Shape;
import org.axe4j.targets.Trainium;

/**
 * Trainium on-chip memory as Axe axes, with the hardware's limits ({@link Trainium}). SBUF and PSUM are two-dimensional: a partition
 * axis {@code P} (128 partitions, one per engine lane) and a free axis {@code F} (bytes within a partition); PSUM
 * is further cut into {@code Bank}s of 2 KiB per partition, 8 of them. A TensorEngine matmul contracts over at most
 * 128 partitions, with at most 128 stationary and 512 moving free elements.
 *
 * <p>{@link #footprint} measures what a tile layout occupies (spans on P, F and Bank) and {@link #check} reports
 * every limit it breaks at once, naming the tile, its layout and the numbers. {@link #annotated} builds the usual
 * layout of a logical shape from a "P"/"F" annotation per dim (TIRx's trainium_layout convention): P dims
 * row-major on P, F dims row-major on F; a single P dim longer than 128 is split into an outer F part (outermost on F) and 128
 * partitions.
 */
public final class TrainiumMemory {
    private TrainiumMemory() {}

    // the figures themselves live in org.axe4j.targets.Trainium (one home per hardware fact)
    public static final Axis P = Trainium.P;
    public static final Axis F = Trainium.F;
    public static final Axis BANK = Trainium.BANK;
    public static final long PARTITIONS = Trainium.PARTITIONS;
    public static final long SBUF_BYTES_PER_PARTITION = Trainium.SBUF_BYTES_PER_PARTITION;
    public static final long PSUM_BANKS = Trainium.PSUM_BANKS;
    public static final long PSUM_BANK_BYTES = Trainium.PSUM_BANK_BYTES;
    public static final long MATMUL_CONTRACTION = Trainium.MATMUL_CONTRACTION;
    public static final long MATMUL_STATIONARY_FREE = Trainium.MATMUL_STATIONARY_FREE;
    public static final long MATMUL_MOVING_FREE = Trainium.MATMUL_MOVING_FREE;

    public enum Space {
        SBUF, PSUM
    }

    /** Partitions spanned, bytes per partition (within one bank for PSUM tiles with a Bank axis), banks spanned. */
    public record Footprint(long partitions, long freeBytes, long banks) {}

    public static Footprint footprint(Layout layout, int elementBytes, Space space) {
        long partitions = layout.spanOn(P) + layout.offsetOn(P);
        long freeBytes = Checks.mulSaturating(Math.max(0, layout.spanOn(F) + layout.offsetOn(F)), elementBytes);
        long banks;
        if (layout.axes().contains(BANK)) {
            banks = layout.spanOn(BANK) + layout.offsetOn(BANK);
        } else {
            banks = space == Space.PSUM ? Checks.ceilDiv(freeBytes, PSUM_BANK_BYTES) : 0;
        }
        return new Footprint(partitions, freeBytes, banks);
    }

    /** Throws {@link IllegalArgumentException} listing every limit the tile breaks; returns its footprint. */
    public static Footprint check(String name, Layout layout, Shape shape, int elementBytes, Space space) {
        List<String> problems = new ArrayList<>();
        if (!layout.admits(shape)) {
            problems.add("the layout does not admit the shape " + shape);
        }
        for (Axis a : layout.axes()) {
            if (!a.equals(P) && !a.equals(F) && !(space == Space.PSUM && a.equals(BANK))) {
                problems.add("axis " + a + " is not " + (space == Space.PSUM ? "P, F or Bank" : "P or F")
                        + " (" + space + " has no such axis)");
            }
        }
        if (!layout.replica().isEmpty()) {
            problems.add("replicas " + layout.replica() + ": an on-chip tile holds each element once");
        }
        Footprint fp = footprint(layout, elementBytes, space);
        if (fp.partitions() > PARTITIONS) {
            problems.add(fp.partitions() + " partitions > " + PARTITIONS);
        }
        if (space == Space.SBUF && fp.freeBytes() > SBUF_BYTES_PER_PARTITION) {
            problems.add(fp.freeBytes() + " bytes per partition > SBUF's " + SBUF_BYTES_PER_PARTITION);
        }
        if (space == Space.PSUM) {
            if (layout.axes().contains(BANK) && fp.freeBytes() > PSUM_BANK_BYTES) {
                problems.add(fp.freeBytes() + " bytes per partition in one bank > " + PSUM_BANK_BYTES);
            }
            if (fp.banks() > PSUM_BANKS) {
                problems.add(fp.banks() + " PSUM banks > " + PSUM_BANKS);
            }
        }
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException(space + " tile " + name + " " + shape + " with layout " + layout + ": "
                    + String.join("; ", problems));
        }
        return fp;
    }

    /** The layout of {@code shape} from one 'P' or 'F' per dim (see the class comment). */
    public static Layout annotated(String pf, Shape shape) {
        if (!pf.matches("[PF]*") || pf.length() != shape.rank()) {
            throw new IllegalArgumentException("annotation '" + pf + "' must be one P or F per dim of " + shape);
        }
        long pTotal = 1;
        int pDims = 0;
        for (int d = 0; d < pf.length(); d++) {
            if (pf.charAt(d) == 'P') {
                pTotal *= shape.dim(d);
                pDims++;
            }
        }
        boolean split = pDims == 1 && pTotal > PARTITIONS;
        if (split && pTotal % PARTITIONS != 0) {
            throw new IllegalArgumentException("annotation '" + pf + "' on " + shape + ": the P dim " + pTotal
                    + " is neither <= " + PARTITIONS + " nor a multiple of it");
        }
        if (!split && pTotal > PARTITIONS) {
            throw new IllegalArgumentException("annotation '" + pf + "' on " + shape + ": " + pTotal
                    + " partitions > " + PARTITIONS);
        }
        // F strides: row-major over the outer part of a split P dim (outermost, as TIRx's trainium_layout puts
        // it) and then the F dims in dim order
        List<long[]> fParts = new ArrayList<>(); // {dim, extent}
        if (split) {
            int p = pf.indexOf('P');
            fParts.add(new long[] {p, shape.dim(p) / PARTITIONS});
        }
        for (int d = 0; d < pf.length(); d++) {
            if (pf.charAt(d) == 'F') {
                fParts.add(new long[] {d, shape.dim(d)});
            }
        }
        long[] fStride = new long[pf.length()];
        long next = 1;
        for (int i = fParts.size() - 1; i >= 0; i--) {
            fStride[(int) fParts.get(i)[0]] = next;
            next *= fParts.get(i)[1];
        }
        long[] pStride = new long[pf.length()];
        next = 1;
        for (int d = pf.length() - 1; d >= 0; d--) {
            if (pf.charAt(d) == 'P') {
                pStride[d] = next;
                next *= split ? PARTITIONS : shape.dim(d);
            }
        }
        List<Iter> shard = new ArrayList<>();
        for (int d = 0; d < pf.length(); d++) {
            if (pf.charAt(d) == 'F') {
                shard.add(new Iter(shape.dim(d), fStride[d], F));
            } else if (split) {
                shard.add(new Iter(shape.dim(d) / PARTITIONS, fStride[d], F));
                shard.add(new Iter(PARTITIONS, 1, P));
            } else {
                shard.add(new Iter(shape.dim(d), pStride[d], P));
            }
        }
        return Layout.of(shard, List.of(), java.util.Map.of());
    }
}
