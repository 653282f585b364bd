package org.axe4j.tvm.cuda;

import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A GPU's compute capability, e.g. 9.0 for an H100 or H200, and the rule for which compiled code runs
 * on it. A cubin for {@code sm_XY} runs on compute capability X.Z with Z ≥ Y; an arch-specific cubin
 * ({@code sm_90a}, {@code sm_100a}) runs on exactly X.Y. (PTX would JIT forward, but axe4j's fatbins
 * carry cubins only.)
 */
public record ComputeCapability(int major, int minor) {
    private static final Pattern ARCH = Pattern.compile("sm_(\\d+)(\\d)(a?)");

    public ComputeCapability {
        if (major < 1 || minor < 0 || minor > 9) {
            throw new IllegalArgumentException("ComputeCapability: " + major + "." + minor + " is not a compute"
                    + " capability (major >= 1, minor 0-9)");
        }
    }

    /** The arch name nvcc uses for code built for exactly this GPU, e.g. {@code sm_90}. */
    public String arch() {
        return "sm_" + major + minor;
    }

    /** Whether a cubin for {@code arch} ({@code sm_90a}, {@code sm_80}, ...) runs on this GPU. */
    public boolean runs(String arch) {
        Matcher m = ARCH.matcher(arch);
        if (!m.matches()) {
            throw new IllegalArgumentException("ComputeCapability.runs: '" + arch + "' is not an arch like sm_90a");
        }
        int archMajor = Integer.parseInt(m.group(1));
        int archMinor = Integer.parseInt(m.group(2));
        boolean specific = !m.group(3).isEmpty();
        return specific ? archMajor == major && archMinor == minor : archMajor == major && archMinor <= minor;
    }

    /** Whether any of {@code arches} runs here. */
    public boolean runsAny(Set<String> arches) {
        return arches.stream().anyMatch(this::runs);
    }

    @Override
    public String toString() {
        return major + "." + minor;
    }
}
