package org.axe4j.tvm;

/**
 * Loads TVM's runtime in a fresh JVM and prints the pool size axe4j chose and the one TVM's pool
 * reports: {@code pool <sized> <runtime.NumThreads> <origin>}.
 */
public final class CpuPoolProbe {
    private CpuPoolProbe() {}

    public static void main(String[] args) {
        Tvm.load();
        Object threads = Tvm.call("runtime.NumThreads");   // the pool starts here, before anything else asks
        CpuPool.Sizing sizing = CpuPool.size();
        System.out.println("pool " + sizing.threads() + " " + threads + " " + sizing.from());
    }
}
