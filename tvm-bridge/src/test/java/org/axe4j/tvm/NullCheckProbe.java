package org.axe4j.tvm;

/**
 * Loads TVM, then takes many implicit NullPointerExceptions in JIT-compiled code. The JVM raises
 * those through SIGSEGV, so this survives only if the JVM still owns that signal. Prints
 * {@code survived <count>} at the end.
 */
public final class NullCheckProbe {
    private NullCheckProbe() {}

    static int lengthOf(String s) {
        return s.length();
    }

    static long churn(String[] inputs, int rounds) {
        long caught = 0;
        long sum = 0;
        for (int r = 0; r < rounds; r++) {
            for (String s : inputs) {
                try {
                    sum += lengthOf(s);
                } catch (NullPointerException e) {
                    caught++;
                }
            }
        }
        return sum >= 0 ? caught : -1;
    }

    /** Runs the hot loop: a warm-up so C2 compiles it, then enough rounds to hit the null path often. */
    public static long exercise() {
        String[] inputs = {"a", "bb", "ccc", "dddd", "eeeee", "ffffff", "ggggggg", "hhhhhhhh"};
        churn(inputs, 200_000);
        String[] withNull = inputs.clone();
        withNull[3] = null;
        return churn(withNull, 200_000);
    }

    public static void main(String[] args) {
        System.out.println(TvmLibraries.load().describe());
        long caught = exercise();
        System.out.println("survived " + caught);
    }
}
