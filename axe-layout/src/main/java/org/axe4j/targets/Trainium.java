package org.axe4j.targets;

import java.util.LinkedHashMap;
import java.util.Map;
import org.axe4j.layout.Axis;

/**
 * Trainium's on-chip memory and TensorEngine limits, written once (AWS Neuron, trn1 NeuronCore-v2): SBUF and PSUM
 * are two-dimensional, a partition axis {@code P} (128 partitions, one per engine lane) and a free axis {@code F}
 * (bytes within a partition); PSUM is cut into 8 {@code Bank}s of 2 KiB per partition (512 float32 elements). An
 * {@code nc_matmul} contracts over at most 128 partitions, with at most 128 stationary and 512 moving free
 * elements. The rules ({@code schedules}), the layout checks ({@code axe-passes}) and Python (through
 * {@code python/axe4j/targets.json}, {@link TargetFacts}) read them from here.
 */
public final class Trainium {
    private Trainium() {}

    public static final Axis P = Axis.of("P");
    public static final Axis F = Axis.of("F");
    public static final Axis BANK = Axis.of("Bank");

    public static final long PARTITIONS = 128;
    /** SBUF bytes per partition (24 MiB over 128 partitions). */
    public static final long SBUF_BYTES_PER_PARTITION = 192 * 1024;
    public static final long PSUM_BANKS = 8;
    public static final long PSUM_BANK_BYTES = 2048;
    /** float32 elements in one PSUM bank of one partition. */
    public static final long PSUM_BANK_FLOAT32 = PSUM_BANK_BYTES / 4;
    public static final long MATMUL_CONTRACTION = 128;
    public static final long MATMUL_STATIONARY_FREE = 128;
    public static final long MATMUL_MOVING_FREE = 512;

    /** The figures by name, for {@link TargetFacts}. */
    static Map<String, Long> facts() {
        Map<String, Long> facts = new LinkedHashMap<>();
        facts.put("partitions", PARTITIONS);
        facts.put("sbuf_bytes_per_partition", SBUF_BYTES_PER_PARTITION);
        facts.put("psum_banks", PSUM_BANKS);
        facts.put("psum_bank_bytes", PSUM_BANK_BYTES);
        facts.put("matmul_contraction", MATMUL_CONTRACTION);
        facts.put("matmul_stationary_free", MATMUL_STATIONARY_FREE);
        facts.put("matmul_moving_free", MATMUL_MOVING_FREE);
        return facts;
    }
}
