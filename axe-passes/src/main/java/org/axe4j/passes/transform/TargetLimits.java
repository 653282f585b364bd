package org.axe4j.passes.transform;

import java.util.Map;
import org.axe4j.targets.MatrixFragments;
import org.axe4j.targets.Trainium;
import org.axe4j.tvm.TvmObject;

/**
 * The target facts the layout checks need: kind, CUDA shared memory per CTA, Trainium's partitions and
 * PSUM banks (from {@link Trainium} and {@link MatrixFragments}, where each figure is written once).
 */
public record TargetLimits(String kind, String arch, long sharedBytesPerCta) {
    public static final long LANES = MatrixFragments.LANES;
    public static final long TRN_PARTITIONS = Trainium.PARTITIONS;
    public static final long TRN_SBUF_BYTES_PER_PARTITION = Trainium.SBUF_BYTES_PER_PARTITION;
    public static final long TRN_PSUM_BANKS = Trainium.PSUM_BANKS;
    public static final long TRN_PSUM_BANK_BYTES = Trainium.PSUM_BANK_BYTES;

    /** No target: only target-independent rules apply. */
    public static final TargetLimits NONE = new TargetLimits("", "", 0);

    /** From a TVM {@code Target} object, a target kind name, or null. */
    public static TargetLimits of(Object target) {
        if (target == null) {
            return NONE;
        }
        if (target instanceof String s) {
            return ofKind(s.trim().split("\\s+")[0], "", -1);
        }
        TvmObject t = (TvmObject) target;
        String kind = String.valueOf(((TvmObject) t.get("kind")).get("name"));
        Map<?, ?> attrs = t.get("attrs") instanceof Map<?, ?> m ? m : Map.of();
        String arch = attrs.get("arch") instanceof String a ? a : "";
        long shared = attrs.get("max_shared_memory_per_block") instanceof Long v ? v : -1;
        return ofKind(kind, arch, shared);
    }

    private static TargetLimits ofKind(String kind, String arch, long shared) {
        if (kind.equals("cuda") && shared <= 0) {
            shared = sharedForArch(arch);
        }
        return new TargetLimits(kind, arch, Math.max(shared, 0));
    }

    /** Opt-in shared memory per CTA by compute capability (CUDA programming guide, table of technical limits). */
    static long sharedForArch(String arch) {
        String digits = arch.replaceAll("[^0-9]", "");
        int cc = digits.isEmpty() ? 0 : Integer.parseInt(digits);
        if (cc >= 90) {
            return 227 * 1024;
        }
        if (cc == 80 || cc == 87) {
            return 163 * 1024;
        }
        if (cc >= 86) {
            return 99 * 1024;
        }
        return 48 * 1024;
    }

    public boolean isCuda() {
        return kind.equals("cuda");
    }

    public boolean isTrainium() {
        return kind.equals("trn");
    }

    public boolean isCpu() {
        return kind.equals("llvm") || kind.equals("c");
    }
}
