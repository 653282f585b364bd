package org.axe4j.layout;

import java.util.Random;

/**
 * A minimal seeded property runner: case {@code i} of property {@code name} uses seed
 * {@code BASE_SEED + i}; a failure reports the seed so {@code -Daxe4j.seed=...} reruns exactly that case.
 */
public final class Property {
    /** Base seed; override with {@code -Daxe4j.seed=N} to rerun one case, {@code -Daxe4j.cases=N} for count. */
    public static final long BASE_SEED = Long.getLong("axe4j.seed", 20261122L);

    /** Cases per property (10,000 unless overridden). */
    public static final int CASES = Integer.getInteger("axe4j.cases", 10_000);

    private Property() {}

    /** One generated case. */
    @FunctionalInterface
    public interface Case {
        void check(Random random) throws Exception;
    }

    /**
     * SplitMix64's finaliser: consecutive seeds give java.util.Random correlated first draws, so each
     * case's seed is scrambled before use.
     */
    static long mix(long seed) {
        long z = seed + 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /** Runs {@link #CASES} cases. */
    public static void forAll(String name, Case body) {
        forAll(name, CASES, body);
    }

    /** Runs {@code cases} cases (or one, at the seed given by {@code -Daxe4j.seed}). */
    public static void forAll(String name, int cases, Case body) {
        boolean single = System.getProperty("axe4j.seed") != null;
        int n = single ? 1 : cases;
        for (int i = 0; i < n; i++) {
            long seed = BASE_SEED + i;
            try {
                body.check(new Random(mix(seed)));
            } catch (Throwable t) {
                throw new AssertionError("property '" + name + "' failed at case " + i + " (rerun with -Daxe4j.seed="
                        + seed + "): " + t.getMessage(), t);
            }
        }
    }
}
