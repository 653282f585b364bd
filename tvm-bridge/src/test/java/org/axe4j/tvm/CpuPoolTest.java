package org.axe4j.tvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** TVM's CPU pool in a JVM without Python gets the physical cores of the affinity mask, within the quota. */
class CpuPoolTest {
    @TempDir
    Path tmp;

    private Path topology(Map<Integer, int[]> cpus) throws Exception {
        for (Map.Entry<Integer, int[]> cpu : cpus.entrySet()) {
            Path folder = Files.createDirectories(tmp.resolve("cpu" + cpu.getKey()).resolve("topology"));
            Files.writeString(folder.resolve("physical_package_id"), cpu.getValue()[0] + "\n");
            Files.writeString(folder.resolve("core_id"), cpu.getValue()[1] + "\n");
        }
        return tmp;
    }

    @Test
    void hyperthreadSiblingsCountOnce() throws Exception {
        Path sysfs = topology(Map.of(0, new int[] {0, 0}, 1, new int[] {0, 0}, 2, new int[] {0, 1},
                3, new int[] {0, 1}, 4, new int[] {1, 0}));
        assertEquals(3, CpuPool.physicalCores(Set.of(0, 1, 2, 3, 4), sysfs));
        assertEquals(2, CpuPool.physicalCores(Set.of(0, 2), sysfs));
        assertEquals(1, CpuPool.physicalCores(Set.of(0, 1), sysfs));
        assertEquals(1, CpuPool.physicalCores(Set.of(7), sysfs));   // no topology: the CPU counts as a core
    }

    @Test
    void cgroupQuotaV2AndV1() throws Exception {
        Path v2 = Files.createDirectories(tmp.resolve("v2"));
        Files.writeString(v2.resolve("cpu.max"), "150000 100000\n");
        assertEquals(1.5, CpuPool.cgroupQuota(v2));
        Files.writeString(v2.resolve("cpu.max"), "max 100000\n");
        assertNull(CpuPool.cgroupQuota(v2));
        Path v1 = Files.createDirectories(tmp.resolve("v1").resolve("cpu"));
        Files.writeString(v1.resolve("cpu.cfs_quota_us"), "200000\n");
        Files.writeString(v1.resolve("cpu.cfs_period_us"), "100000\n");
        assertEquals(2.0, CpuPool.cgroupQuota(tmp.resolve("v1")));
        Files.writeString(v1.resolve("cpu.cfs_quota_us"), "-1\n");
        assertNull(CpuPool.cgroupQuota(tmp.resolve("v1")));
        assertNull(CpuPool.cgroupQuota(tmp.resolve("none")));
    }

    @Test
    void affinityIsThisProcesssMask() {
        Set<Integer> cpus = CpuPool.affinity();
        assertEquals(Runtime.getRuntime().availableProcessors(), cpus.size(), cpus.toString());
    }

    private String probe(String threadsEnv) throws Exception {
        List<String> command = new ArrayList<>(TestSupport.javaCommand(CpuPoolProbe.class.getName()));
        ProcessBuilder builder = new ProcessBuilder(command).directory(TestSupport.repoRoot().toFile())
                .redirectErrorStream(true);
        builder.environment().remove(CpuPool.ENV);
        if (threadsEnv != null) {
            builder.environment().put(CpuPool.ENV, threadsEnv);
        }
        Process process = builder.start();
        assertTrue(process.waitFor(120, TimeUnit.SECONDS), "probe timed out");
        String output = new String(process.getInputStream().readAllBytes());
        assertEquals(0, process.exitValue(), output);
        return output.lines().filter(line -> line.startsWith("pool ")).findFirst().orElseThrow(() ->
                new AssertionError(output));
    }

    @Test
    void aJvmWithoutPythonSizesTvmsPoolFromTheUsableCores() throws Exception {
        int cores = CpuPool.usableCores();
        assertEquals("pool " + cores + " " + cores + " axe4j: physical cores of the affinity mask, within the cgroup"
                + " quota", probe(null));
    }

    @Test
    void tvmNumThreadsWins() throws Exception {
        assertEquals("pool 1 1 TVM_NUM_THREADS=1 (set by the caller)", probe("1"));
    }
}
