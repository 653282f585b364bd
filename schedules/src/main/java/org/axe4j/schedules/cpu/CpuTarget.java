package org.axe4j.schedules.cpu;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import org.axe4j.schedules.Request;

/**
 * What a CPU rule knows of the machine it compiles for, from a request's {@code params.cpu} (the Python side reads
 * the ISA from the llvm target's {@code mcpu}/{@code mattr}, the caches from sysfs, the cores from TVM's pool).
 *
 * @param mcpu LLVM's name of the CPU ({@code ""} for generic x86-64)
 * @param isa {@code avx512}, {@code avx2}, {@code avx} or {@code sse}
 * @param vectorBits bits of one vector register (512, 256, 128)
 * @param vectorRegisters architectural vector registers (32 zmm with AVX-512, else 16)
 * @param cores threads a parallel loop runs on
 * @param l1dBytes L1 data cache of one core
 * @param l2Bytes L2 cache of one core
 * @param f16c whether the target converts float16 to float32 in vector instructions (F16C {@code vcvtph2ps});
 *     without it LLVM converts each element with a call
 */
record CpuTarget(String mcpu, String isa, int vectorBits, int vectorRegisters, int cores, long l1dBytes,
        long l2Bytes, boolean f16c) {

    /** A request without {@code params.cpu} (a Java caller, an older client): the AVX2 machine the rules were tuned
     * on. */
    public static final CpuTarget UNKNOWN = new CpuTarget("", "unknown", 256, 16, 2, 32 * 1024, 512 * 1024);

    /** Without the F16C flag: assumed present with AVX2 and AVX-512 (every such x86 CPU has it), absent otherwise. */
    public CpuTarget(String mcpu, String isa, int vectorBits, int vectorRegisters, int cores, long l1dBytes,
            long l2Bytes) {
        this(mcpu, isa, vectorBits, vectorRegisters, cores, l1dBytes, l2Bytes, impliesF16c(isa));
    }

    private static boolean impliesF16c(String isa) {
        return isa.equals("avx2") || isa.equals("avx512") || isa.equals("unknown");
    }

    /** Vector registers as x86 names them for this width: zmm, ymm, xmm. */
    public String registerName() {
        return vectorBits >= 512 ? "zmm" : vectorBits >= 256 ? "ymm" : "xmm";
    }

    /** Elements of {@code elementBytes} in one vector register. */
    public int lanes(int elementBytes) {
        return Math.max(1, vectorBits / 8 / elementBytes);
    }

    /** True for AVX-512 with its 32 vector registers. */
    public boolean wideVectors() {
        return vectorBits >= 512 && vectorRegisters >= 32;
    }

    /** {@code params.cpu} of {@code call}, {@link #UNKNOWN} when absent; missing fields keep UNKNOWN's values. */
    public static CpuTarget of(Request call) {
        JsonElement e = call.params().get("cpu");
        if (e == null || !e.isJsonObject()) {
            return UNKNOWN;
        }
        return of(e.getAsJsonObject());
    }

    /** A {@code params.cpu} object; missing fields keep UNKNOWN's values. */
    public static CpuTarget of(JsonObject o) {
        return new CpuTarget(text(o, "mcpu", UNKNOWN.mcpu), text(o, "isa", UNKNOWN.isa),
                (int) number(o, "vector_bits", UNKNOWN.vectorBits), (int) number(o, "vector_registers",
                UNKNOWN.vectorRegisters), (int) Math.max(1, number(o, "cores", UNKNOWN.cores)),
                number(o, "l1d_bytes", UNKNOWN.l1dBytes), number(o, "l2_bytes", UNKNOWN.l2Bytes),
                o.has("f16c") && !o.get("f16c").isJsonNull() ? o.get("f16c").getAsBoolean()
                        : impliesF16c(text(o, "isa", UNKNOWN.isa)));
    }

    private static String text(JsonObject o, String key, String fallback) {
        return o.has(key) && !o.get(key).isJsonNull() ? o.get(key).getAsString() : fallback;
    }

    private static long number(JsonObject o, String key, long fallback) {
        return o.has(key) && !o.get(key).isJsonNull() ? o.get(key).getAsLong() : fallback;
    }
}
