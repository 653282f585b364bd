package org.axe4j.schedules.cpu;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.axe4j.layout.Layout;
import org.axe4j.schedules.AffineAccess;

/**
 * The blocked GEMM's packed panels as Axe layouts, from logical coordinates to the panel buffer's offset.
 *
 * <p>The moving operand V (v panels of one K block): logical (k, v) over {@code kc x panels*nv}, with
 * {@code v = p * nv + j}, lives at {@code (p * kc + k) * nv + j}: {@code S[(kc, panels, nv):(nv, kc*nv, 1)]}.
 * The other operand U (u panels of one u block): logical (u, k) over {@code mc x kc}, with {@code u = q * mu + i},
 * lives at {@code (q * kc + k) * mu + i}: {@code S[(mc/mu, mu, kc):(kc*mu, 1, mu)]}. Both are K-major inside a
 * panel, so the micro-kernel reads them with unit stride.
 *
 * <p>A V packed once for all K blocks ({@link #packedWeight}): logical (k, v) of the whole K x EV matrix, with
 * {@code k = kb * kc + k'} and {@code v = p * nv + j}, lives at {@code ((kb * panels + p) * kc + k') * nv + j}. The
 * K block is outermost, so block kb is the contiguous {@code panels * kc * nv} elements that packing V for that block
 * writes, and the micro-kernel reads them in place at offset {@code kb * panels * kc * nv}.
 */
final class GemmPacking {
    private GemmPacking() {}

    /**
     * {role: layout text} for V ({@code moving}) and U ({@code other}); each parses as a {@link Layout}.
     */
    static Map<String, String> layouts(String moving, String other, GemmBlocking b, long ev) {
        long panels = (ev + b.nv() - 1) / b.nv();
        Layout v = Layout.parse("S[(" + b.kc() + "," + panels + "," + b.nv() + "):(" + b.nv() + "," + b.kc() * b.nv()
                + ",1)]");
        Layout u = Layout.parse("S[(" + b.mc() / b.mu() + "," + b.mu() + "," + b.kc() + "):(" + b.kc() * b.mu()
                + ",1," + b.mu() + ")]");
        Map<String, String> out = new LinkedHashMap<>();
        out.put(moving, v.toString());
        out.put(other, u.toString());
        return Map.copyOf(out);
    }

    /**
     * Why a K x EV matrix cannot be stored packed for the K block {@code kc} and panel width {@code nv} (the packed
     * layout splits k and v into whole blocks and panels), or null when it can.
     */
    static String packedWeightRefusal(long k, long ev, long kc, long nv) {
        if (k % kc != 0 || ev % nv != 0) {
            return "a packed weight needs K a multiple of the K block and N a multiple of the panel width: K=" + k
                    + ", N=" + ev + ", kc=" + kc + ", nv=" + nv;
        }
        return null;
    }

    /**
     * The packed weight's layout over a (K, EV) buffer: {@code S[(K/kc, kc, EV/nv, nv):(panels*kc*nv, nv, kc*nv,
     * 1)]}, digits row-major over the buffer (k's two digits, then v's).
     */
    static Layout packedWeight(long k, long ev, long kc, long nv) {
        String refusal = packedWeightRefusal(k, ev, kc, nv);
        if (refusal != null) {
            throw new IllegalArgumentException(refusal);
        }
        long panels = ev / nv;
        return Layout.parse("S[(" + k / kc + "," + kc + "," + panels + "," + nv + "):(" + panels * kc * nv + "," + nv
                + "," + kc * nv + ",1)]");
    }

    /**
     * Whether the loops that walk V's k and v dims ({@code kPieces}, {@code vPieces}, innermost first, as
     * {@link AffineAccess} gives them) are those of {@link #packedWeight}: k as (kc, nv), (K/kc, panels*kc*nv) and
     * v as (nv, 1), (panels, kc*nv), after dropping unit loops and merging loops whose strides continue each other.
     */
    static boolean isPackedWeight(List<AffineAccess.Piece> kPieces, List<AffineAccess.Piece> vPieces, long k,
            long ev, long kc, long nv) {
        if (packedWeightRefusal(k, ev, kc, nv) != null) {
            return false;
        }
        long panels = ev / nv;
        List<AffineAccess.Piece> kWant = List.of(new AffineAccess.Piece(kc, nv),
                new AffineAccess.Piece(k / kc, panels * kc * nv));
        List<AffineAccess.Piece> vWant = List.of(new AffineAccess.Piece(nv, 1), new AffineAccess.Piece(panels,
                kc * nv));
        return normalized(kPieces).equals(normalized(kWant)) && normalized(vPieces).equals(normalized(vWant));
    }

    /** Loops without unit extents, each merged into the one inside it when it continues its stride. */
    static List<AffineAccess.Piece> normalized(List<AffineAccess.Piece> inner) {
        List<AffineAccess.Piece> out = new ArrayList<>();
        for (AffineAccess.Piece p : inner) {
            if (p.extent() == 1) {
                continue;
            }
            if (!out.isEmpty()) {
                AffineAccess.Piece last = out.get(out.size() - 1);
                if (last.extent() * last.stride() == p.stride() && last.distributed() == p.distributed()) {
                    out.set(out.size() - 1, new AffineAccess.Piece(last.extent() * p.extent(), last.stride(),
                            last.distributed()));
                    continue;
                }
            }
            out.add(p);
        }
        return List.copyOf(out);
    }
}
