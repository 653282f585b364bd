package org.axe4j.schedules.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Iter;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Point;
import org.axe4j.layout.Property;
import org.axe4j.layout.Shape;
import org.axe4j.layout.Swizzle;
import org.axe4j.schedules.Decision;
import org.axe4j.schedules.Modular;
import org.axe4j.schedules.Operand;
import org.axe4j.schedules.Request;
import org.axe4j.schedules.Rule;
import org.axe4j.schedules.plan.SchedulePlan;
import org.junit.jupiter.api.Test;

/**
 * The register plan, run the way the emitter runs it (thread t of the scope checks the guards, adds its thread
 * terms to each memory base, walks its slot loops), against brute-force enumeration of the layouts' set-valued
 * maps: a register destination gets every (thread, slot) pair the layout gives each region element exactly once,
 * from an address (or register of the same thread) holding that element (zero: from no source); a memory destination gets every element
 * once, from a register holding it; vector accesses start at multiples of vec.
 */
class CudaRegisterRuleTest {

    /** Thread t's coordinate on axis a is (t / div) mod size; t = sum coordinate * div over the named axes. */
    static final Map<String, Long> DIV = Map.of("laneid", 1L, "warpid", 32L, "wid_in_wg", 32L, "tid_in_wg", 1L,
            "wgid", 128L, "tx", 1L);

    /** Each case enumerates up to 256 threads and every element's hardware points: fewer cases than the default. */
    static final int CASES = Math.min(Property.CASES, 1000);

    record Tile(Layout layout, long[] shape, String scope, long threads) {}

    static String request(String op, String scope, long threads, List<Operand> ops, Map<String, String> storage) {
        StringBuilder sb = new StringBuilder("{\"op\":\"" + op + "\",\"target\":\"cuda\",\"scope\":\"" + scope
                + "\",\"operands\":[");
        StringBuilder moduli = new StringBuilder();
        for (int i = 0; i < ops.size(); i++) {
            Operand o = ops.get(i);
            List<String> start = new ArrayList<>();
            List<String> modulus = new ArrayList<>();
            for (int d = 0; d < o.shape().length; d++) {
                Modular m = o.runTimeStarts()[d];
                start.add(m == null ? Long.toString(o.start()[d]) : "null");
                modulus.add(m == null ? "null" : "[" + m.coeff() + "," + m.residue() + "]");
            }
            if (start.contains("null")) {
                moduli.append(moduli.length() == 0 ? "" : ",").append('"').append(o.role()).append("\":")
                        .append(modulus);
            }
            sb.append(i == 0 ? "" : ",").append("{\"role\":\"").append(o.role()).append("\",\"name\":\"")
                    .append(o.name()).append("\",\"dtype\":\"").append(o.dtype()).append("\",\"shape\":")
                    .append(Arrays.toString(o.shape())).append(",\"start\":").append(start)
                    .append(",\"extent\":").append(Arrays.toString(o.extent())).append(",\"elem_offset\":")
                    .append(o.elemOffset()).append('}');
        }
        sb.append("],\"params\":{\"threads\":").append(threads).append(",\"start_modulus\":{").append(moduli)
                .append("},\"storage\":{");
        int i = 0;
        for (Map.Entry<String, String> e : storage.entrySet()) {
            sb.append(i++ == 0 ? "" : ",").append('"').append(e.getKey()).append("\":\"").append(e.getValue())
                    .append('"');
        }
        return sb.append("}}}").toString();
    }

    static Request call(String op, String scope, long threads, List<Operand> ops, Map<String, String> storage) {
        return Request.fromJson(request(op, scope, threads, ops, storage), ops.stream().map(Operand::layout).toList());
    }

    /** {@link #call} with the swizzles of some roles. */
    static Request call(String op, String scope, long threads, List<Operand> ops, Map<String, String> storage,
            Map<String, Swizzle> swizzles) {
        return Request.fromJson(request(op, scope, threads, ops, storage), ops.stream().map(Operand::layout).toList(),
                ops.stream().map(o -> swizzles.get(o.role())).toList());
    }

    /** Powers of two multiplying to n, in random order. */
    static List<Long> factors(Random r, long n) {
        List<Long> out = new ArrayList<>();
        while (n > 1) {
            long f = Math.min(n, 1L << (1 + r.nextInt(3)));
            out.add(f);
            n /= f;
        }
        return out;
    }

    /**
     * A register tile at a random scope: each thread axis's values split into digits (a mixed radix, some of them
     * replicas), 1-3 register digits with compact (sometimes padded) strides, the shard shuffled or with the
     * registers innermost, grouped into 1-3 buffer dims.
     */
    static Tile randomTile(Random r, long[] registerExtents) {
        String scope = new String[] {"warp", "warpgroup", "cta"}[r.nextInt(3)];
        long threads = scope.equals("warp") ? 32 : scope.equals("warpgroup") ? 128
                : new long[] {64, 128, 256}[r.nextInt(3)];
        Map<String, Long> axes = new TreeMap<>();
        if (scope.equals("warp")) {
            axes.put("laneid", 32L);
        } else if (scope.equals("warpgroup")) {
            if (r.nextBoolean()) {
                axes.put("tid_in_wg", 128L);
            } else {
                axes.put("laneid", 32L);
                axes.put("wid_in_wg", 4L);
            }
        } else if (r.nextInt(3) == 0) {
            axes.put("tx", threads);
        } else {
            axes.put("laneid", 32L);
            axes.put("warpid", threads / 32);
        }
        List<Iter> threadShard = new ArrayList<>();
        List<Iter> replica = new ArrayList<>();
        for (Map.Entry<String, Long> a : axes.entrySet()) {
            long stride = 1;
            for (long f : factors(r, a.getValue())) {
                Iter it = Iter.of(f, stride, a.getKey());
                (r.nextInt(5) == 0 ? replica : threadShard).add(it);
                stride *= f;
            }
        }
        List<Iter> regs = new ArrayList<>();
        List<Integer> order = new ArrayList<>();
        for (int k = 0; k < registerExtents.length; k++) {
            order.add(k);
        }
        Collections.shuffle(order, r);
        long[] strides = new long[registerExtents.length];
        long next = 1;
        for (int k : order) {
            strides[k] = next;
            next *= registerExtents[k] + (r.nextInt(5) == 0 ? 1 : 0);
        }
        for (int k = 0; k < registerExtents.length; k++) {
            regs.add(Iter.of(registerExtents[k], strides[k]));
        }
        List<Iter> shard = new ArrayList<>(threadShard);
        if (r.nextBoolean()) {
            shard.addAll(regs);
            Collections.shuffle(shard, r);
        } else {
            Collections.shuffle(shard, r);
            shard.addAll(regs);
        }
        int rank = 1 + r.nextInt(Math.min(3, shard.size()));
        List<Integer> cuts = new ArrayList<>();
        for (int i = 1; i < shard.size(); i++) {
            cuts.add(i);
        }
        Collections.shuffle(cuts, r);
        List<Integer> chosen = new ArrayList<>(cuts.subList(0, rank - 1));
        Collections.sort(chosen);
        chosen.add(shard.size());
        long[] shape = new long[rank];
        int from = 0;
        for (int d = 0; d < rank; d++) {
            long n = 1;
            for (Iter it : shard.subList(from, chosen.get(d))) {
                n *= it.extent();
            }
            shape[d] = n;
            from = chosen.get(d);
        }
        return new Tile(Layout.of(shard, replica, Map.of()), shape, scope, threads);
    }

    /** Region [start, start + extent): whole, or an aligned block of a divisor of the dim. */
    static long[][] randomRegion(Random r, long[] shape) {
        long[] start = new long[shape.length];
        long[] extent = new long[shape.length];
        for (int d = 0; d < shape.length; d++) {
            if (r.nextInt(3) != 0) {
                extent[d] = shape[d];
                continue;
            }
            List<Long> divisors = new ArrayList<>();
            for (long e = 1; e <= shape[d]; e++) {
                if (shape[d] % e == 0) {
                    divisors.add(e);
                }
            }
            extent[d] = divisors.get(r.nextInt(divisors.size()));
            start[d] = extent[d] * r.nextInt((int) (shape[d] / extent[d]));
        }
        return new long[][] {start, extent};
    }

    static long[] randomRegisterExtents(Random r) {
        int n = 1 + r.nextInt(3);
        long[] out = new long[n];
        for (int k = 0; k < n; k++) {
            out[k] = new long[] {1, 2, 2, 4, 4, 8, 3}[r.nextInt(7)];
        }
        return out;
    }

    /** Thread index of a hardware point of a register layout. */
    static long thread(Point p) {
        long t = 0;
        for (Map.Entry<Axis, Long> e : p.coords().entrySet()) {
            if (!e.getKey().equals(Axis.M)) {
                t += e.getValue() * DIV.get(e.getKey().name());
            }
        }
        return t;
    }

    /** Locations of a region element: "t:slot" for a register operand, "@addr" for a memory one. */
    static List<String> locations(Operand o, boolean register, long[] coord) {
        return locations(o, register, coord, Swizzle.IDENTITY);
    }

    /** {@link #locations} of a memory operand whose layout is composed with {@code swizzle}: "@swz(addr)". */
    static List<String> locations(Operand o, boolean register, long[] coord, Swizzle swizzle) {
        List<String> out = new ArrayList<>();
        for (Point p : o.layout().apply(Shape.of(o.shape()), coord)) {
            long at = o.elemOffset() + p.get(Axis.M);
            out.add(register ? thread(p) + ":" + at : "@" + swizzle.apply(at));
        }
        return out;
    }

    @Test
    void registerPlanMovesEveryElementBetweenTheThreadsAndSlotsTheLayoutsGive() {
        int[] counts = new int[4]; // accepted, vectorized, declined, with thread terms
        Property.forAll("cuda register plan = layout maps", CASES, r -> {
            Tile tile = randomTile(r, randomRegisterExtents(r));
            long[][] region = randomRegion(r, tile.shape());
            String dtype = new String[] {"float32", "float16", "int8", "float64"}[r.nextInt(4)];
            int kind = r.nextInt(5); // 0: reg <- mem, 1: mem <- reg, 2: reg <- reg, 3: reg <- reg + mem, 4: zero reg
            Operand reg = new Operand("dst", "R", dtype, tile.shape(), region[0], region[1], tile.layout());
            String memScope = r.nextBoolean() ? "global" : "shared";
            Layout memLayout = CudaRulesTest.randomLayout(r, tile.shape());
            long offset = r.nextInt(3) == 0 ? 8L * r.nextInt(4) + (r.nextInt(4) == 0 ? 1 : 0) : 0;
            Operand mem = new Operand("src0", "G", dtype, tile.shape(), region[0], region[1], memLayout, offset,
                    new boolean[tile.shape().length]);
            List<Operand> ops;
            Map<String, String> storage = new HashMap<>();
            String op = "copy";
            if (kind == 0) {
                ops = List.of(reg, mem);
                storage.put("dst", "local");
                storage.put("src0", memScope);
            } else if (kind == 1) {
                ops = List.of(rename(mem, "dst"), rename(reg, "src0"));
                storage.put("dst", memScope);
                storage.put("src0", "local");
            } else if (kind == 4) {
                op = "zero";
                ops = List.of(reg);
                storage.put("dst", "local");
            } else {
                long scale = r.nextInt(3) == 0 ? 2 : 1;
                Layout other = Layout.of(tile.layout().shard().stream().map(it -> it.axis().equals(Axis.M)
                        ? it.withStride(it.stride() * scale) : it).toList(),
                        tile.layout().replica(), Map.of());
                Operand reg2 = new Operand("src0", "Q", dtype, tile.shape(), region[0], region[1], other);
                storage.put("dst", "local");
                storage.put("src0", "local");
                if (kind == 2) {
                    ops = List.of(reg, reg2);
                } else {
                    op = "add";
                    ops = List.of(reg, reg2, rename(mem, "src1"));
                    storage.put("src1", memScope);
                }
            }
            Request call = call(op, tile.scope(), tile.threads(), ops, storage);
            Decision d = wholeRegion(call);
            if (!d.accepted()) {
                counts[2]++;
                assertTrue(d.reason().contains("crosses a digit") || d.reason().contains("one address")
                        || d.reason().contains("no common refinement") || d.reason().contains("iter extent")
                        || d.reason().contains("does not divide"), d.reason());
                return;
            }
            counts[0]++;
            if ((Long) d.planJson().get("vec") > 1) {
                counts[1]++;
            }
            if (d.planJson().toString().contains("thread_terms=[[")) {
                counts[3]++;
            }
            check(d.planJson(), ops, storage, tile.threads());
        });
        assertTrue(counts[0] > CASES / 2, "accepted " + Arrays.toString(counts));
        assertTrue(counts[1] > CASES / 10, "vectorized " + Arrays.toString(counts));
        assertTrue(counts[3] > CASES / 4, "thread terms " + Arrays.toString(counts));
    }

    /**
     * A register tile moved from or to a memory region whose start in one dim is known only at run time as
     * {@code c n + b}: at every value the start takes, the plan (its memory base plus what the start terms add) moves
     * every element between the threads and slots and the addresses the layouts give, with aligned vectors; its width
     * is the narrowest width of the plans with those values as constant starts.
     */
    @Test
    void registerPlansAtRunTimeMemoryStartsMoveEveryElementAtEveryValue() {
        int[] counts = new int[3]; // accepted, vectorized, width compared with the constants'
        Property.forAll("cuda register plan at run-time memory starts = layout maps", CASES / 2, r -> {
            Tile tile = randomTile(r, randomRegisterExtents(r));
            long[][] region = randomRegion(r, tile.shape());
            String dtype = new String[] {"float32", "float16"}[r.nextInt(2)];
            int d = r.nextInt(tile.shape().length);
            long[] memShape = tile.shape().clone();
            memShape[d] *= 2 + r.nextInt(2);
            long e = region[1][d];
            long[] memStart = region[0].clone();
            memStart[d] = r.nextInt((int) (memShape[d] - e + 1));
            if (r.nextBoolean()) {
                memStart[d] = memStart[d] / e * e;
            }
            Modular start = new Modular(new long[] {1, 2, 4, 8, e, 2 * e}[r.nextInt(6)], memStart[d]);
            Layout memLayout = CudaRulesTest.randomLayout(r, memShape);
            boolean load = r.nextBoolean();
            Operand reg = new Operand(load ? "dst" : "src0", "R", dtype, tile.shape(), region[0], region[1],
                    tile.layout());
            Operand mem = new Operand(load ? "src0" : "dst", "G", dtype, memShape, memStart, region[1], memLayout);
            Map<String, String> storage = Map.of(reg.role(), "local", mem.role(), "global");
            Operand rt = mem.withRunTimeStart(d, start);
            Decision run = wholeRegion(call("copy", tile.scope(), tile.threads(),
                    load ? List.of(reg, rt) : List.of(rt, reg), storage));
            if (!run.accepted()) {
                return;
            }
            counts[0]++;
            long vec = (Long) run.planJson().get("vec");
            counts[1] += vec > 1 ? 1 : 0;
            long narrowest = Long.MAX_VALUE;
            boolean all = true;
            List<Long> values = new ArrayList<>(start.valuesIn(0, memShape[d] - e + 1));
            Collections.shuffle(values, r); // the widths of all values, the moves of a few (each run is every thread)
            for (int k = 0; k < values.size(); k++) {
                long v = values.get(k);
                long[] sv = memStart.clone();
                sv[d] = v;
                Operand fixed = new Operand(mem.role(), "G", dtype, memShape, sv, region[1], memLayout);
                List<Operand> ops = load ? List.of(reg, fixed) : List.of(fixed, reg);
                Decision constant = wholeRegion(call("copy", tile.scope(),
                        tile.threads(), ops, storage));
                all &= constant.accepted();
                if (constant.accepted()) {
                    narrowest = Math.min(narrowest, (Long) constant.planJson().get("vec"));
                }
                if (k < 3) {
                    check(atStart(run.planJson(), mem.role(), sv), ops, storage, tile.threads());
                }
            }
            if (all) {
                counts[2]++;
                assertEquals(narrowest, vec, "width at " + start + ": " + run.planJson().get("notes"));
            }
        });
        assertTrue(counts[0] > CASES / 6, "accepted " + Arrays.toString(counts));
        assertTrue(counts[1] > CASES / 40, "vectorized " + Arrays.toString(counts));
        assertTrue(counts[2] > CASES / 8, "compared " + Arrays.toString(counts));
    }

    /**
     * A register tile whose region starts at a run-time index {@code q n + r} in one dim (as the accumulator's columns
     * {@code c * 32 : c * 32 + 32}), loaded, stored or updated in place: at every value the start takes, the plan
     * (slot base plus what the start strides and terms add) moves every element between the threads and slots the
     * layouts give, with aligned vectors; a decline names the run-time start.
     */
    @Test
    void registerPlansAtRunTimeRegisterStartsMoveEveryElementAtEveryValue() {
        int[] counts = new int[3]; // accepted, with start terms, declined for the start
        Property.forAll("cuda register plan at run-time register starts = layout maps", CASES / 2, r -> {
            Tile tile = r.nextBoolean() ? interleavedTile(r) : randomTile(r, randomRegisterExtents(r));
            long[][] region = randomRegion(r, tile.shape());
            // the last dim holds the register iters when the tile puts them innermost
            int d = r.nextInt(3) == 0 ? r.nextInt(tile.shape().length) : tile.shape().length - 1;
            long n = tile.shape()[d];
            List<Long> divisors = new ArrayList<>();
            for (long e = 1; e <= n; e++) {
                if (n % e == 0) {
                    divisors.add(e);
                }
            }
            long e = divisors.get(r.nextInt(divisors.size()));
            region[0][d] = 0;
            region[1][d] = e;
            long q = new long[] {1, 2, e, e, e, 2 * e, n}[r.nextInt(7)];
            long residue = r.nextInt(5) == 0 ? r.nextInt((int) q) : 0;
            Modular start = new Modular(q, residue);
            List<Long> values = new ArrayList<>(start.valuesIn(0, n - e + 1));
            if (values.isEmpty()) {
                return;
            }
            String dtype = new String[] {"float32", "float16"}[r.nextInt(2)];
            int kind = r.nextInt(3); // 0: reg <- mem, 1: mem <- reg, 2: reg = reg + mem (in place)
            long[] chunk = region[1].clone();
            Operand mem = new Operand("src0", "G", dtype, chunk, new long[chunk.length], chunk,
                    CudaRulesTest.randomLayout(r, chunk));
            Operand reg = new Operand("dst", "R", dtype, tile.shape(), region[0], region[1], tile.layout());
            Map<String, String> storage = new HashMap<>();
            String op = kind == 2 ? "add" : "copy";
            List<String> registerRoles = kind == 0 ? List.of("dst") : kind == 1 ? List.of("src0")
                    : List.of("dst", "src0");
            java.util.function.Function<Operand, List<Operand>> operands = rg -> kind == 0 ? List.of(rg, mem)
                    : kind == 1 ? List.of(rename(mem, "dst"), rename(rg, "src0"))
                    : List.of(rg, rename(rg, "src0"), rename(mem, "src1"));
            for (Operand o : operands.apply(reg)) {
                storage.put(o.role(), registerRoles.contains(o.role()) ? "local" : "shared");
            }
            Decision run = wholeRegion(call(op, tile.scope(), tile.threads(),
                    operands.apply(reg.withRunTimeStart(d, start)), storage));
            if (!run.accepted()) {
                assertTrue(run.reason().contains("crosses a digit") || run.reason().contains("one address")
                        || run.reason().contains("no common refinement") || run.reason().contains("iter extent")
                        || run.reason().contains("does not divide")
                        || run.reason().contains("starts at a run-time index ("),
                        run.reason());
                counts[2] += run.reason().contains("starts at a run-time index") ? 1 : 0;
                return;
            }
            counts[0]++;
            counts[1] += run.planJson().toString().contains("start_terms") ? 1 : 0;
            Collections.shuffle(values, r);
            for (long v : values.subList(0, Math.min(3, values.size()))) {
                long[] sv = region[0].clone();
                sv[d] = v;
                Operand fixed = new Operand("dst", "R", dtype, tile.shape(), sv, region[1], tile.layout());
                Map<String, Object> plan = run.planJson();
                for (String role : registerRoles) {
                    plan = atStart(plan, role, sv);
                }
                check(plan, operands.apply(fixed), storage, tile.threads());
            }
        });
        assertTrue(counts[0] > CASES / 6, "accepted " + Arrays.toString(counts));
        assertTrue(counts[1] > CASES / 40, "with start terms " + Arrays.toString(counts));
        assertTrue(counts[2] > CASES / 40, "declined for the start " + Arrays.toString(counts));
    }

    /**
     * A warp's tile shaped like an mma accumulator: rows (rr registers, 8 lanes of stride 4), columns (c1 registers,
     * 4 lanes, c0 registers), the three register iters in a random compact order.
     */
    static Tile interleavedTile(Random r) {
        long rr = new long[] {1, 2}[r.nextInt(2)];
        long c1 = new long[] {2, 4, 8}[r.nextInt(3)];
        long c0 = new long[] {1, 2, 4}[r.nextInt(3)];
        long[] extents = {rr, c1, c0};
        List<Integer> order = new ArrayList<>(List.of(0, 1, 2));
        Collections.shuffle(order, r);
        long[] strides = new long[3];
        long next = 1;
        for (int k : order) {
            strides[k] = next;
            next *= extents[k];
        }
        List<Iter> shard = List.of(Iter.of(rr, strides[0]), Iter.of(8, 4, "laneid"), Iter.of(c1, strides[1]),
                Iter.of(4, 1, "laneid"), Iter.of(c0, strides[2]));
        return new Tile(Layout.of(shard, List.of(), Map.of()), new long[] {rr * 8, c1 * 4 * c0}, "warp", 32);
    }

    static final String ACCUMULATOR = "S[(1,4,2,8,1,32,4,2):(128,1@wid_in_wg,2,4@laneid,128,4,1@laneid,1)]";
    static final String ACCUMULATOR_CHUNK = "S[(1,4,2,8,1,4,4,2):(16,1@wid_in_wg,2,4@laneid,16,4,1@laneid,1)]";

    /**
     * {@code op(acc[rows, cols], acc[rows, cols], chunk)} at warpgroup scope, one dim of acc at a run-time start; the
     * chunk is a (64, 32) register tile of the accumulator's layout, else a row-major shared tile ({@link #STORAGE}).
     */
    static List<Operand> accumulatorChunk(long[] start, long[] extent, int dim, Modular values) {
        long[] shape = {64, 256};
        Operand acc = new Operand("dst", "acc", "float32", shape, start, extent, Layout.parse(ACCUMULATOR))
                .withRunTimeStart(dim, values);
        boolean registers = extent[0] == 64 && extent[1] == 32;
        Operand chunk = new Operand("src1", "b_f32", "float32", extent, new long[2], extent,
                registers ? Layout.parse(ACCUMULATOR_CHUNK) : rowMajor(extent));
        return List.of(acc, rename(acc, "src0"), chunk);
    }

    /** Where {@link #accumulatorChunk}'s operands live. */
    static Map<String, String> storage(List<Operand> ops) {
        boolean registers = ops.get(2).layout().toString().contains("laneid");
        return Map.of("dst", "local", "src0", "local", "src1", registers ? "local" : "shared");
    }

    @Test
    void theAccumulatorsColumnsAtARunTimeMultipleOf32MoveTheSlotAlongItsRegisterDigit() {
        List<Operand> ops = accumulatorChunk(new long[2], new long[] {64, 32}, 1, new Modular(32, 0));
        Map<String, String> storage = Map.of("dst", "local", "src0", "local", "src1", "local");
        Decision d = wholeRegion(call("add", "warpgroup", 128, ops, storage));
        assertTrue(d.accepted(), d.reason());
        Map<?, ?> dst = (Map<?, ?>) ((Map<?, ?>) d.planJson().get("access")).get("dst");
        // columns c*32 .. c*32+32: 2 registers and 4 lanes whole, 4 of the 32 register digits of stride 4
        assertEquals("{1=[[8, 0, 4]]}", dst.get("start_terms").toString());
        assertEquals("{}", dst.get("start_strides").toString());
        // slots 0..3 of a 16-slot group: 2 columns x rows r and r + 8, one 16-byte register vector
        assertEquals(4L, d.planJson().get("vec"));
        for (long c = 0; c < 8; c++) {
            List<Operand> fixed = new ArrayList<>();
            for (Operand o : ops) {
                long[] start = o.start().clone();
                start[1] = o.role().equals("src1") ? 0 : c * 32;
                fixed.add(new Operand(o.role(), o.name(), o.dtype(), o.shape(), start, o.extent(), o.layout()));
            }
            Map<String, Object> plan = atStart(atStart(d.planJson(), "dst", new long[] {0, c * 32}), "src0",
                    new long[] {0, c * 32});
            check(plan, fixed, storage, 128);
        }
    }

    static Decision add(List<Operand> ops) {
        return wholeRegion(call("add", "warpgroup", 128, ops, storage(ops)));
    }

    @Test
    void runTimeAccumulatorStartsThatWouldMoveThreadsOrCarryAreDeclinedWithTheModulusNeeded() {
        // 32 columns at 16 n: 4 values of the 32-register digit from an even one only, which may carry
        declined(add(accumulatorChunk(new long[2], new long[] {64, 32}, 1, new Modular(16, 0))),
                "carry into the next digit for some start: it needs a start that is a multiple of 32");
        // 4 columns at 4 n: which lanes hold them depends on n
        declined(add(accumulatorChunk(new long[2], new long[] {64, 4}, 1, new Modular(4, 0))),
                "thread digit 1 ((t / 1) mod 4");
        // 16 rows at 16 n: the warp holding them depends on n
        declined(add(accumulatorChunk(new long[2], new long[] {16, 256}, 0, new Modular(16, 0))),
                "thread digit 2 ((t / 32) mod 4");
        // 12 columns: no run of whole digits
        declined(add(accumulatorChunk(new long[2], new long[] {64, 12}, 1, new Modular(16, 0))),
                "is no run of whole digits");
        // 64 rows at 64 n (only 0 fits): every digit is fixed, no start term
        Decision rows = add(accumulatorChunk(new long[2], new long[] {64, 32}, 0, new Modular(64, 0)));
        assertTrue(rows.accepted(), rows.reason());
        assertFalse(rows.planJson().toString().contains("start_terms"), rows.planJson().toString());
    }

    /**
     * A register tile stored to or loaded from a swizzled shared tile: every access goes to swz(address without the
     * vector lane) + lane, which the check compares with swz(layout address) element by element; the vectors stay
     * within 2^M elements.
     */
    @Test
    void registerPlansAddressASwizzledSharedTileThroughTheSwizzle() {
        int[] counts = new int[3]; // accepted, vectorized, capped by the swizzle
        Property.forAll("cuda register plan with a swizzled shared tile = layout maps", CASES / 2, r -> {
            Tile tile = randomTile(r, randomRegisterExtents(r));
            long[][] region = randomRegion(r, tile.shape());
            String dtype = new String[] {"float32", "float16", "int8"}[r.nextInt(3)];
            Layout random = CudaRulesTest.randomLayout(r, tile.shape());
            Layout memLayout = Layout.of(random.shard(), List.of(), random.offset());
            int b = 1 + r.nextInt(3);
            Swizzle z = new Swizzle(b, r.nextInt(4), b + r.nextInt(3));
            boolean load = r.nextBoolean();
            Operand reg = new Operand(load ? "dst" : "src0", "R", dtype, tile.shape(), region[0], region[1],
                    tile.layout());
            Operand mem = new Operand(load ? "src0" : "dst", "S", dtype, tile.shape(), region[0], region[1],
                    memLayout);
            List<Operand> ops = load ? List.of(reg, mem) : List.of(mem, reg);
            Map<String, String> storage = Map.of(reg.role(), "local", mem.role(), "shared");
            Map<String, Swizzle> swizzles = Map.of(mem.role(), z);
            Decision d = wholeRegion(call("copy", tile.scope(), tile.threads(), ops,
                    storage, swizzles));
            if (!d.accepted()) {
                assertTrue(d.reason().contains("crosses a digit") || d.reason().contains("one address")
                        || d.reason().contains("no common refinement") || d.reason().contains("iter extent")
                        || d.reason().contains("does not divide"), d.reason());
                return;
            }
            counts[0]++;
            long vec = (Long) d.planJson().get("vec");
            counts[1] += vec > 1 ? 1 : 0;
            assertTrue(vec <= 1L << z.base() || !d.planJson().toString().contains("swizzle"), "vec " + vec);
            Decision plain = wholeRegion(call("copy", tile.scope(), tile.threads(),
                    ops, storage));
            counts[2] += (Long) plain.planJson().get("vec") > vec ? 1 : 0;
            check(d.planJson(), ops, storage, tile.threads(), swizzles);
        });
        assertTrue(counts[0] > CASES / 4, "accepted " + Arrays.toString(counts));
        assertTrue(counts[1] > CASES / 20, "vectorized " + Arrays.toString(counts));
        assertTrue(counts[2] > 0, "capped by the swizzle " + Arrays.toString(counts));
    }

    /** The pipelined Hopper GEMM's store: {@code out} (the accumulator's layout) to its swizzled staging tile. */
    @Test
    void theAccumulatorIsStoredToTheSwizzledStagingTileAtEveryPart() {
        long[] shape = {2, 1, 64, 256};
        Operand smem = new Operand("dst", "D_smem", "float16", shape, new long[4], new long[] {1, 1, 64, 256},
                Layout.parse("S[(2,1,64,4,64):(16384,16384,64,4096,1)]"));
        Operand out = new Operand("src0", "out", "float16", new long[] {64, 256}, new long[2], new long[] {64, 256},
                Layout.parse(ACCUMULATOR));
        Map<String, String> storage = Map.of("dst", "shared.dyn", "src0", "local");
        Map<String, Swizzle> swizzles = Map.of("dst", new Swizzle(3, 3, 3));
        Decision d = wholeRegion(call("copy", "warpgroup", 128,
                List.of(smem.withRunTimeStart(0, Modular.ANY), out), storage, swizzles));
        assertTrue(d.accepted(), d.reason());
        assertEquals(2L, d.planJson().get("vec"));
        assertEquals("[3, 3, 3]", ((Map<?, ?>) ((Map<?, ?>) d.planJson().get("access")).get("dst")).get("swizzle")
                .toString());
        for (long part = 0; part < 2; part++) {
            long[] start = {part, 0, 0, 0};
            Operand fixed = new Operand("dst", "D_smem", "float16", shape, start, smem.extent(), smem.layout());
            check(atStart(d.planJson(), "dst", start), List.of(fixed, out), storage, 128, swizzles);
        }
        // a swizzled view that does not start at a multiple of the swizzle's period is declined
        Operand shifted = new Operand("dst", "D_smem", "float16", shape, new long[4], new long[] {1, 1, 64, 256},
                smem.layout(), 8, new boolean[4]);
        declined(wholeRegion(call("copy", "warpgroup", 128, List.of(shifted, out),
                storage, swizzles)), "not a multiple of the swizzle's period 512");
    }

    /** The plan with {@code role}'s base moved by what its run-time starts add at {@code starts}. */
    @SuppressWarnings("unchecked")
    static Map<String, Object> atStart(Map<String, Object> plan, String role, long[] starts) {
        Map<String, Object> copy = new java.util.LinkedHashMap<>(plan);
        Map<String, Map<String, Object>> access = new java.util.LinkedHashMap<>(
                (Map<String, Map<String, Object>>) plan.get("access"));
        Map<String, Object> entry = new java.util.LinkedHashMap<>(access.get(role));
        entry.put("base", (Long) entry.get("base") + CudaRunTimeStartsTest.runTimeOffset(entry, starts));
        access.put(role, entry);
        copy.put("access", access);
        return copy;
    }

    static Operand rename(Operand o, String role) {
        return new Operand(role, o.name(), o.dtype(), o.shape(), o.start(), o.extent(), o.layout(), o.elemOffset(),
                o.runTimeStarts());
    }

    /** Runs the plan for every thread and compares with the layouts' maps (see the class comment). */
    /** The register rule without cutting a region into boxes ({@link CudaRegisterRule#planWhole}). */
    private static final Rule WHOLE_REGION = new Rule() {
        public String variant() {
            return "axe4j-cuda-register";
        }

        public int priority() {
            return CudaRegisterRule.INSTANCE.priority();
        }

        public boolean acceptsSwizzle() {
            return true;
        }

        public SchedulePlan plan(Request call) {
            return CudaRegisterRule.planWhole(call);
        }
    };

    static Decision wholeRegion(Request call) {
        return WHOLE_REGION.decide(call);
    }

    /**
     * A region the whole-region plan declines because it crosses a digit part way: the rule cuts it into boxes
     * ({@link RegisterBoxes}) that partition the region, and each box's plan moves exactly that box's elements
     * between the threads and slots and the addresses the layouts give.
     */
    @Test
    void registerPlansOfBoxesMoveEveryElementOfTheirBox() {
        int[] counts = new int[2]; // cut into boxes, declined whole but not cut (too many boxes: the digits rule)
        Property.forAll("cuda register plan of boxes = layout maps", CASES / 5, r -> {
            Tile tile = randomTile(r, randomRegisterExtents(r));
            long[][] region = randomRegion(r, tile.shape());
            String dtype = new String[] {"float32", "float16"}[r.nextInt(2)];
            long[] memShape = tile.shape().clone();
            int d = r.nextInt(memShape.length);
            memShape[d] *= 2;
            long[] memStart = region[0].clone();
            memStart[d] = r.nextInt((int) (memShape[d] - region[1][d] + 1));
            Layout memLayout = CudaRulesTest.randomLayout(r, memShape);
            boolean load = r.nextBoolean();
            Operand reg = new Operand(load ? "dst" : "src0", "R", dtype, tile.shape(), region[0], region[1],
                    tile.layout());
            Operand mem = new Operand(load ? "src0" : "dst", "G", dtype, memShape, memStart, region[1], memLayout);
            List<Operand> ops = load ? List.of(reg, mem) : List.of(mem, reg);
            Map<String, String> storage = Map.of(reg.role(), "local", mem.role(), "global");
            Request call = call("copy", tile.scope(), tile.threads(), ops, storage);
            Decision whole = wholeRegion(call);
            if (whole.accepted() || !whole.reason().contains("crosses a digit")) {
                return;
            }
            Decision cut = CudaDispatch.decide("axe4j-cuda-register", call);
            List<Request> boxes = RegisterBoxes.of(call);
            if (!cut.accepted()) {
                counts[1]++;
                return;
            }
            counts[0]++;
            assertEquals("cuda-register-boxes", cut.planJson().get("kind"));
            @SuppressWarnings("unchecked")
            List<Map<String, Object>> plans = (List<Map<String, Object>>) cut.planJson().get("boxes");
            assertEquals(boxes.size(), plans.size());
            assertTrue(boxes.size() <= RegisterBoxes.MAX_BOXES);
            long elements = 0;
            for (int i = 0; i < boxes.size(); i++) {
                elements += boxes.get(i).operands().get(0).elements();
                check(plans.get(i), boxes.get(i).operands(), storage, tile.threads());
            }
            assertEquals(reg.elements(), elements, "the boxes partition the region");
        });
        assertTrue(counts[0] > CASES / 100, "cut into boxes " + Arrays.toString(counts));
    }

    static void check(Map<String, Object> plan, List<Operand> ops, Map<String, String> storage, long threads) {
        check(plan, ops, storage, threads, Map.of());
    }

    /**
     * {@link #check} where some memory operands are swizzled: the plan's access is the emitter's, swz(address
     * without the vector lane) + lane * stride, and the element's location is swz(its layout address).
     */
    @SuppressWarnings("unchecked")
    static void check(Map<String, Object> plan, List<Operand> ops, Map<String, String> storage, long threads,
            Map<String, Swizzle> swizzles) {
        List<Map<String, Object>> loops = (List<Map<String, Object>>) plan.get("loops");
        Map<String, Map<String, Object>> access = (Map<String, Map<String, Object>>) plan.get("access");
        long vec = (Long) plan.get("vec");
        if (vec > 1) {
            assertEquals("vectorized", loops.get(loops.size() - 1).get("kind"));
            assertEquals(vec, (Long) loops.get(loops.size() - 1).get("extent"));
        }
        Operand dst = ops.get(0);
        boolean dstReg = storage.get("dst").equals("local");
        // expected: the locations of every region element, per operand
        Map<String, long[]> elementOf = new HashMap<>(); // dst location -> coordinate
        Map<String, List<String>> expectedDst = new TreeMap<>();
        int rank = dst.shape().length;
        for (long flat = 0; flat < dst.elements(); flat++) {
            long[] coord = new long[rank];
            long rest = flat;
            for (int k = rank - 1; k >= 0; k--) {
                coord[k] = dst.start()[k] + rest % dst.extent()[k];
                rest /= dst.extent()[k];
            }
            List<String> locs = locations(dst, dstReg, coord, swizzles.getOrDefault("dst", Swizzle.IDENTITY));
            if (dstReg) {
                for (String l : locs) {
                    assertFalse(elementOf.containsKey(l), "two elements at " + l);
                    elementOf.put(l, coord);
                    expectedDst.put(l, List.of(l));
                }
            } else {
                String first = locs.stream()
                        .min(java.util.Comparator.comparingLong(x -> Long.parseLong(x.substring(1)))).orElseThrow();
                Collections.sort(locs);
                elementOf.put(first, coord);
                expectedDst.put(first, locs);
            }
        }
        Map<String, List<String>> got = new TreeMap<>();
        Map<String, List<String>> holdersOf = new HashMap<>(); // source role + coordinate -> its locations
        long[] counters = new long[loops.size()];
        for (long t = 0; t < threads; t++) {
            if (!holds(plan, t)) {
                continue;
            }
            Map<String, Long> base = new HashMap<>();
            for (Operand o : ops) {
                Map<String, Object> a = access.get(o.role());
                long b = (Long) a.get("base");
                for (List<Long> term : (List<List<Long>>) a.get("thread_terms")) {
                    long v = ((((t / term.get(0)) % term.get(1)) - term.get(2)) / term.get(3)) % term.get(4);
                    b += v * term.get(5);
                }
                base.put(o.role(), b);
            }
            Arrays.fill(counters, 0);
            while (true) {
                Map<String, Long> addr = new HashMap<>();
                Map<String, Long> lane = new HashMap<>(); // what the vector lane adds, outside the swizzle
                for (Operand o : ops) {
                    long a = base.get(o.role());
                    for (int l = 0; l < loops.size(); l++) {
                        a += counters[l] * ((Map<String, Long>) loops.get(l).get("strides")).get(o.role());
                    }
                    addr.put(o.role(), a);
                    long innerStride = loops.isEmpty() ? 0
                            : ((Map<String, Long>) loops.get(loops.size() - 1).get("strides")).get(o.role());
                    lane.put(o.role(), vec > 1 ? counters[loops.size() - 1] * innerStride : 0);
                    if (vec > 1 && counters[loops.size() - 1] == 0 && innerStride == 1) {
                        assertEquals(0, Math.floorMod(a, vec), o.role() + " vector access at " + a + ", vec " + vec);
                    }
                }
                String dl = location(dst, storage, t, addr.get("dst"), lane.get("dst"), swizzles);
                List<String> stores = new ArrayList<>();
                for (Long rep : (List<Long>) access.get("dst").get("replicas")) {
                    stores.add(location(dst, storage, t, addr.get("dst") + rep, lane.get("dst"), swizzles));
                }
                Collections.sort(stores);
                assertFalse(got.containsKey(dl), "stored twice: " + dl);
                got.put(dl, stores);
                long[] coord = elementOf.get(dl);
                assertNotNull(coord, "store outside the region: " + dl);
                for (Operand o : ops.subList(1, ops.size())) {
                    boolean reg = storage.get(o.role()).equals("local");
                    String loc = location(o, storage, t, addr.get(o.role()), lane.get(o.role()), swizzles);
                    long[] at = sameElement(dst, coord, o);
                    List<String> holders = holdersOf.computeIfAbsent(o.role() + Arrays.toString(at),
                            k -> locations(o, reg, at, swizzles.getOrDefault(o.role(), Swizzle.IDENTITY)));
                    assertTrue(holders.contains(loc), o.role() + " read " + loc + " for element "
                            + Arrays.toString(at) + " (holders " + holders + ")");
                }
                int l = loops.size() - 1;
                while (l >= 0 && ++counters[l] == (Long) loops.get(l).get("extent")) {
                    counters[l--] = 0;
                }
                if (l < 0) {
                    break;
                }
            }
        }
        assertEquals(expectedDst, got, plan.toString());
    }

    /**
     * The coordinate in {@code o} of the region element at {@code coord} of {@code dst}: the same offsets from the
     * region starts along the dims of extent > 1 (unit dims, which operands of different ranks may add, dropped).
     */
    static long[] sameElement(Operand dst, long[] coord, Operand o) {
        List<Long> offsets = new ArrayList<>();
        for (int k = 0; k < coord.length; k++) {
            if (dst.extent()[k] != 1) {
                offsets.add(coord[k] - dst.start()[k]);
            }
        }
        long[] at = o.start().clone();
        int next = 0;
        for (int k = 0; k < at.length; k++) {
            if (o.extent()[k] != 1) {
                at[k] += offsets.get(next++);
            }
        }
        return at;
    }

    static String location(Operand o, Map<String, String> storage, long t, long addr) {
        return storage.get(o.role()).equals("local") ? t + ":" + addr : "@" + addr;
    }

    /** The emitter's access: a swizzled memory operand at swz(addr - lane) + lane. */
    static String location(Operand o, Map<String, String> storage, long t, long addr, long lane,
            Map<String, Swizzle> swizzles) {
        Swizzle z = swizzles.get(o.role());
        if (z == null || storage.get(o.role()).equals("local")) {
            return location(o, storage, t, addr);
        }
        return "@" + (z.apply(addr - lane) + lane);
    }

    /** The plan's guards and one-store conditions for thread t. */
    @SuppressWarnings("unchecked")
    static boolean holds(Map<String, Object> plan, long t) {
        for (List<Long> g : (List<List<Long>>) plan.get("guards")) {
            long v = (t / g.get(0)) % g.get(1);
            if (v < g.get(2) || v >= g.get(2) + g.get(3)) {
                return false;
            }
        }
        for (List<Long> w : (List<List<Long>>) plan.getOrDefault("write_once", List.of())) {
            if ((t / w.get(0)) % w.get(1) != 0) {
                return false;
            }
        }
        return true;
    }

    // ---- declines ------------------------------------------------------------------------------------------

    static Layout rowMajor(long[] shape) {
        List<Iter> iters = new ArrayList<>();
        long stride = 1;
        for (int d = shape.length - 1; d >= 0; d--) {
            iters.add(0, Iter.of(shape[d], stride));
            stride *= shape[d];
        }
        return Layout.of(iters, List.of(), Map.of());
    }

    static Decision decide(String layout, long[] shape, String scope, long threads) {
        Operand reg = new Operand("dst", "R", "float32", shape, new long[shape.length], shape, Layout.parse(layout));
        Operand mem = new Operand("src0", "G", "float32", shape, new long[shape.length], shape,
                rowMajor(shape));
        return wholeRegion(call("copy", scope, threads, List.of(reg, mem),
                Map.of("dst", "local", "src0", "global")));
    }

    static void declined(Decision d, String reason) {
        assertFalse(d.accepted(), "accepted, expected a decline with: " + reason);
        assertTrue(d.reason().contains(reason), d.reason());
    }

    @Test
    void declinesNameTheThreadAxisProblem() {
        long[] s32 = {32, 4};
        declined(decide("S[(64,4):(1@laneid,1)]", new long[] {64, 4}, "warp", 32),
                "the laneid iters reach 64, the warp scope has 32 values of laneid");
        declined(decide("S[(16,4):(1@laneid,1)]", new long[] {16, 4}, "warp", 32),
                "cover 16 of the scope's 32 threads");
        declined(decide("S[(32,4):(1@laneid,1)]", s32, "cta", 128), "cover 32 of the scope's 128 threads");
        declined(decide("S[(32,4):(4,1)]", s32, "warp", 32), "cover 1 of the scope's 32 threads");
        declined(decide("S[(2,32,4):(1@warpid,1@laneid,1)]", new long[] {64, 4}, "warpgroup", 128),
                "warpid indexes the CTA's threads, not those of one warpgroup");
        declined(decide("S[(4,8,4):(12@laneid,1@laneid,1)]", s32, "warp", 32), "are not a mixed radix of laneid");
        declined(decide("S[(128,4):(1@tid_in_wg,1)] + R[2:1@laneid]", new long[] {128, 4}, "warpgroup", 128),
                "index the same threads");
        declined(decide("S[(32,4):(1@laneid,1)] + 1@laneid", s32, "warp", 32), "offset 1 on thread axis laneid");
        declined(decide("S[(32,4):(1@laneid,1)] + R[2:8]", s32, "warp", 32), "one element in several slots");
        declined(decide("S[(32,4):(1@laneid,1@P)]", s32, "warp", 32),
                "layout axis P is neither the register axis m nor a thread axis");
        declined(decide("S[(32,4):(1@laneid,1)]", s32, "thread", 1), "at thread scope");
        Decision wg = decide("S[(32,4,4):(1@laneid,1@wid_in_wg,1)]", new long[] {32, 16}, "warpgroup", 128);
        assertTrue(wg.accepted(), wg.reason());
        // a replica names the warps that hold copies
        Decision copies = decide("S[(32,4):(1@laneid,1)] + R[4:1@warpid]", s32, "cta", 128);
        assertTrue(copies.accepted(), copies.reason());
    }

    @Test
    void aRunTimeStartMovesTheSlotOnlyOnRegisterDims() {
        long[] shape = {4, 32, 8};
        Layout regs = Layout.parse("S[(4,32,8):(8,1@laneid,1)]");
        Operand reg = new Operand("dst", "R", "float16", shape, new long[3], new long[] {1, 32, 8}, regs, 0,
                new boolean[] {true, false, false});
        Operand mem = new Operand("src0", "G", "float16", shape, new long[3], new long[] {1, 32, 8}, rowMajor(shape),
                0, new boolean[] {true, false, false});
        String json = request("copy", "warp", 32, List.of(reg, mem), new TreeMap<>(Map.of("dst", "local", "src0",
                "global"))).replace("\"start\":[0, 0, 0]", "\"start\":[null, 0, 0]");
        Decision d = wholeRegion(Request.fromJson(json, List.of(regs, mem.layout())));
        assertTrue(d.accepted(), d.reason());
        assertEquals(8L, d.planJson().get("vec"));
        assertEquals("{0=8}", ((Map<?, ?>) ((Map<?, ?>) d.planJson().get("access")).get("dst")).get("start_strides")
                .toString());
        Layout rowsOnLanes = Layout.parse("S[(4,32,8):(1@laneid,32,1)] + R[8:4@laneid]");
        Operand lanes = new Operand("dst", "R", "float16", shape, new long[3], new long[] {1, 32, 8}, rowsOnLanes, 0,
                new boolean[] {true, false, false});
        json = request("copy", "warp", 32, List.of(lanes, mem), new TreeMap<>(Map.of("dst", "local", "src0",
                "global"))).replace("\"start\":[0, 0, 0]", "\"start\":[null, 0, 0]");
        declined(wholeRegion(Request.fromJson(json, List.of(rowsOnLanes,
                mem.layout()))), "dim 0 starts at a run-time index (any value) and its thread digit 0 ((t / 1) mod 4");
    }

    @Test
    void registerOperandsOnDifferentThreadsAreDeclined() {
        long[] shape = {32, 4};
        Operand a = new Operand("dst", "R", "float32", shape, new long[2], shape,
                Layout.parse("S[(32,4):(1@laneid,1)]"));
        Operand b = new Operand("src0", "Q", "float32", shape, new long[2], shape,
                Layout.parse("S[(4,8,4):(1,4@laneid,1@laneid)]"));
        Decision d = wholeRegion(call("copy", "warp", 32, List.of(a, b),
                Map.of("dst", "local", "src0", "local")));
        assertFalse(d.accepted());
        assertTrue(d.reason().contains("on different threads; moving elements between threads needs shuffles"),
                d.reason());
    }

    @Test
    void globalToRegisterOfEightHalvesPerThreadIsOneSixteenByteAccess() {
        long[] shape = {32, 8};
        Operand reg = new Operand("dst", "R", "float16", shape, new long[2], shape,
                Layout.parse("S[(32,8):(1@laneid,1)]"));
        Operand mem = new Operand("src0", "G", "float16", shape, new long[2], shape, rowMajor(shape));
        Decision d = wholeRegion(call("copy", "warp", 32, List.of(reg, mem),
                Map.of("dst", "local", "src0", "global")));
        assertTrue(d.accepted(), d.reason());
        assertEquals(8L, d.planJson().get("vec"));
        assertEquals("axe4j-cuda-register", CudaDispatch.explain(call("copy", "warp", 32, List.of(reg, mem),
                Map.of("dst", "local", "src0", "global"))).stream().filter(Decision::accepted).findFirst()
                .orElseThrow().variant());
    }
}
