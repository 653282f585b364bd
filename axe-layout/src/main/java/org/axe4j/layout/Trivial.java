package org.axe4j.layout;

import java.util.List;

/**
 * TIRx's {@code is_trivial()} of a TileLayout: after TIRx's canonicalization (extent-1 shard iters and zero offsets
 * dropped, consecutive iters on one axis fused when {@code e_{k+1} s_{k+1} = s_k}) the layout is one stride-1 iter
 * on a memory axis, or no iter at all, with no replica and no offset: the identity onto one memory axis. So the
 * iters of extent other than 1 all lie on one memory axis, row-major with the innermost stride 1
 * ({@code s_k = e_{k+1} s_{k+1}}, {@code s_last = 1}); a shard of extent-1 iters only is trivial when its first
 * iter's axis is a memory axis (TIRx keeps it as {@code (1, 1@axis)}). A memory axis is any axis that is not one of
 * TIRx's thread axes ({@link ScopePair#isTirxThreadAxis}). Replicas count even of extent 1 (TIRx keeps them).
 */
public final class Trivial {
    private Trivial() {}

    public static boolean isTrivial(Layout l) {
        if (!l.replica().isEmpty() || !l.offset().isEmpty()) {
            return false;
        }
        List<Iter> kept = l.shard().stream().filter(it -> it.extent() != 1).toList();
        if (kept.isEmpty()) {
            return l.shard().isEmpty() || !ScopePair.isTirxThreadAxis(l.shard().get(0).axis());
        }
        Axis axis = kept.get(0).axis();
        if (ScopePair.isTirxThreadAxis(axis) || kept.get(kept.size() - 1).stride() != 1) {
            return false;
        }
        for (int k = 0; k + 1 < kept.size(); k++) {
            Iter next = kept.get(k + 1);
            if (!next.axis().equals(axis)
                    || Checks.mulSaturating(next.extent(), next.stride()) != kept.get(k).stride()) {
                return false;
            }
        }
        return true;
    }
}
