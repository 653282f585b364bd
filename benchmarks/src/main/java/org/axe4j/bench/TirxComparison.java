package org.axe4j.bench;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Canonicalize;
import org.axe4j.layout.DirectSum;
import org.axe4j.layout.Group;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Region;
import org.axe4j.layout.Shape;
import org.axe4j.layout.Slice;
import org.axe4j.layout.Tile;
import org.axe4j.layout.TileOf;
import org.axe4j.passes.TirxLayouts;
import org.axe4j.tvm.Tvm;
import org.axe4j.tvm.TvmObject;

/**
 * Times each layout operation through axe4j's algebra in the JVM and through TIRx's C++ called from Java
 * via tvm-bridge, on the same inputs ({@link #CASES}); the Python harness
 * {@code benchmarks/bench_layout_vs_tirx.py} adds TIRx and axe4j called from Python in the
 * same process and prints the ratios. Each figure is the median of {@code rounds} timed batches after a
 * warm-up (at least 20,000 calls and one second), in nanoseconds per operation.
 */
public final class TirxComparison {
    /** Operation name to its inputs, in axe4j text; the Python harness builds the same TIRx objects. */
    public static final Map<String, List<String>> CASES = cases();

    private static final long WARM_UP_CALLS = 200_000;
    private static final long WARM_UP_NANOS = 2_000_000_000L;

    private TirxComparison() {}

    private static Map<String, List<String>> cases() {
        Map<String, List<String>> c = new LinkedHashMap<>();
        c.put("apply", List.of("S[(8,2,4,2):(4@laneid,1@warpid,1@laneid,1)]", "37"));
        c.put("span", List.of("S[(8,2,4,2):(4@laneid,1@warpid,1@laneid,1)]", "laneid"));
        c.put("canonicalize", List.of("S[(4,2,4,2):(16,8,2,1)]"));
        c.put("group", List.of("S[(8,2,4,2):(4@laneid,1@warpid,1@laneid,1)]", "16,8"));
        c.put("tile", List.of("S[(4,4):(4,1)]", "S[(2,2):(2,1)]", "2,2", "4,4"));
        c.put("is_tile_inner", List.of("S[(4,4):(4,1)]", "S[(2,4,2,4):(32,4,16,1)]", "8,8", "4,4"));
        c.put("direct_sum", List.of("S[4:1@laneid]", "S[2:1]", "2", "4"));
        c.put("slice", List.of("S[(16,16):(16,1)]", "16,16", "4,12,0,8"));
        return c;
    }

    /** {@code [axe4j in the JVM, TIRx C++ from Java]} in ns per operation, by the wall clock. */
    public static double[] measure(String op, int rounds, long batchNanos) {
        return measure(op, rounds, batchNanos, false);
    }

    /**
     * {@code [axe4j in the JVM, TIRx C++ from Java]} in ns per operation; with {@code processCpu}, by the CPU time
     * of the whole process (every thread: the caller, the JIT, the garbage collector), which is what a shared
     * machine does not inflate by time spent waiting for a core.
     */
    public static double[] measure(String op, int rounds, long batchNanos, boolean processCpu) {
        return measure(op, rounds, batchNanos, processCpu ? "cpu" : "wall");
    }

    /**
     * {@code [axe4j in the JVM, TIRx C++ from Java]} in ns per operation by {@code clock}: {@code "wall"} (elapsed),
     * {@code "cpu"} (the process's CPU time, every thread, in 10 ms steps) or {@code "thread"} (the calling thread's
     * CPU time, in ns; work of other threads, such as the garbage collector's, is not counted).
     */
    public static double[] measure(String op, int rounds, long batchNanos, String clockName) {
        List<String> in = CASES.get(op);
        if (in == null) {
            throw new IllegalArgumentException("unknown operation '" + op + "'; known: " + CASES.keySet());
        }
        Tvm.load();
        Supplier<Object> ours = axe4j(op, in);
        Supplier<Object> theirs = tirx(op, in);
        LongSupplier clock = switch (clockName) {
            case "wall" -> System::nanoTime;
            case "cpu" -> TirxComparison::processCpuNanos;
            case "thread" -> ManagementFactory.getThreadMXBean()::getCurrentThreadCpuTime;
            default -> throw new IllegalArgumentException("unknown clock '" + clockName + "'; known: wall, cpu, thread");
        };
        return new double[] {time(ours, rounds, batchNanos, clock), time(theirs, rounds, batchNanos, clock)};
    }

    private static Supplier<Object> axe4j(String op, List<String> in) {
        Layout a = Layout.parse(in.get(0));
        return switch (op) {
            case "apply" -> () -> a.apply(Long.parseLong(in.get(1)));
            case "span" -> () -> a.spanOn(Axis.of(in.get(1)));
            case "canonicalize" -> () -> Canonicalize.canonicalize(a);
            case "group" -> () -> Group.group(a, shape(in.get(1)));
            case "tile" -> {
                Layout outer = Layout.parse(in.get(1));
                Shape os = shape(in.get(2));
                Shape is = shape(in.get(3));
                yield () -> Tile.tile(outer, os, a, is);
            }
            case "is_tile_inner" -> {
                Layout tiled = Layout.parse(in.get(1));
                Shape ts = shape(in.get(2));
                Shape is = shape(in.get(3));
                yield () -> TileOf.outer(tiled, ts, a, is);
            }
            case "direct_sum" -> {
                Layout left = Layout.parse(in.get(1));
                Shape ls = shape(in.get(2));
                Shape rs = shape(in.get(3));
                yield () -> DirectSum.directSum(left, ls, a, rs);
            }
            case "slice" -> {
                Shape s = shape(in.get(1));
                long[] b = longs(in.get(2));
                Region region = Region.of(new long[] {b[0], b[1]}, new long[] {b[2], b[3]});
                yield () -> Slice.trySlice(a, s, region);
            }
            default -> throw new IllegalArgumentException(op);
        };
    }

    private static Supplier<Object> tirx(String op, List<String> in) {
        TvmObject a = TirxLayouts.toTvm(Layout.parse(in.get(0)));
        return switch (op) {
            case "apply" -> {
                long x = Long.parseLong(in.get(1));
                yield () -> Tvm.call("tirx.LayoutApplyLinear", a, x);
            }
            case "span" -> () -> Tvm.call("tirx.LayoutGetSpan", a, in.get(1));
            case "canonicalize" -> () -> Tvm.call("tirx.LayoutCanonicalize", a);
            case "group" -> {
                List<Long> s = shape(in.get(1)).dims();
                yield () -> Tvm.call("tirx.TileLayoutGroup", a, s);
            }
            case "tile" -> {
                TvmObject outer = TirxLayouts.toTvm(Layout.parse(in.get(1)));
                List<Long> os = shape(in.get(2)).dims();
                List<Long> is = shape(in.get(3)).dims();
                yield () -> Tvm.call("tirx.LayoutTile", a, outer, os, is);
            }
            case "is_tile_inner" -> {
                TvmObject tiled = TirxLayouts.toTvm(Layout.parse(in.get(1)));
                List<Long> ts = shape(in.get(2)).dims();
                List<Long> is = shape(in.get(3)).dims();
                yield () -> Tvm.call("tirx.LayoutIsTileInner", a, tiled, ts, is);
            }
            case "direct_sum" -> {
                TvmObject left = TirxLayouts.toTvm(Layout.parse(in.get(1)));
                List<Long> ls = shape(in.get(2)).dims();
                List<Long> rs = shape(in.get(3)).dims();
                yield () -> Tvm.call("tirx.LayoutDirectSum", a, left, ls, rs);
            }
            case "slice" -> {
                List<Long> s = shape(in.get(1)).dims();
                long[] b = longs(in.get(2));
                List<Object> ranges = List.of(Tvm.call("ir.Range", b[0], b[1], null), Tvm.call("ir.Range", b[2], b[3], null));
                yield () -> Tvm.call("tirx.LayoutSlice", a, s, ranges);
            }
            default -> throw new IllegalArgumentException(op);
        };
    }

    /** Median over rounds of the mean time per call in a batch of about {@code batchNanos}. */
    private static double time(Supplier<Object> body, int rounds, long batchNanos, LongSupplier clock) {
        // Warm-up: at least 200,000 calls and two seconds (the JIT compiles hot code after about 10,000 calls, but on
        // a loaded machine its compiler threads wait for a core), at most twenty seconds.
        long start = System.nanoTime();
        for (long n = 0; (n < WARM_UP_CALLS || System.nanoTime() - start < WARM_UP_NANOS)
                && System.nanoTime() - start < 10 * WARM_UP_NANOS; n++) {
            release(body.get());
        }
        // The batch size, by the wall clock: the process CPU clock ticks in steps of 10 ms here and costs a system
        // call, so a batch counted by it would time the clock. Each round then lasts about batchNanos.
        long calls = 0;
        start = System.nanoTime();
        while (System.nanoTime() - start < batchNanos) {
            release(body.get());
            calls++;
        }
        double[] perCall = new double[rounds];
        for (int r = 0; r < rounds; r++) {
            long t0 = clock.getAsLong();
            for (long i = 0; i < calls; i++) {
                release(body.get());
            }
            perCall[r] = (double) (clock.getAsLong() - t0) / calls;
        }
        Arrays.sort(perCall);
        return perCall[rounds / 2];
    }

    /** CPU time of this process, every thread (CLOCK_PROCESS_CPUTIME_ID, as Python's time.process_time_ns). */
    private static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    /** TVM results are closed at once, so that the time includes freeing them, as Python's does. */
    private static void release(Object o) {
        if (o instanceof TvmObject t) {
            t.close();
        } else if (o instanceof List<?> list) {
            list.forEach(TirxComparison::release);
        } else if (o instanceof Map<?, ?> map) {
            map.forEach((k, v) -> {
                release(k);
                release(v);
            });
        }
    }

    private static Shape shape(String csv) {
        return Shape.of(longs(csv));
    }

    private static long[] longs(String csv) {
        List<Long> out = new ArrayList<>();
        for (String s : csv.split(",")) {
            out.add(Long.parseLong(s.trim()));
        }
        return out.stream().mapToLong(Long::longValue).toArray();
    }
}
