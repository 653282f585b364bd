package org.axe4j.layout;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * TIRx's {@code TileLayout::GetScope}: the (innermost unit, outermost scope) pair of a layout's thread axes, read
 * off TIRx's axis table, where each thread axis counts units of one scope within another ({@code laneid}: threads
 * in a warp, {@code warpid}: warps in a CTA, {@code cbx}: CTAs in a cluster, ...). Without a thread axis in the
 * shard the pair is empty (replica and offset axes are not looked at then); otherwise every thread axis of the
 * shard, the replicas and the offset counts, extent-1 iters included (TIRx does not canonicalize first). The units
 * must chain: each unit within one scope only (INVALID: {@code warpid} and {@code wid_in_wg} both count warps),
 * and from the innermost unit, scope after scope, every axis's unit is reached (INVALID: {@code laneid} with
 * {@code wgid} leaves the warp-to-warpgroup link out), as TIRx checks.
 *
 * <p>Differences from TIRx, by design: grid axes ({@code bx}, {@code by}, {@code bz}, CTAs in the kernel) are
 * refused, NOT_REPRESENTABLE (TIRx's table gives them the scope {@code thread}, so that {@code bx} alone answers
 * (cta, thread) and {@code bx} with {@code tx} never returns; its scope names have no kernel). {@link CudaThreads}'s
 * pair differs on purpose too: it reads the canonical form and takes only the CUDA threads within a CTA, for
 * fusing axes.
 */
public final class ScopePair {
    private ScopePair() {}

    /** TIRx's thread axes: (the unit each counts, the scope it counts them within). */
    private static final Map<String, AxisScope[]> TIRX_THREAD_AXES = new LinkedHashMap<>();

    static {
        TIRX_THREAD_AXES.put("cbx", new AxisScope[] {AxisScope.CTA, AxisScope.CLUSTER});
        TIRX_THREAD_AXES.put("cby", new AxisScope[] {AxisScope.CTA, AxisScope.CLUSTER});
        TIRX_THREAD_AXES.put("cbz", new AxisScope[] {AxisScope.CTA, AxisScope.CLUSTER});
        TIRX_THREAD_AXES.put("tx", new AxisScope[] {AxisScope.THREAD, AxisScope.CTA});
        TIRX_THREAD_AXES.put("warpid", new AxisScope[] {AxisScope.WARP, AxisScope.CTA});
        TIRX_THREAD_AXES.put("laneid", new AxisScope[] {AxisScope.THREAD, AxisScope.WARP});
        TIRX_THREAD_AXES.put("wgid", new AxisScope[] {AxisScope.WARPGROUP, AxisScope.CTA});
        TIRX_THREAD_AXES.put("tid_in_wg", new AxisScope[] {AxisScope.THREAD, AxisScope.WARPGROUP});
        TIRX_THREAD_AXES.put("wid_in_wg", new AxisScope[] {AxisScope.WARP, AxisScope.WARPGROUP});
        for (String grid : new String[] {"bx", "by", "bz"}) {
            TIRX_THREAD_AXES.put(grid, new AxisScope[] {AxisScope.CTA, AxisScope.KERNEL});
        }
    }

    /** Is {@code a} one of TIRx's thread axes? Every other axis is a memory axis to TIRx (P, F, m, any new name). */
    public static boolean isTirxThreadAxis(Axis a) {
        return TIRX_THREAD_AXES.containsKey(a.name());
    }

    /** The pair of {@code l} (see the class comment). */
    public static Optional<AxisScope[]> of(Layout l) {
        return of(l, java.util.List.of());
    }

    /**
     * The pair of {@code l} whose offset also has (symbolic) terms on {@code moreOffsetAxes}, which count like
     * L's own offset axes.
     */
    public static Optional<AxisScope[]> of(Layout l, Collection<Axis> moreOffsetAxes) {
        if (l.shard().stream().noneMatch(it -> isTirxThreadAxis(it.axis()))) {
            return Optional.empty();
        }
        java.util.List<Axis> axes = new java.util.ArrayList<>();
        l.shard().forEach(it -> axes.add(it.axis()));
        l.replica().forEach(it -> axes.add(it.axis()));
        axes.addAll(l.offset().keySet());
        axes.addAll(moreOffsetAxes);
        Map<AxisScope, AxisScope> within = new TreeMap<>();
        Map<AxisScope, Axis> by = new TreeMap<>();
        AxisScope inner = null;
        for (Axis a : axes) {
            AxisScope[] pair = TIRX_THREAD_AXES.get(a.name());
            if (pair == null) {
                continue;
            }
            if (pair[1] == AxisScope.KERNEL) {
                throw new AxeException(AxeException.Kind.NOT_REPRESENTABLE, "get_scope: " + l + " has the grid axis "
                        + a + " (CTAs within the kernel); TIRx's execution scopes name no kernel scope");
            }
            AxisScope known = within.putIfAbsent(pair[0], pair[1]);
            if (known != null && known != pair[1]) {
                throw AxeException.invalid("get_scope: %s and %s of %s both count %ss, within %s and %s",
                        by.get(pair[0]), a, l, name(pair[0]), name(known), name(pair[1]));
            }
            by.putIfAbsent(pair[0], a);
            inner = inner == null || pair[0].isInside(inner) ? pair[0] : inner;
        }
        AxisScope outer = inner;
        int links = 0;
        while (within.containsKey(outer)) {
            outer = within.get(outer);
            links++;
        }
        if (links != within.size()) {
            throw AxeException.invalid("get_scope: the thread axes of %s do not chain from the %s up: %s (a scope "
                    + "between is counted by no axis)", l, name(inner), chain(within, by));
        }
        return Optional.of(new AxisScope[] {inner, outer});
    }

    /** TIRx's name of a scope: {@code thread}, {@code warp}, {@code warpgroup}, {@code cta}, {@code cluster}. */
    public static String name(AxisScope s) {
        return s.name().toLowerCase(java.util.Locale.ROOT);
    }

    private static String chain(Map<AxisScope, AxisScope> within, Map<AxisScope, Axis> by) {
        java.util.List<String> links = new java.util.ArrayList<>();
        within.forEach((unit, scope) -> links.add(by.get(unit) + ": " + name(unit) + "s in a " + name(scope)));
        return String.join(", ", links);
    }
}
