package org.axe4j.layout;

/** Execution scopes, innermost first; a thread axis belongs to the scope whose units it indexes within the next. */
public enum AxisScope {
    THREAD, WARP, WARPGROUP, CTA, CLUSTER, KERNEL, DEVICE_MESH;

    /** True if this scope is strictly inside {@code other}. */
    public boolean isInside(AxisScope other) {
        return compareTo(other) < 0;
    }
}
