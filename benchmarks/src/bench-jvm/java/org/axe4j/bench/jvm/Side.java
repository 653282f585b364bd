package org.axe4j.bench.jvm;

import java.nio.FloatBuffer;

/** One implementation of a workload with its tensors made once: inputs written, then called over and over. */
interface Side extends AutoCloseable {
    /** Short name for tables: {@code axe4j} or {@code ort}. */
    String name();

    /** Input {@code index}'s floats (in the model's input order), to fill once. */
    FloatBuffer input(int index);

    /** Runs once; the result is in {@link #output} when it returns. Allocates no tensors. */
    void run() throws Exception;

    FloatBuffer output();

    @Override
    void close() throws Exception;
}
