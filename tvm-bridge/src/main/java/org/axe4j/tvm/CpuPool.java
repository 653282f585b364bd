package org.axe4j.tvm;

import com.sun.jna.Memory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * TVM's CPU thread pool sized from the cores this process may run on, as axe4j's Python does.
 *
 * <p>TVM 0.27 starts its pool with {@code TVM_NUM_THREADS} threads, else with half the hardware
 * threads on x86: on a 2-vCPU VM with one thread per core that is 1 of the 2 cores. The pool starts
 * at the first parallel launch, so the variable is set (in the C environment, where TVM reads it)
 * before the runtime is loaded, to
 *
 * <pre>  min(physical cores among the CPUs of the affinity mask, ceil(cgroup CPU quota))</pre>
 *
 * <p>Physical cores are the distinct (package, core id) pairs of
 * {@code /sys/devices/system/cpu/cpuN/topology}; the quota is cgroup v2's {@code cpu.max} or v1's
 * {@code cpu.cfs_quota_us / cpu.cfs_period_us}. A {@code TVM_NUM_THREADS} the caller set wins.
 */
public final class CpuPool {
    public static final String ENV = "TVM_NUM_THREADS";
    static final Path SYSFS_CPU = Paths.get("/sys/devices/system/cpu");
    static final Path CGROUP = Paths.get("/sys/fs/cgroup");
    /** Bytes of the affinity mask asked for: 1024 CPUs, glibc's {@code cpu_set_t}. */
    private static final int MASK_BYTES = 128;

    /** The pool's size and where the number came from. */
    public record Sizing(int threads, String from) {}

    private static volatile Sizing sized;

    private CpuPool() {}

    /**
     * Sets {@code TVM_NUM_THREADS} to {@link #usableCores()} unless it is set (once per process);
     * returns the size and its origin.
     */
    public static synchronized Sizing size() {
        if (sized == null) {
            Libc.ensureRegistered();
            String given = Libc.getenv(ENV);
            if (given != null && !given.isBlank()) {
                String text = given.strip();
                int threads = text.chars().allMatch(Character::isDigit) ? Integer.parseInt(text) : 0;
                sized = new Sizing(threads, ENV + "=" + text + " (set by the caller)");
            } else {
                int threads = usableCores();
                Libc.setenv(ENV, Integer.toString(threads));
                sized = new Sizing(threads, "axe4j: physical cores of the affinity mask, within the cgroup quota");
            }
        }
        return sized;
    }

    /** The threads a compute-bound parallel loop should get: physical cores of the mask, within the quota. */
    public static int usableCores() {
        Set<Integer> cpus = affinity();
        int cores = physicalCores(cpus, SYSFS_CPU);
        Double quota = cgroupQuota(CGROUP);
        return Math.max(1, quota == null ? cores : Math.min(cores, (int) Math.ceil(quota)));
    }

    /** The CPUs of this process's affinity mask ({@code sched_getaffinity}); all processors if it fails. */
    public static Set<Integer> affinity() {
        Libc.ensureRegistered();
        Memory mask = new Memory(MASK_BYTES);
        mask.clear();
        Set<Integer> cpus = new TreeSet<>();
        if (Libc.sched_getaffinity(0, MASK_BYTES, mask) == 0) {
            for (int cpu = 0; cpu < MASK_BYTES * 8; cpu++) {
                if ((mask.getByte(cpu / 8) & (1 << (cpu % 8))) != 0) {
                    cpus.add(cpu);
                }
            }
        }
        if (cpus.isEmpty()) {
            for (int cpu = 0; cpu < Runtime.getRuntime().availableProcessors(); cpu++) {
                cpus.add(cpu);
            }
        }
        return cpus;
    }

    /** Distinct (package, core) pairs among {@code cpus}; a CPU whose topology is not shown counts as a core. */
    static int physicalCores(Set<Integer> cpus, Path sysfs) {
        Set<List<String>> cores = new HashSet<>();
        for (int cpu : cpus) {
            Path topology = sysfs.resolve("cpu" + cpu).resolve("topology");
            try {
                cores.add(List.of(read(topology.resolve("physical_package_id")), read(topology.resolve("core_id"))));
            } catch (IOException e) {
                cores.add(List.of("cpu", Integer.toString(cpu)));
            }
        }
        return Math.max(1, cores.size());
    }

    /** The CPUs the cgroup's quota allows (e.g. 1.5), or null without a quota. */
    static Double cgroupQuota(Path root) {
        try {
            String[] fields = read(root.resolve("cpu.max")).split("\\s+");
            return fields[0].equals("max") ? null : Long.parseLong(fields[0]) / (double) Long.parseLong(fields[1]);
        } catch (IOException | RuntimeException e) {
            // no cgroup v2 file: try v1
        }
        try {
            long quota = Long.parseLong(read(root.resolve("cpu").resolve("cpu.cfs_quota_us")));
            long period = Long.parseLong(read(root.resolve("cpu").resolve("cpu.cfs_period_us")));
            return quota <= 0 ? null : quota / (double) period;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    private static String read(Path file) throws IOException {
        return Files.readString(file).strip();
    }
}
