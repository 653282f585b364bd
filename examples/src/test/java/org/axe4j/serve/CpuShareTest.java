package org.axe4j.serve;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.concurrent.atomic.AtomicLong;
import org.axe4j.tvm.Tvm;
import org.junit.jupiter.api.Test;

/**
 * Each worker's share of TVM's CPU pool: T / W threads (at least 1), set on the thread that runs the kernel and on no
 * other, since TVM keeps a pool per calling thread ({@code runtime.NumThreads} answers for the caller's pool).
 */
class CpuShareTest {
    @Test
    void eachWorkerGetsItsShareOfThePool() {
        assertEquals(1, new CpuShare(2, 2).threadsEach());
        assertEquals(4, new CpuShare(8, 2).threadsEach());
        assertEquals(2, new CpuShare(8, 3).threadsEach());
        assertEquals(1, new CpuShare(1, 4).threadsEach());
        assertEquals(6, new CpuShare(6, 1).threadsEach());
    }

    @Test
    void enteringSizesTheCallingThreadsPoolOnly() throws InterruptedException {
        Tvm.load();
        long before = ((Number) Tvm.call("runtime.NumThreads")).longValue();
        int wanted = before == 1 ? 2 : 1;   // a size other than the default, to see it change
        CpuShare share = new CpuShare(wanted, 1);
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
