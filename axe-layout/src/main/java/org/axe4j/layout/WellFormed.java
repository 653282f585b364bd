package org.axe4j.layout;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * TIRx's {@code verify_well_formed}: the thread axes of a layout must index one chain of nested execution
 * scopes. Each thread axis counts units of an inner scope within an outer one ({@code laneid}: threads in a
 * warp, {@code warpid}: warps in a CTA, {@code tx}: threads in a CTA, {@code bx}: CTAs in the kernel, ...). The
 * layout is well-formed iff no two of its thread axes (shard, replicas and offset) count the same inner unit
 * within different outer scopes, and walking from the innermost unit outward, inner to outer, visits every pair
 * ({@code laneid} with {@code warpid} chains thread, warp, CTA; {@code laneid} with {@code wgid} leaves warps
 * within warpgroups out). Layouts without thread axes are well-formed.
 *
 * <p>TIRx raises instead of answering false, looks at the scopes only when the shard has a thread axis, and
 * registers {@code bx} as CTAs within a thread, where axe4j (and CUDA) have CTAs within the kernel;
 * {@code docs/divergences.md} lists the differences.
 */
public final class WellFormed {
    private WellFormed() {}

    /** The inner unit each known thread axis counts; its outer scope is {@link Axis#scope()}. */
    private static final Map<String, AxisScope> INNER = Map.ofEntries(
            Map.entry("laneid", AxisScope.THREAD), Map.entry("tx", AxisScope.THREAD),
            Map.entry("ty", AxisScope.THREAD), Map.entry("tz", AxisScope.THREAD),
            Map.entry("warpid", AxisScope.WARP), Map.entry("wid_in_wg", AxisScope.WARP),
            Map.entry("wgid", AxisScope.WARPGROUP),
            Map.entry("bx", AxisScope.CTA), Map.entry("by", AxisScope.CTA), Map.entry("bz", AxisScope.CTA),
            Map.entry("cta_id", AxisScope.CTA),
            Map.entry("cbx", AxisScope.CTA), Map.entry("cby", AxisScope.CTA), Map.entry("cbz", AxisScope.CTA));

    /** True iff {@link #problem} finds none. */
    public static boolean isWellFormed(Layout l) {
        return problem(l).isEmpty();
    }

    /** Why the thread axes of {@code l} are no chain of scopes, or empty when they are. */
    public static Optional<String> problem(Layout l) {
        List<Axis> threads = new ArrayList<>();
        l.shard().forEach(it -> threads.add(it.axis()));
        l.replica().forEach(it -> threads.add(it.axis()));
        threads.addAll(l.offset().keySet());
        TreeMap<AxisScope, AxisScope> outerOf = new TreeMap<>();
        TreeMap<AxisScope, Axis> namedBy = new TreeMap<>();
        for (Axis a : threads) {
            if (a.kind() != AxisKind.THREAD) {
                continue;
            }
            AxisScope inner = INNER.get(a.name());
            Optional<AxisScope> outer = a.scope();
            if (inner == null || outer.isEmpty()) {
                return Optional.of("thread axis " + a + " of " + l + " has no known inner and outer scope");
            }
            AxisScope before = outerOf.putIfAbsent(inner, outer.get());
            if (before != null && before != outer.get()) {
                return Optional.of("thread axes " + namedBy.get(inner) + " and " + a + " of " + l + " both count "
                        + name(inner) + "s, within a " + name(before) + " and within a " + name(outer.get()));
            }
            namedBy.putIfAbsent(inner, a);
        }
        if (outerOf.isEmpty()) {
            return Optional.empty();
        }
        AxisScope at = outerOf.firstKey();
        int visited = 0;
        while (outerOf.containsKey(at)) {
            visited++;
            at = outerOf.get(at);
        }
        if (visited != outerOf.size()) {
            return Optional.of("the thread axes of " + l + " do not chain: from " + name(outerOf.firstKey())
                    + "s outward they reach the " + name(at) + " scope, leaving out " + unvisited(outerOf, namedBy));
        }
        return Optional.empty();
    }

    private static String unvisited(TreeMap<AxisScope, AxisScope> outerOf, TreeMap<AxisScope, Axis> namedBy) {
        List<String> out = new ArrayList<>();
        AxisScope at = outerOf.firstKey();
        java.util.Set<AxisScope> chain = new java.util.HashSet<>();
        while (outerOf.containsKey(at)) {
            chain.add(at);
            at = outerOf.get(at);
        }
        outerOf.forEach((inner, outer) -> {
            if (!chain.contains(inner)) {
                out.add(namedBy.get(inner) + " (" + name(inner) + "s within a " + name(outer) + ")");
            }
        });
        return String.join(", ", out);
    }

    private static String name(AxisScope s) {
        return s.name().toLowerCase(java.util.Locale.ROOT);
    }
}
