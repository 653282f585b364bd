package org.axe4j.serve;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.axe4j.tvm.CpuPool;
import org.axe4j.tvm.Tvm;
import org.junit.jupiter.api.Test;

/**
 * Each worker's share of TVM's CPU pool: T / W threads (at least 1), set on the thread that runs the kernel and on no
 * other, since TVM keeps a pool per calling thread ({@code runtime.NumThreads} answers for the caller's pool).
 */
class CpuShareTest {
    @Test
    void eachWorkerGetsItsShareOfThePool() {
        Set<Integer> cpus = Set.of(0, 1);
        assertEquals(1, new CpuShare(2, 2, cpus).threadsEach());
        assertEquals(4, new CpuShare(8, 2, cpus).threadsEach());
        assertEquals(2, new CpuShare(8, 3, cpus).threadsEach());
        assertEquals(1, new CpuShare(1, 4, cpus).threadsEach());
        assertEquals(6, new CpuShare(6, 1, cpus).threadsEach());
        assertEquals(List.of("2", "5", "11"), new CpuShare(2, 1, Set.of(11, 2, 5)).cpus());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new CpuShare(2, 1, Set.of()));
        assertTrue(e.getMessage().contains("affinity mask is empty"), e.getMessage());
    }

    /**
     * The pool threads {@code enter} makes may run on every CPU of the process's mask, like the thread that entered:
     * TVM's default pins pool thread i to CPU i, and a pinned thread in a busy server stalls every kernel it shares.
     * The pool's threads are the tasks that appear while the entering thread builds its pool.
     */
    @Test
    void thePoolsThreadsRunOnEveryCpuOfTheMask() throws Exception {
        Tvm.load();
        Set<Integer> mask = CpuPool.affinity();
        assumeTrue(mask.size() >= 2, "one CPU in the mask: TVM pins nothing, nothing to see");
        CpuShare share = new CpuShare(2, 1, mask);
        Set<String> before = tasks();
        AtomicReference<String> entered = new AtomicReference<>();
        Thread worker = new Thread(() -> {
            share.enter();
            entered.set(cpusAllowed("thread-self"));
        });
        worker.start();
        worker.join();
        String expected = cpusAllowed("self");
        Set<String> made = new TreeSet<>(tasks());
        made.removeAll(before);
        assertFalse(made.isEmpty(), "entering made no pool thread (TVM_NUM_THREADS=" + System.getenv("TVM_NUM_THREADS")
                + ")");
        for (String task : made) {
            String allowed = cpusAllowed("self/task/" + task);
            if (allowed != null) {   // null: the task has ended
                assertEquals(expected, allowed, "pool thread " + task + "'s CPUs");
            }
        }
        assertEquals(expected, entered.get(), "the entering thread's CPUs");
    }

    private static Set<String> tasks() throws IOException {
        try (Stream<Path> s = Files.list(Path.of("/proc/self/task"))) {
            return s.map(p -> p.getFileName().toString()).collect(Collectors.toSet());
        }
    }

    /** The {@code Cpus_allowed_list} line of /proc/{@code task}/status, or null if the task is gone. */
    private static String cpusAllowed(String task) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc", task, "status"))) {
                if (line.startsWith("Cpus_allowed_list:")) {
                    return line.substring(line.indexOf(':') + 1).strip();
                }
            }
            throw new IllegalStateException("/proc/" + task + "/status has no Cpus_allowed_list");
        } catch (IOException e) {
            return null;
        }
    }

    @Test
    void enteringSizesTheCallingThreadsPoolOnly() throws InterruptedException {
        Tvm.load();
        long before = ((Number) Tvm.call("runtime.NumThreads")).longValue();
        int wanted = before == 1 ? 2 : 1;   // a size other than the default, to see it change
        CpuShare share = new CpuShare(wanted, 1, CpuPool.affinity());
        AtomicLong inWorker = new AtomicLong();
        AtomicLong inOther = new AtomicLong();
        Thread worker = new Thread(() -> {
            share.enter();
            share.enter();   // once per thread: the second is a no-op
            inWorker.set(((Number) Tvm.call("runtime.NumThreads")).longValue());
        });
        worker.start();
        worker.join();
        Thread other = new Thread(() -> inOther.set(((Number) Tvm.call("runtime.NumThreads")).longValue()));
        other.start();
        other.join();
        assertEquals(wanted, inWorker.get());
        assertEquals(before, inOther.get());
    }
}
