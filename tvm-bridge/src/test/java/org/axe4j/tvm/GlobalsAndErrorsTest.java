package org.axe4j.tvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class GlobalsAndErrorsTest {
    @BeforeAll
    static void load() {
        TestSupport.loadWithCppTestingGlobals();
        Axe4jGlobals.install();
    }

    @Test
    void lookUpAndList() {
        assertTrue(Tvm.findFunction("ffi.Array").isPresent());
        assertTrue(Tvm.findFunction("no.such.function").isEmpty());
        NoSuchElementException e = assertThrows(NoSuchElementException.class, () -> Tvm.function("no.such.function"));
        assertTrue(e.getMessage().contains("no.such.function"), e.getMessage());
        List<String> names = Tvm.globalFunctionNames();
        assertTrue(names.contains("ffi.ModuleLoadFromFile"));
        assertTrue(names.contains("runtime.RPCTimeEvaluator"));
        assertTrue(names.contains("axe4j.version"));
        assertEquals(names.size(), new java.util.HashSet<>(names).size());
    }

    @Test
    void registerWithAndWithoutOverride() {
        Tvm.register("axe4j.test.answer", args -> 41L, true);
        assertEquals(41L, Tvm.call("axe4j.test.answer"));
        assertEquals(41L, Tvm.call("axe4j.testing.call_global", "axe4j.test.answer"));
        TvmException clash = assertThrows(TvmException.class,
                () -> Tvm.register("axe4j.test.answer", args -> 0L, false));
        assertTrue(clash.getMessage().contains("axe4j.test.answer"), clash.getMessage());
        Tvm.register("axe4j.test.answer", args -> 42L, true);
        assertEquals(42L, Tvm.function("axe4j.test.answer").call());
        assertEquals(42L, Tvm.call("axe4j.test.answer"));
        // C++ calls the Java global: testing.apply(f, *args)
        assertEquals(42L, Tvm.call("testing.apply", Tvm.function("axe4j.test.answer")));
    }

    @Test
    void registeredCallbacksSurviveGarbageCollection() throws Exception {
        Tvm.register("axe4j.test.gc", args -> "still here " + args[0], true);
        for (int i = 0; i < 5; i++) {
            System.gc();
            Thread.sleep(20);
        }
        assertEquals("still here 1", Tvm.call("testing.apply", Tvm.function("axe4j.test.gc"), 1L));
    }

    @Test
    void javaExceptionsBecomeTvmErrors() {
        Tvm.register("axe4j.test.bad_argument", args -> {
            throw new IllegalArgumentException("width must be positive, got " + args[0]);
        }, true);
        TvmException value = assertThrows(TvmException.class,
                () -> Tvm.call("testing.apply", Tvm.function("axe4j.test.bad_argument"), -3L));
        assertEquals("ValueError", value.kind());
        assertTrue(value.tvmMessage().contains("width must be positive, got -3"), value.tvmMessage());

        TvmException state = assertThrows(TvmException.class, () -> Tvm.call("axe4j.testing.raise", "boom 1"));
        assertEquals("RuntimeError", state.kind());
        assertTrue(state.tvmMessage().contains("boom 1"), state.tvmMessage());
        assertTrue(state.tvmMessage().contains("IllegalStateException"), state.tvmMessage());

        Tvm.register("axe4j.test.index", args -> List.of().get(3), true);
        assertEquals("IndexError", assertThrows(TvmException.class, () -> Tvm.call("axe4j.test.index")).kind());
    }

    @Test
    void tvmErrorsBecomeJavaExceptions() {
        TvmException index = assertThrows(TvmException.class,
                () -> Tvm.call("ffi.ArrayGetItem", List.of(1L, 2L), 5L));
        assertEquals("IndexError", index.kind());
        assertFalse(index.tvmMessage().isEmpty());
        assertFalse(index.backtrace().isEmpty(), "TVM attaches a backtrace");

        TvmException type = assertThrows(TvmException.class, () -> Tvm.call("ffi.ArraySize", "not an array"));
        assertEquals("TypeError", type.kind());
        assertTrue(type.tvmMessage().contains("ffi.ArraySize"), type.tvmMessage());
    }

    @Test
    void errorsCrossSeveralLanguageBoundaries() {
        // Java -> C++ (testing.apply) -> Java global -> C++ (ffi.ArrayGetItem) raises IndexError -> Java rethrows
        // as TvmException -> TVM error with the same kind -> Java
        Tvm.register("axe4j.test.nested", args -> Tvm.call("ffi.ArrayGetItem", List.of(1L), 9L), true);
        TvmException e = assertThrows(TvmException.class,
                () -> Tvm.call("testing.apply", Tvm.function("axe4j.test.nested")));
        assertEquals("IndexError", e.kind());
        // the re-entrant global passes the result back unchanged when there is no error
        assertEquals(List.of(1L, "a"), Tvm.call("axe4j.testing.call_global", "ffi.Array", 1L, "a"));
    }

    @Test
    void eightThreadsCallAJavaFunctionThroughTvm() throws Exception {
        AtomicLong calls = new AtomicLong();
        Tvm.register("axe4j.test.mix", args -> {
            calls.incrementAndGet();
            return (String) args[1] + ":" + ((Long) args[0] * 3 + 1);
        }, true);
        TvmFunction viaCpp = Tvm.function("testing.apply");
        TvmFunction target = Tvm.function("axe4j.test.mix");
        int threads = 8;
        int perThread = 2_000;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch start = new CountDownLatch(1);
        try {
            List<Future<Integer>> results = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                final int id = t;
                results.add(pool.submit(() -> {
                    start.await();
                    int ok = 0;
                    for (int i = 0; i < perThread; i++) {
                        long x = id * 1_000_000L + i;
                        String tag = "thread-" + id + "-call-" + i;
                        Object got = viaCpp.call(target, x, tag);
                        if ((tag + ":" + (x * 3 + 1)).equals(got)) {
                            ok++;
                        }
                    }
                    return ok;
                }));
            }
            start.countDown();
            for (Future<Integer> f : results) {
                assertEquals(perThread, f.get());
            }
        } finally {
            pool.shutdown();
        }
        assertEquals((long) threads * perThread, calls.get());
    }
}
