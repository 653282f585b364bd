package org.axe4j.bench.jvm;

import java.nio.FloatBuffer;

/** numpy's allclose rule, {@code |got - want| <= atol + rtol |want|}, element by element. */
final class Compare {
    private Compare() {}

    /**
     * The largest {@code |got - want| / (atol + rtol |want|)} (at most 1 when every element passes).
     *
     * @throws IllegalStateException naming the first element out of tolerance, or a length mismatch
     */
    static double worst(FloatBuffer got, FloatBuffer want, double rtol, double atol, String what) {
        if (got.remaining() != want.remaining()) {
            throw new IllegalStateException(what + ": " + got.remaining() + " elements, expected " + want.remaining());
        }
        double worst = 0;
        for (int i = 0; i < want.remaining(); i++) {
            double g = got.get(got.position() + i);
            double w = want.get(want.position() + i);
            double q = Math.abs(g - w) / (atol + rtol * Math.abs(w));
            if (!(q <= 1)) {
                throw new IllegalStateException(what + ": element " + i + " is " + g + ", expected " + w
                        + " (rtol " + rtol + ", atol " + atol + ")");
            }
            worst = Math.max(worst, q);
        }
        return worst;
    }
}
