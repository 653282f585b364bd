package org.axe4j.tvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Long loops must not leak: every temporary object and string is released. */
class ResourceTest {
    private static final int CALLS = 100_000;
    /** Allowed growth of resident memory over the measured loop. */
    private static final long RSS_BOUND_KB = 8 * 1024;
    /** Strings of 250 bytes: a leak of one per call would add about 25 MB over the loop. */
    private static final String PADDING = "a string long enough to need a heap object ".repeat(6) + "#";

    @BeforeAll
    static void load() {
        TestSupport.loadWithCppTestingGlobals();
        Axe4jGlobals.install();
    }

    /** Resident size after a full GC and {@code malloc_trim}, so freed native memory is not counted. */
    static long residentKb() throws IOException, InterruptedException {
        System.gc();
        Thread.sleep(200);
        Libc.ensureRegistered();
        Libc.malloc_trim(0);
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
        }
        throw new IllegalStateException("no VmRSS in /proc/self/status");
    }

    /** One iteration: object, long string and container arguments and results, through C++ and Java. */
    private static void iteration(int i, TvmObject range, TvmFunction cppEcho, TvmFunction javaEcho,
                                  TvmFunction concat) {
        String text = PADDING + i;
        assertEquals(text, cppEcho.call(text));
        try (TvmObject same = (TvmObject) javaEcho.call(range)) {
            assertTrue(same.sameObject(range));
        }
        assertEquals(text + "!", concat.call(text, "!"));
        if (i % 10 == 0) {
            assertEquals(List.of((long) i, text), cppEcho.call(List.of((long) i, text)));
            assertEquals(Map.of("k", text), javaEcho.call(Map.of("k", text)));
            try (TvmShape shape = (TvmShape) cppEcho.call(new long[] {i, 2})) {
                assertEquals(i, shape.dims()[0]);
            }
        }
    }

    @Test
    void hundredThousandCallsKeepResidentMemoryFlat() throws Exception {
        Tvm.register("axe4j.test.concat", args -> (String) args[0] + args[1], true);
        TvmFunction cppEcho = Tvm.function("testing.echo");
        TvmFunction javaEcho = Tvm.function("axe4j.testing.echo");
        TvmFunction concat = Tvm.function("axe4j.test.concat");
        try (TvmObject range = (TvmObject) Tvm.call("ir.Range", 0L, 16L, null)) {
            for (int i = 0; i < 50_000; i++) {
                iteration(i, range, cppEcho, javaEcho, concat);
            }
            long before = residentKb();
            for (int i = 0; i < CALLS; i++) {
                iteration(i, range, cppEcho, javaEcho, concat);
            }
            long after = residentKb();
            System.out.println("VmRSS before " + before + " kB, after " + CALLS + " iterations " + after
                    + " kB, growth " + (after - before) + " kB");
            assertTrue(after - before < RSS_BOUND_KB, "resident memory grew by " + (after - before) + " kB");
        }
    }

    @Test
    void forgottenWrappersAreReleasedByTheCleaner() throws Exception {
        int before = Tvm.liveJavaFunctions();
        for (int i = 0; i < 1000; i++) {
            // anonymous Java functions: only the Java wrapper references them, and it is dropped unclosed
            TvmFunction.of(args -> 1L);
        }
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (Tvm.liveJavaFunctions() > before + 10 && System.nanoTime() < deadline) {
            System.gc();
            Thread.sleep(50);
        }
        assertTrue(Tvm.liveJavaFunctions() <= before + 10,
                "TVM still references " + (Tvm.liveJavaFunctions() - before) + " forgotten functions");
    }

    @Test
    void closedWrappersRefuseUse() {
        TvmObject range = (TvmObject) Tvm.call("ir.Range", 0L, 4L, null);
        range.close();
        range.close();
        assertTrue(range.isClosed());
        IllegalStateException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class,
                range::typeKey);
        assertTrue(e.getMessage().contains("released"), e.getMessage());
    }
}
