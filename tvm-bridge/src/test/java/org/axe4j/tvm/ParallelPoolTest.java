package org.axe4j.tvm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * axe4j's parallel launcher ({@link ParallelPool}) on a TVM kernel whose rows are a parallel loop
 * ({@code export_kernels.py --parallel}): exact answers against B = 2A + i, with helpers taking part, with no
 * helper ever claiming a task (the caller runs them all and returns), and from several calling threads at once.
 */
class ParallelPoolTest {
    private static final int THREADS = 2;
    @TempDir
    static Path dir;
    static Path library;
    static TvmModule module;
    static int rows;
    static int cols;

    @BeforeAll
    static void export() throws Exception {
        Path script = TestSupport.repoRoot().resolve("tvm-bridge/src/test/python/export_kernels.py");
        TestSupport.Result result = TestSupport.run(List.of(TestSupport.venvPython().toString(), script.toString(),
                "--parallel", dir.toString()), TestSupport.repoRoot(), 300);
        assertEquals(0, result.exitCode(), result.output());
        String[] lines = result.output().strip().split("\n");
        JsonObject built = JsonParser.parseString(lines[lines.length - 1]).getAsJsonObject();
        library = Path.of(built.get("library").getAsString());
        rows = built.get("rows").getAsInt();
        cols = built.get("cols").getAsInt();
        Tvm.load();
        assertTrue(ParallelPool.available(), "the JNI library did not load: " + FastCall.describe());
        assertEquals(THREADS - 1, ParallelPool.start(THREADS - 1, THREADS));
        assertEquals(THREADS - 1, ParallelPool.start(THREADS + 3, 1), "a second start changes nothing");
        assertEquals(THREADS, ParallelPool.tasksPerLaunch());
        module = TvmModule.load(library);
        ParallelPool.Adoption adoption = ParallelPool.adopt(library);
        assertTrue(adoption.adopted(), adoption.reason());
        ParallelPool.adaptive(false, ParallelPool.SHORT_LAUNCH_NANOS);   // every launch asks the helpers (but below)
    }

    @AfterAll
    static void release() {
        ParallelPool.hold(false);
        ParallelPool.adaptive(true, ParallelPool.SHORT_LAUNCH_NANOS);
        if (module != null) {
            module.close();
        }
    }

    /** Runs the kernel on fresh random rows and checks B = 2A + i element for element. */
    private static void runAndCheck(TvmFunction f, long seed) {
        Random random = new Random(seed);
        float[] a = new float[rows * cols];
        for (int i = 0; i < a.length; i++) {
            a[i] = random.nextInt(2001) - 1000;
        }
        float[] expected = new float[a.length];
        for (int i = 0; i < a.length; i++) {
            expected[i] = a[i] * 2 + i / cols;
        }
        long[] shape = {rows, cols};
        try (TvmTensor ta = TvmTensor.empty(shape, DataType.FLOAT32, Device.cpu()).copyFrom(a);
             TvmTensor tb = TvmTensor.empty(shape, DataType.FLOAT32, Device.cpu()).copyFrom(new float[a.length])) {
            f.call(ta, tb);
            assertArrayEquals(expected, tb.toFloatArray(), "seed " + seed);
        }
    }

    @Test
    void helpersTakePartAndTheAnswersAreExact() {
        try (TvmFunction f = module.function("parallel_rows")) {
            long helped = ParallelPool.tasksRunByHelpers();
            long deadline = System.nanoTime() + 10_000_000_000L;
            int calls = 0;
            // a helper wakes within a task's time (64 x 4096 / 2 elements) on all but the busiest machine
            while (calls < 50 || (ParallelPool.tasksRunByHelpers() == helped && System.nanoTime() < deadline)) {
                runAndCheck(f, calls++);
            }
            assertTrue(ParallelPool.tasksRunByHelpers() > helped, "no helper ran a task in " + calls + " calls");
        }
    }

    @Test
    void aCallerRunsEveryTaskNobodyClaimed() {
        try (TvmFunction f = module.function("parallel_rows")) {
            runAndCheck(f, -1);   // warm
            ParallelPool.hold(true);
            try {
                long helped = ParallelPool.tasksRunByHelpers();
                long byCallers = ParallelPool.tasksRunByCallers();
                for (int call = 0; call < 20; call++) {
                    runAndCheck(f, 100 + call);
                }
                assertEquals(helped, ParallelPool.tasksRunByHelpers());
                assertEquals(20L * ParallelPool.tasksPerLaunch(), ParallelPool.tasksRunByCallers() - byCallers);
            } finally {
                ParallelPool.hold(false);
            }
        }
    }

    /**
     * A loop whose short launch the caller ran alone (helpers held; "short" raised to 10 s for this kernel) runs its
     * next 63 launches inline: the helpers are not even asked, so releasing them changes nothing until the 64th launch asks again.
     */
    @Test
    void aLoopNoHelperReachedRunsInlineForAWhile() {
        try (TvmFunction f = module.function("parallel_rows")) {
            ParallelPool.adaptive(true, 10_000_000_000L);   // this kernel's launch counts as short
            ParallelPool.hold(true);
            runAndCheck(f, 7);   // the caller runs both tasks: the loop goes inline
            ParallelPool.hold(false);
            long helped = ParallelPool.tasksRunByHelpers();
            for (int call = 0; call < 63; call++) {
                runAndCheck(f, 200 + call);
            }
            assertEquals(helped, ParallelPool.tasksRunByHelpers(), "a helper ran a task of an inline launch");
        } finally {
            ParallelPool.hold(false);
            ParallelPool.adaptive(false, ParallelPool.SHORT_LAUNCH_NANOS);
        }
    }

    @Test
    void severalCallersAtOnce() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                int caller = t;
                done.add(pool.submit(() -> {
                    try (TvmFunction f = module.function("parallel_rows")) {
                        for (int call = 0; call < 40; call++) {
                            runAndCheck(f, 1000 * (caller + 1) + call);
                        }
                    }
                }));
            }
            for (Future<?> d : done) {
                d.get();
            }
        } finally {
            pool.shutdown();
        }
    }

    /**
     * Many launches back to back: a lost wake-up (a helper leaving between the caller's last look and its sleep) hung
     * one call in some 10^4; a call that does not return within the limit fails the test instead of hanging it.
     */
    @Test
    void everyLaunchReturns() throws Exception {
        long[] shape = {rows, cols};
        int calls = 3000;
        int[] done = {0};
        try (TvmFunction f = module.function("parallel_rows");
             TvmTensor ta = TvmTensor.empty(shape, DataType.FLOAT32, Device.cpu()).copyFrom(new float[rows * cols]);
             TvmTensor tb = TvmTensor.empty(shape, DataType.FLOAT32, Device.cpu())) {
            Thread caller = new Thread(() -> {
                for (int call = 0; call < calls; call++) {
                    f.call(ta, tb);
                    done[0] = call + 1;
                }
            }, "parallel-pool-stress");
            caller.setDaemon(true);   // a hung native call cannot be interrupted; the JVM may still exit
            caller.start();
            caller.join(120_000);
            assertFalse(caller.isAlive(), "a launch did not return: " + done[0] + " of " + calls + " calls done");
            float[] b = tb.toFloatArray();
            for (int i = 0; i < b.length; i++) {
                assertEquals((float) (i / cols), b[i], "B[" + i + "]");
            }
        }
    }

    @Test
    void librariesItCannotAdoptSayWhy() throws Exception {
        ParallelPool.Adoption notLoaded = ParallelPool.adopt(dir.resolve("never_loaded.so"));
        assertFalse(notLoaded.adopted());
        assertTrue(notLoaded.reason().contains("is not loaded in this process"), notLoaded.reason());
        assertThrows(IllegalArgumentException.class, () -> ParallelPool.start(-1, 2));
        assertThrows(IllegalArgumentException.class, () -> ParallelPool.start(1, 0));
    }
}
