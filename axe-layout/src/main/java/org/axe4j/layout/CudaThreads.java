package org.axe4j.layout;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The thread axes of a CUDA target as digits of one another (TIRx's axis fusers and splitters, which TIRx applies
 * while a {@code cuda} target is current):
 *
 * <pre>
 *   tx = 32 * warpid + laneid = 128 * wgid + tid_in_wg,   tid_in_wg = 32 * wid_in_wg + laneid,   warpid = 4 * wgid + wid_in_wg
 * </pre>
 *
 * Each axis counts units of an inner scope (thread, warp, warpgroup) within an outer one (warp, warpgroup, CTA). A
 * layout's thread axes span a scope pair: the innermost unit any of them counts and the outermost scope of the chain
 * ({@link #scopePair}, TIRx's {@code TileLayout::GetScope}). {@link #fuse} writes every thread axis inside that pair
 * on the one axis counting its inner units within its outer scope ({@code laneid} and {@code warpid} in a CTA become
 * {@code tx}: {@code (e, s@warpid)} is {@code (e, 32s@tx)}), so that two layouts of the same threads compare by map;
 * {@link #split} writes {@code tx} (or {@code tid_in_wg}) back as warps and lanes, for comparing a CTA layout with a
 * warp-level one. Where TIRx's fusers leave an axis (or write it wrongly) axe4j differs, documented in docs/algebra.md.
 */
public final class CudaThreads {
    private CudaThreads() {}

    /** Threads per unit of each scope. */
    private static final Map<AxisScope, Long> THREADS = Map.of(AxisScope.THREAD, 1L, AxisScope.WARP, 32L,
            AxisScope.WARPGROUP, 128L, AxisScope.CTA, 0L);

    /** (inner unit, outer scope) of each CUDA thread axis. */
    private static final Map<String, AxisScope[]> PAIRS = Map.of(
            "laneid", new AxisScope[] {AxisScope.THREAD, AxisScope.WARP},
            "tid_in_wg", new AxisScope[] {AxisScope.THREAD, AxisScope.WARPGROUP},
            "tx", new AxisScope[] {AxisScope.THREAD, AxisScope.CTA},
            "wid_in_wg", new AxisScope[] {AxisScope.WARP, AxisScope.WARPGROUP},
            "warpid", new AxisScope[] {AxisScope.WARP, AxisScope.CTA},
            "wgid", new AxisScope[] {AxisScope.WARPGROUP, AxisScope.CTA});

    /** The axis counting {@code inner} units within {@code outer}. */
    private static Optional<Axis> axisOf(AxisScope inner, AxisScope outer) {
        return PAIRS.entrySet().stream().filter(e -> e.getValue()[0] == inner && e.getValue()[1] == outer)
                .map(e -> Axis.of(e.getKey())).findFirst();
    }

    /**
     * {@code (innermost unit, outermost scope)} of the CUDA thread axes of {@code l}'s canonical form (extent-1 iters
     * do not count, as in TIRx, which drops them first), or empty without any; other thread axes (blocks, clusters)
     * are left out. The chain need not be connected ({@code laneid} with {@code wgid} has no warp digit: it is 0), but
     * two axes counting the same unit within different scopes ({@code warpid} and {@code wid_in_wg}) are INVALID.
     */
    public static Optional<AxisScope[]> scopePair(Layout l) {
        AxisScope inner = null;
        AxisScope outer = null;
        Map<AxisScope, Axis> counting = new TreeMap<>();
        for (Axis a : Canonicalize.canonicalize(l).axes()) {
            AxisScope[] pair = PAIRS.get(a.name());
            if (pair == null) {
                continue;
            }
            Axis other = counting.putIfAbsent(pair[0], a);
            if (other != null && PAIRS.get(other.name())[1] != pair[1]) {
                throw AxeException.invalid("CUDA thread axes: %s and %s of %s both count %ss, within different scopes",
                        other, a, l, pair[0].name().toLowerCase(java.util.Locale.ROOT));
            }
            inner = inner == null || pair[0].isInside(inner) ? pair[0] : inner;
            outer = outer == null || outer.isInside(pair[1]) ? pair[1] : outer;
        }
        return inner == null ? Optional.empty() : Optional.of(new AxisScope[] {inner, outer});
    }

    /**
     * Every CUDA thread axis of {@code l} on the axis of the layout's scope pair, strides scaled by the threads of its
     * unit over those of the pair's unit; offsets on axes fused together add up. The result's points are the
     * layout's, each thread coordinate replaced by its digit sum; same layout without CUDA thread axes.
     */
    public static Layout fuse(Layout l) {
        Optional<AxisScope[]> pair = scopePair(l);
        if (pair.isEmpty()) {
            return l;
        }
        Axis target = axisOf(pair.get()[0], pair.get()[1]).orElseThrow();
        long unit = THREADS.get(pair.get()[0]);
        List<Iter> shard = new ArrayList<>();
        l.shard().forEach(it -> shard.add(fused(it, target, unit)));
        List<Iter> replica = new ArrayList<>();
        l.replica().forEach(it -> replica.add(fused(it, target, unit)));
        TreeMap<Axis, Long> offset = new TreeMap<>();
        l.offset().forEach((a, v) -> {
            Iter it = fused(new Iter(1, v, a), target, unit);
            offset.merge(it.axis(), it.stride(), (x, y) -> Checks.add("fused offset on " + it.axis(), x, y));
        });
        return new Layout(shard, replica, offset);
    }

    private static Iter fused(Iter it, Axis target, long targetUnit) {
        AxisScope[] pair = PAIRS.get(it.axis().name());
        if (pair == null || it.axis().equals(target)) {
            return it;
        }
        long factor = THREADS.get(pair[0]) / targetUnit;
        return new Iter(it.extent(), Checks.mul(() -> "stride of " + it + " fused onto " + target, it.stride(), factor),
                target);
    }

    /**
     * {@code tx} (within a CTA) or {@code tid_in_wg} (within a warpgroup) written as {@code warpid}/{@code wid_in_wg}
     * and {@code laneid} (scope {@code WARP}), or {@code tx} as {@code wgid} and {@code tid_in_wg} (scope
     * {@code WARPGROUP}); TIRx's splitters. An iter {@code (e, s)} of a thread axis with {@code n} threads per new
     * unit: within one unit ({@code e s <= n}) it stays on the inner axis; with {@code n % s == 0} and {@code e s % n == 0} it splits into {@code (e s / n, 1)} outer and
     * {@code (n / s, s)} inner; with {@code s % n == 0} it is {@code (e, s / n)} outer. Any other iter, and an offset
     * that is not a multiple of {@code n} or below it, has no such split: NOT_REPRESENTABLE naming it.
     */
    public static Layout split(Layout l, AxisScope scope) {
        List<Iter> shard = new ArrayList<>();
        for (Iter it : l.shard()) {
            shard.addAll(splitIter(l, it, scope));
        }
        List<Iter> replica = new ArrayList<>();
        for (Iter it : l.replica()) {
            replica.addAll(splitIter(l, it, scope));
        }
        TreeMap<Axis, Long> offset = new TreeMap<>();
        l.offset().forEach((a, v) -> {
            Optional<Axis[]> axes = splitAxes(a, scope);
            if (axes.isEmpty()) {
                offset.merge(a, v, Long::sum);
                return;
            }
            long n = THREADS.get(scope);
            offset.merge(axes.get()[0], Math.floorDiv(v, n), Long::sum);
            offset.merge(axes.get()[1], Math.floorMod(v, n), Long::sum);
        });
        offset.values().removeIf(v -> v == 0);
        return new Layout(shard, replica, offset);
    }

    /** {outer, inner} axes a thread axis splits into at {@code scope}, or empty when it does not split there. */
    private static Optional<Axis[]> splitAxes(Axis a, AxisScope scope) {
        AxisScope[] pair = PAIRS.get(a.name());
        if (pair == null || pair[0] != AxisScope.THREAD || !scope.isInside(pair[1]) || !pair[0].isInside(scope)) {
            return Optional.empty();
        }
        Optional<Axis> outer = axisOf(scope, pair[1]);
        Optional<Axis> inner = axisOf(pair[0], scope);
        return outer.isPresent() && inner.isPresent() ? Optional.of(new Axis[] {outer.get(), inner.get()})
                : Optional.empty();
    }

    private static List<Iter> splitIter(Layout l, Iter it, AxisScope scope) {
        Optional<Axis[]> axes = splitAxes(it.axis(), scope);
        if (axes.isEmpty()) {
            return List.of(it);
        }
        long n = THREADS.get(scope);
        long e = it.extent();
        long s = it.stride();
        if (s > 0 && e * s <= n) {
            return List.of(new Iter(e, s, axes.get()[1]));
        }
        if (s > 0 && n % s == 0 && (e * s) % n == 0) {
            return List.of(new Iter(e * s / n, 1, axes.get()[0]), new Iter(n / s, s, axes.get()[1]));
        }
        if (s % n == 0) {
            return List.of(new Iter(e, s / n, axes.get()[0]));
        }
        throw AxeException.notRepresentable("CUDA thread axes: iter %s of %s crosses %s boundaries (%d threads) without"
                + " a whole number of them, so it is not %s digits", it, l, scope.name().toLowerCase(java.util.Locale.ROOT),
                n, String.join("/", axes.get()[0].name(), axes.get()[1].name()));
    }
}
