package org.axe4j.schedules.cpu;

import java.util.LinkedHashMap;
import java.util.Map;
import org.axe4j.layout.Layout;

/**
 * The blocked GEMM's packed panels as Axe layouts, from logical coordinates to the panel buffer's offset.
 *
 * <p>The moving operand V (v panels of one K block): logical (k, v) over {@code kc x panels*nv}, with
 * {@code v = p * nv + j}, lives at {@code (p * kc + k) * nv + j}: {@code S[(kc, panels, nv):(nv, kc*nv, 1)]}.
 * The other operand U (u panels of one u block): logical (u, k) over {@code mc x kc}, with {@code u = q * mu + i},
 * lives at {@code (q * kc + k) * mu + i}: {@code S[(mc/mu, mu, kc):(kc*mu, 1, mu)]}. Both are K-major inside a
 * panel, so the micro-kernel reads them with unit stride.
 */
final class GemmPacking {
    private GemmPacking() {}

    /**
     * {role: layout text} for V ({@code moving}) and U ({@code other}); each parses as a {@link Layout}.
     */
    static Map<String, String> layouts(String moving, String other, GemmBlocking b, long ev) {
        long panels = (ev + b.nv() - 1) / b.nv();
        Layout v = Layout.parse("S[(" + b.kc() + "," + panels + "," + b.nv() + "):(" + b.nv() + "," + b.kc() * b.nv()
                + ",1)]");
        Layout u = Layout.parse("S[(" + b.mc() / b.mu() + "," + b.mu() + "," + b.kc() + "):(" + b.kc() * b.mu()
                + ",1," + b.mu() + ")]");
        Map<String, String> out = new LinkedHashMap<>();
        out.put(moving, v.toString());
        out.put(other, u.toString());
        return Map.copyOf(out);
    }
}
