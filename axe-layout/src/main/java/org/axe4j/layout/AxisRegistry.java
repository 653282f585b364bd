package org.axe4j.layout;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Known axes with their kind and, for execution and device axes, their scope.
 * The global registry is pre-filled with CUDA, Trainium and mesh axes and may be extended
 * ({@link #register}); unknown names remain legal axes of kind {@link AxisKind#UNKNOWN}.
 */
public final class AxisRegistry {
    /** An entry: the kind and, where it applies, the scope of an axis. */
    public record Entry(AxisKind kind, Optional<AxisScope> scope) {}

    private static final AxisRegistry GLOBAL = withDefaults();

    private final Map<String, Entry> entries = new ConcurrentHashMap<>();

    public static AxisRegistry global() {
        return GLOBAL;
    }

    private static AxisRegistry withDefaults() {
        AxisRegistry r = new AxisRegistry();
        for (String memory : new String[] {"m", "reg", "P", "F", "Bank", "Lane", "Col", "TLane", "TCol", "bank", "psum"}) {
            r.register(memory, AxisKind.MEMORY, null);
        }
        r.register("laneid", AxisKind.THREAD, AxisScope.WARP);
        r.register("warpid", AxisKind.THREAD, AxisScope.CTA);
        r.register("wid_in_wg", AxisKind.THREAD, AxisScope.WARPGROUP);
        r.register("wgid", AxisKind.THREAD, AxisScope.CTA);
        for (String t : new String[] {"tx", "ty", "tz"}) {
            r.register(t, AxisKind.THREAD, AxisScope.CTA);
        }
        for (String b : new String[] {"bx", "by", "bz", "cta_id"}) {
            r.register(b, AxisKind.THREAD, AxisScope.KERNEL);
        }
        r.register("cbx", AxisKind.THREAD, AxisScope.CLUSTER);
        r.register("cby", AxisKind.THREAD, AxisScope.CLUSTER);
        r.register("cbz", AxisKind.THREAD, AxisScope.CLUSTER);
        for (String d : new String[] {"gpuid", "device", "rank", "core"}) {
            r.register(d, AxisKind.DEVICE, AxisScope.DEVICE_MESH);
        }
        return r;
    }

    /** Registers (or re-registers) an axis name with a kind and an optional scope. */
    public void register(String name, AxisKind kind, AxisScope scope) {
        new Axis(name); // validates the name
        entries.put(name, new Entry(kind, Optional.ofNullable(scope)));
    }

    public AxisKind kind(Axis axis) {
        Entry e = entries.get(axis.name());
        return e == null ? AxisKind.UNKNOWN : e.kind();
    }

    public Optional<AxisScope> scope(Axis axis) {
        Entry e = entries.get(axis.name());
        return e == null ? Optional.empty() : e.scope();
    }
}
