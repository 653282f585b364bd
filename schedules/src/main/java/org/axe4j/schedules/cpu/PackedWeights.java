package org.axe4j.schedules.cpu;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;

/**
 * The layout in which a GEMM weight B (K x N, D row-major so B moves along n) is read in place by the blocked rule:
 * the K block {@code kc} and panel width {@code nv} that {@link GemmBlocking} chooses for the target, and
 * {@link GemmPacking#packedWeight} over them. Neither depends on M (the row kernel, which M would choose, reads B in
 * place anyway), nor on the thread count, so the weight is packed once for every call of that target.
 */
public final class PackedWeights {
    private PackedWeights() {}

    /**
     * {@code {"kc", "nv", "isa", "layout"}} for a K x N weight on the target {@code cpuJson} (a request's
     * {@code params.cpu}) whose GEMM's widest operand has {@code elementBytes}, or {@code {"kc", "nv", "isa",
     * "refusal"}} when K or N do not split into whole blocks and panels.
     */
    public static String describe(String cpuJson, long k, long n, int elementBytes) {
        if (k < 1 || n < 1 || elementBytes < 1) {
            throw new IllegalArgumentException("packed weight: K=" + k + ", N=" + n + " and element bytes "
                    + elementBytes + " must be positive");
        }
        CpuTarget cpu = CpuTarget.of(JsonParser.parseString(cpuJson).getAsJsonObject());
        GemmBlocking b = GemmBlocking.choose(cpu, elementBytes, GemmBlocking.AVX512_TILE_U, n, k, false, false,
                elementBytes);
        JsonObject out = new JsonObject();
        out.addProperty("kc", b.kc());
        out.addProperty("nv", b.nv());
        out.addProperty("isa", cpu.isa());
        String refusal = GemmPacking.packedWeightRefusal(k, n, b.kc(), b.nv());
        if (refusal != null) {
            out.addProperty("refusal", refusal);
        } else {
            out.addProperty("layout", GemmPacking.packedWeight(k, n, b.kc(), b.nv()).toString());
        }
        return out.toString();
    }
}
