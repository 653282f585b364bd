package org.axe4j.schedules.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Point;
import org.axe4j.layout.Property;
import org.axe4j.layout.Shape;
import org.axe4j.layout.Swizzle;
import org.axe4j.schedules.Decision;
import org.axe4j.schedules.Modular;
import org.axe4j.schedules.Operand;
import org.axe4j.schedules.Request;
import org.junit.jupiter.api.Test;

/**
 * The vector and cp.async plans of a region whose start is known only at run time as {@code c n + b} (TVM's
 * modular-set analysis, {@code start_modulus}): run at every value the start takes in the buffer, the way the
 * emitters run them (the base plus what the start terms add), they copy exactly the region's elements with every
 * access aligned to its width; and the width is the narrowest width of the plans of the same region at each of those
 * values as a constant start, i.e. a run-time start costs no width the values themselves do not cost.
 */
class CudaRunTimeStartsTest {

    /** The request JSON: a run-time start is null, with [c, b] in params.start_modulus. */
    static String request(String op, String scope, long threads, List<Operand> ops) {
        StringBuilder sb = new StringBuilder("{\"op\":\"" + op + "\",\"target\":\"cuda\",\"scope\":\"" + scope
                + "\",\"operands\":[");
        StringBuilder moduli = new StringBuilder();
        for (int i = 0; i < ops.size(); i++) {
            Operand o = ops.get(i);
            String[] start = new String[o.shape().length];
            String[] modulus = new String[o.shape().length];
            boolean runTime = false;
            for (int d = 0; d < start.length; d++) {
                Modular m = o.runTimeStarts()[d];
                start[d] = m == null ? Long.toString(o.start()[d]) : "null";
                modulus[d] = m == null ? "null" : "[" + m.coeff() + "," + m.residue() + "]";
                runTime |= m != null;
            }
            sb.append(i == 0 ? "" : ",").append("{\"role\":\"").append(o.role()).append("\",\"name\":\"")
                    .append(o.name()).append("\",\"dtype\":\"").append(o.dtype()).append("\",\"shape\":")
                    .append(Arrays.toString(o.shape())).append(",\"start\":[").append(String.join(",", start))
                    .append("],\"extent\":").append(Arrays.toString(o.extent())).append('}');
            if (runTime) {
                moduli.append(moduli.length() == 0 ? "" : ",").append('"').append(o.role()).append("\":[")
                        .append(String.join(",", modulus)).append(']');
            }
        }
        return sb.append("],\"params\":{\"threads\":").append(threads).append(",\"start_modulus\":{")
                .append(moduli).append("},\"storage\":{\"dst\":\"shared\",\"src0\":\"global\"}}}").toString();
    }

    static Decision decide(String variant, String op, long threads, Operand dst, Operand src, Swizzle swizzle) {
        return CudaDispatch.decide(variant, Request.fromJson(request(op, threads == 1 ? "thread" : "cta", threads,
                List.of(dst, src)), List.of(dst.layout(), src.layout()), Arrays.asList(swizzle, null)));
    }

    /** What a plan entry's run-time starts add at the start values {@code starts} (the emitters' run_time_offset). */
    @SuppressWarnings("unchecked")
    static long runTimeOffset(Map<String, Object> entry, long[] starts) {
        long out = 0;
        for (Map.Entry<String, Long> e : ((Map<String, Long>) entry.getOrDefault("start_strides", Map.of()))
                .entrySet()) {
            out += starts[Integer.parseInt(e.getKey())] * e.getValue();
        }
        for (Map.Entry<String, List<List<Long>>> e : ((Map<String, List<List<Long>>>) entry.getOrDefault(
                "start_terms", Map.of())).entrySet()) {
            long s = starts[Integer.parseInt(e.getKey())];
            for (List<Long> t : e.getValue()) {
                long x = Math.floorDiv(s, t.get(0));
                out += (t.get(1) == 0 ? x : Math.floorMod(x, t.get(1))) * t.get(2);
            }
        }
        return out;
    }

    /**
     * The plan run as the emitters run it with the run-time starts at {@code dstStart} / {@code srcStart}: chunk c of
     * vec elements at base + start terms + counters * strides; "dsts<-src" per element; asserts aligned vectors.
     */
    @SuppressWarnings("unchecked")
    static List<String> run(Map<String, Object> plan, long[] dstStart, long[] srcStart, Swizzle swizzle) {
        List<Map<String, Object>> loops = (List<Map<String, Object>>) plan.get("loops");
        Map<String, Map<String, Object>> access = (Map<String, Map<String, Object>>) plan.get("access");
        long vec = (Long) plan.get("vec");
        long chunks = (Long) plan.get("chunks");
        List<String> out = new ArrayList<>();
        for (long c = 0; c < chunks; c++) {
            long dst = (Long) access.get("dst").get("base") + runTimeOffset(access.get("dst"), dstStart);
            long src = (Long) access.get("src0").get("base") + runTimeOffset(access.get("src0"), srcStart);
            long below = 1;
            long[] inner = {0, 0};
            for (int l = loops.size() - 1; l >= 0; l--) {
                long e = (Long) loops.get(l).get("extent");
                Map<String, Long> st = (Map<String, Long>) loops.get(l).get("strides");
                long counter = (c * vec / below) % e;
                dst += counter * st.get("dst");
                src += counter * st.get("src0");
                if (l == loops.size() - 1) {
                    inner = new long[] {st.get("dst"), st.get("src0")};
                }
                below *= e;
            }
            if (vec > 1 && inner[1] != 0) {
                assertEquals(0, Math.floorMod(src, vec), "src vector at " + src + " of width " + vec);
            }
            List<Long> dsts = new ArrayList<>();
            for (Object rep : (List<Object>) access.get("dst").get("replicas")) {
                long at = swizzle.apply(dst + (Long) rep);
                if (vec > 1) {
                    assertEquals(0, Math.floorMod(at, vec), "dst vector at " + at + " of width " + vec);
                }
                dsts.add(at);
            }
            Collections.sort(dsts);
            for (long j = 0; j < vec; j++) {
                List<Long> at = new ArrayList<>();
                for (long d : dsts) {
                    at.add(d + j * inner[0]);
                }
                out.add(at + "<-" + (src + j * inner[1]));
            }
        }
        Collections.sort(out);
        return out;
    }

    /** The copy by enumeration: per region element, "dst addresses (swizzled)<-src address". */
    static List<String> expected(Operand dst, long[] dstStart, Operand src, long[] srcStart, Swizzle swizzle) {
        List<String> out = new ArrayList<>();
        long[] ext = dst.extent();
        for (long flat = 0; flat < dst.elements(); flat++) {
            long[] cd = new long[ext.length];
            long[] cs = new long[ext.length];
            long rest = flat;
            for (int k = ext.length - 1; k >= 0; k--) {
                cd[k] = dstStart[k] + rest % ext[k];
                cs[k] = srcStart[k] + rest % ext[k];
                rest /= ext[k];
            }
            List<Long> dsts = new ArrayList<>();
            for (Point p : dst.layout().apply(Shape.of(dst.shape()), cd)) {
                dsts.add(swizzle.apply(dst.elemOffset() + p.get(Axis.M)));
            }
            Collections.sort(dsts);
            out.add(dsts + "<-" + (src.elemOffset() + src.layout().apply(Shape.of(src.shape()), cs).get(0)
                    .get(Axis.M)));
        }
        Collections.sort(out);
        return out;
    }

    static Operand at(Operand o, long[] start) {
        return new Operand(o.role(), o.name(), o.dtype(), o.shape(), start, o.extent(), o.layout());
    }

    @Test
    void vectorPlansAtRunTimeStartsCopyLikeTheLayoutsAtEveryValueWithTheNarrowestConstantWidth() {
        check("axe4j-cuda-vector", "copy");
    }

    @Test
    void cpAsyncPlansAtRunTimeStartsCopyLikeTheLayoutsAtEveryValueWithTheNarrowestConstantChunk() {
        check("axe4j-cuda-cp-async", "copy_async");
    }

    private static void check(String variant, String op) {
        int[] counts = new int[4]; // accepted, accepted with vec > 1, width compared with the constants', declined
        Property.forAll(variant + " at run-time starts", r -> {
            int rank = 1 + r.nextInt(2);
            long[] shape = new long[rank];
            long[] start = new long[rank];
            long[] extent = new long[rank];
            for (int d = 0; d < rank; d++) {
                shape[d] = new long[] {8, 12, 16, 32, 64}[r.nextInt(5)];
                extent[d] = shape[d] / new long[] {1, 2, 4}[r.nextInt(3)];
                start[d] = r.nextInt((int) (shape[d] - extent[d] + 1));
                if (r.nextBoolean()) {
                    start[d] = start[d] / extent[d] * extent[d]; // a tile index times the tile
                }
            }
            String dtype = r.nextBoolean() ? "float32" : "float16";
            Operand dst = new Operand("dst", "S", dtype, shape, new long[rank], extent,
                    CudaRulesTest.randomLayout(r, shape));
            Operand src = new Operand("src0", "G", dtype, shape, start, extent, CudaRulesTest.randomLayout(r, shape));
            long threads = new long[] {1, 32, 128}[r.nextInt(3)];
            int b = 1 + r.nextInt(3);
            Swizzle swizzle = r.nextInt(4) == 0 ? new Swizzle(b, r.nextInt(4), b + r.nextInt(3)) : Swizzle.IDENTITY;
            // the source's start in one dim is run time: c n + b, with the chosen start one of its values
            int d = r.nextInt(rank);
            long c = new long[] {1, 2, 4, 8, extent[d], 2 * extent[d]}[r.nextInt(6)];
            Modular s = new Modular(c, start[d]);
            Operand rt = src.withRunTimeStart(d, s);
            Decision run = decide(variant, op, threads, dst, rt, swizzle);
            List<Long> values = s.valuesIn(0, shape[d] - extent[d] + 1);
            long narrowest = Long.MAX_VALUE;
            boolean allConstant = true;
            for (long v : values) {
                long[] sv = start.clone();
                sv[d] = v;
                Decision constant = decide(variant, op, threads, dst, at(src, sv), swizzle);
                allConstant &= constant.accepted();
                if (constant.accepted()) {
                    narrowest = Math.min(narrowest, (Long) constant.planJson().get("vec"));
                }
            }
            if (!run.accepted()) {
                counts[3]++;
                // only what a run-time start cannot be: a start inside a digit the region walks, with no fixed part
                assertTrue(!allConstant || run.reason().contains("run-time index"), run.reason());
                return;
            }
            counts[0]++;
            long vec = (Long) run.planJson().get("vec");
            if (vec > 1) {
                counts[1]++;
            }
            if (allConstant) {
                counts[2]++;
                assertEquals(narrowest, vec, "width at " + s + " vs the constant starts " + values + ": "
                        + run.planJson().get("notes"));
            }
            for (long v : values) {
                long[] sv = start.clone();
                sv[d] = v;
                assertEquals(expected(dst, dst.start(), src, sv, swizzle), run(run.planJson(), dst.start(), sv, swizzle),
                        rt + " at " + v + ": " + run.planJson());
            }
        });
        assertTrue(counts[0] > Property.CASES / 3, Arrays.toString(counts));
        assertTrue(counts[1] > Property.CASES / 10, Arrays.toString(counts));
        assertTrue(counts[2] > Property.CASES / 3, Arrays.toString(counts));
    }

    static Layout rowMajor(long rows, long cols) {
        return Layout.parse("S[(" + rows + "," + cols + "):(" + cols + ",1)]");
    }

    /** The issue's copies: fp32 columns at bx * 32 keep 16-byte vectors, fp16 K tiles at kt * 32 16-byte cp.async. */
    @Test
    void theIssuesTilesKeepTheirWidth() {
        Operand x = new Operand("dst", "X", "float32", new long[] {64, 32}, new long[2], new long[] {64, 32},
                rowMajor(64, 32));
        Operand a = new Operand("src0", "A", "float32", new long[] {64, 64}, new long[2], new long[] {64, 32},
                rowMajor(64, 64)).withRunTimeStart(1, new Modular(32, 0));
        Decision d = decide("axe4j-cuda-vector", "copy", 128, x, a, Swizzle.IDENTITY);
        assertEquals(4L, d.planJson().get("vec"), d.planJson().toString());
        // nothing known of the start: a column anywhere, one element per access
        d = decide("axe4j-cuda-vector", "copy", 128, x, a.withRunTimeStart(1, Modular.ANY), Swizzle.IDENTITY);
        assertEquals(1L, d.planJson().get("vec"));
        Operand xs = new Operand("dst", "X", "float16", new long[] {64, 32}, new long[2], new long[] {64, 32},
                rowMajor(64, 32));
        Operand k = new Operand("src0", "A", "float16", new long[] {64, 128}, new long[2], new long[] {64, 32},
                rowMajor(64, 128)).withRunTimeStart(1, new Modular(32, 0));
        d = decide("axe4j-cuda-cp-async", "copy_async", 128, xs, k, Swizzle.IDENTITY);
        assertEquals(16L, d.planJson().get("bytes"), d.reason());
    }

    @Test
    void aStartThatNarrowsTheAccessesIsNamedInThePlanAndOneThatCannotIsNot() {
        Operand x = new Operand("dst", "X", "float32", new long[] {64, 32}, new long[2], new long[] {64, 32},
                rowMajor(64, 32));
        Operand a = new Operand("src0", "A", "float32", new long[] {64, 64}, new long[2], new long[] {64, 32},
                rowMajor(64, 64));
        // a row start moves the address by multiples of 64 elements: never what narrows a 4-element access
        Decision rows = decide("axe4j-cuda-vector", "copy", 128, x, a.withRunTimeStart(0, Modular.ANY),
                Swizzle.IDENTITY);
        assertEquals(4L, rows.planJson().get("vec"));
        assertTrue(notes(rows).stream().noneMatch(n -> n.startsWith("narrowed:")), notes(rows).toString());
        Decision known = decide("axe4j-cuda-vector", "copy", 128, x, a.withRunTimeStart(1, new Modular(32, 0)),
                Swizzle.IDENTITY);
        assertTrue(notes(known).stream().noneMatch(n -> n.startsWith("narrowed:")), notes(known).toString());
        Decision any = decide("axe4j-cuda-vector", "copy", 128, x,
                a.withRunTimeStart(0, Modular.ANY).withRunTimeStart(1, Modular.ANY), Swizzle.IDENTITY);
        assertEquals(1L, any.planJson().get("vec"));
        List<String> narrowed = notes(any).stream().filter(n -> n.startsWith("narrowed:")).toList();
        assertEquals(List.of("narrowed: 1 element per access where the layouts allow 4: the run-time start src0 dim 1"
                + " starts at s1 (any value) is not provably a multiple of 4 elements; bind the offset with"
                + " T.meta_var(...) (a plain assignment hides its form) or make it a multiple of 4"), narrowed);
        // a column start known to be even allows 2 of the 4: still narrowed, and its values are named
        Decision even = decide("axe4j-cuda-vector", "copy", 128, x, a.withRunTimeStart(1, new Modular(2, 0)),
                Swizzle.IDENTITY);
        assertEquals(2L, even.planJson().get("vec"));
        assertTrue(notes(even).stream().anyMatch(n -> n.startsWith("narrowed: 2 elements per access where the layouts"
                + " allow 4: the run-time start src0 dim 1 starts at s1 (values 2n")), notes(even).toString());
    }

    @SuppressWarnings("unchecked")
    private static List<String> notes(Decision d) {
        return (List<String>) d.planJson().get("notes");
    }
}
