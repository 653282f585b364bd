package org.axe4j.schedules;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.axe4j.schedules.plan.PlanParts;

/**
 * A loop nest shared by several operands, each addressed affinely: {@code addr_o = base_o + sum_l i_l * stride_o,l}.
 *
 * <p>Built by the common refinement of the operands' per-dimension radices: when one operand walks a dimension
 * as (4, p)(8, q) and another as (32, 1), the nest runs (4: p, 1)(8: q, 4). A radix pair that does not divide
 * (3 against 4) has no common refinement and is declined. Loops that continue each other for every operand are
 * then joined ({@link #coalesce}). Order: the loop where the destination moves by 1
 * goes innermost, the others by decreasing destination stride (then source stride), so memory is walked
 * forwards. The innermost loop is vectorized when the destination and every tensor source move by 0 or 1
 * there; it is split to at most {@code lanes} when its extent has a divisor in [lanes/4, lanes] and that takes no
 * more register operations than {@code lanes}-wide vectors and a shorter vector tail ({@link #tail()}), else into
 * those ({@link #vectorSplit}). A reduced vector loop is split to {@link Vectors#accumulators} vectors of
 * {@code lanes} (partial results) and a tail. The outermost
 * loop is parallel when the nest does at least {@link #PARALLEL_MIN_ELEMENTS} elements, has extent at least 2,
 * and does not carry a reduction. A loop that walks a digit of a {@code cpu} iter ({@link AffineAccess}) is
 * parallel whatever the size, and goes outermost; it may not carry a reduction.
 */
public final class LoopNest {
    /**
     * Element-wise work is memory-bound: below about a million elements a parallel launch cost more than it saved
     * on the 2-core build machine (a 256x256 copy: 8.8 us serial, 111 us parallel).
     */
    public static final long PARALLEL_MIN_ELEMENTS = 1L << 20;

    /**
     * The vector widths a nest is scheduled with, in elements.
     *
     * @param lanes the widest vector loop (64 bytes of the widest element)
     * @param registerLanes elements of one vector register of the target (16 fp32 on AVX-512, 8 on AVX2): LLVM
     *     splits a wider vector into registers, and a width that is not a multiple into smaller pieces
     * @param accumulators vector registers of partial results a vectorized reduction keeps (independent add
     *     chains, so one step need not wait on the previous add's latency)
     */
    public record Vectors(int lanes, int registerLanes, int accumulators) {
        public Vectors {
            if (lanes < 1 || registerLanes < 1 || accumulators < 1) {
                throw new IllegalArgumentException("lanes, register lanes and accumulators must be positive: "
                        + lanes + ", " + registerLanes + ", " + accumulators);
            }
        }

        /** Register operations LLVM needs for one vector of {@code w} lanes: whole registers, then halves, ... */
        long registerOps(long w) {
            return w / registerLanes + Long.bitCount(w % registerLanes);
        }
    }

    /** One loop: extent, kind (serial, parallel, vectorized), what it iterates (a dim or "reduce"), strides per operand. */
    public record Loop(long extent, String kind, boolean reduces, long[] strides) {
        Loop withKind(String k) {
            return new Loop(extent, k, reduces, strides);
        }
    }

    private final List<Loop> loops;
    private final List<String> notes;
    private final long tail;

    private LoopNest(List<Loop> loops, List<String> notes, long tail) {
        this.tail = tail;
        this.loops = loops;
        this.notes = notes;
    }

    public List<Loop> loops() {
        return loops;
    }

    public List<String> notes() {
        return notes;
    }

    /**
     * Elements left after the vector loop when its extent E has no divisor in [lanes/4, lanes]: the last two
     * loops are then serial(E / lanes) and vectorized(lanes), followed by one vectorized loop of {@code E % lanes}
     * with the serial counter at E / lanes. 0 when there is no such remainder.
     */
    public long tail() {
        return tail;
    }

    /**
     * The common refinement of one dimension walked by several operands: {@code dims.get(o)} is operand o's
     * pieces for that dimension (innermost first, product = the dimension's extent; an empty list for an
     * operand that does not move along it, i.e. stride 0).
     */
    public static List<Loop> refine(List<List<AffineAccess.Piece>> dims, long extent, boolean reduces, String what) {
        int n = dims.size();
        List<Deque<AffineAccess.Piece>> queues = new ArrayList<>();
        for (List<AffineAccess.Piece> d : dims) {
            // extent-1 pieces move nothing; an operand without pieces does not move along the dim (stride 0).
            Deque<AffineAccess.Piece> q = new ArrayDeque<>();
            d.stream().filter(p -> p.extent() != 1).forEach(q::addLast);
            if (q.isEmpty() && extent != 1) {
                q.add(new AffineAccess.Piece(extent, 0));
            }
            queues.add(q);
        }
        List<Loop> out = new ArrayList<>();
        while (!queues.get(0).isEmpty()) {
            long m = Long.MAX_VALUE;
            for (Deque<AffineAccess.Piece> q : queues) {
                if (q.isEmpty()) {
                    throw Declined.of("%s: operands disagree on the extent", what);
                }
                m = Math.min(m, q.peekFirst().extent());
            }
            long[] strides = new long[n];
            boolean distributed = false;
            for (int o = 0; o < n; o++) {
                AffineAccess.Piece head = queues.get(o).pollFirst();
                distributed |= head.distributed();
                if (head.extent() % m != 0) {
                    throw Declined.of("%s: radix %d of one operand and %d of another have no common refinement",
                            what, head.extent(), m);
                }
                strides[o] = head.stride();
                if (head.extent() != m) {
                    queues.get(o).addFirst(head.withExtentStride(head.extent() / m, head.stride() * m));
                }
            }
            if (distributed && reduces) {
                throw Declined.of("%s: a cpu iter spreads a reduced digit over workers; their partial results "
                        + "would race on the destination", what);
            }
            out.add(new Loop(m, distributed ? "parallel" : "serial", reduces, strides));
        }
        for (Deque<AffineAccess.Piece> q : queues) {
            if (!q.isEmpty()) {
                throw Declined.of("%s: operands disagree on the extent", what);
            }
        }
        return out;
    }

    /**
     * Orders, vectorizes and parallelizes {@code loops} (operand 0 is the destination); {@code vectorOperands}
     * are the operands whose stride must be 0 or 1 on a vector loop; {@code lanes} the vector width in elements.
     */
    public static LoopNest schedule(List<Loop> loops, boolean[] vectorOperands, int lanes, long elements) {
        return schedule(loops, vectorOperands, new Vectors(lanes, lanes, 1), elements, false);
    }

    /**
     * As {@link #schedule(List, boolean[], int, long)}; with {@code vectorReductions}, when no spatial loop can be
     * the vector loop, a reduced loop where the destination stays (stride 0) and the source moves by 1 becomes it:
     * the emitter then keeps one partial result per lane and combines the lanes at the end.
     */
    public static LoopNest schedule(List<Loop> loops, boolean[] vectorOperands, Vectors vectors, long elements,
            boolean vectorReductions) {
        int lanes = vectors.lanes();
        List<String> notes = new ArrayList<>();
        long tail = 0;
        List<Loop> order = coalesce(loops);
        Comparator<Loop> byStride = Comparator.comparingLong((Loop l) -> Math.abs(l.strides()[0]));
        for (int o = 1; o < vectorOperands.length; o++) {
            final int k = o;
            byStride = byStride.thenComparingLong(l -> Math.abs(l.strides()[k]));
        }
        // loops of cpu iters (parallel) outermost, spatial loops outside reductions, then by decreasing stride.
        order.sort(Comparator.comparing((Loop l) -> !l.kind().equals("parallel"))
                .thenComparing((Loop l) -> l.reduces()).thenComparing(byStride.reversed()));
        long distributed = order.stream().filter(l -> l.kind().equals("parallel")).count();
        for (int k = 1; k < order.size(); k++) {
            if (order.get(k).kind().equals("parallel")) {
                // one parallel region: the outermost cpu loop runs on workers, further cpu loops inside each worker
                order.set(k, order.get(k).withKind("serial"));
                notes.add("cpu loop of extent " + order.get(k).extent() + " runs serially inside the outer parallel loop");
            }
        }
        Loop unit = pickVectorLoop(order, vectorOperands);
        if (unit == null && vectorReductions) {
            unit = order.stream().filter(l -> l.reduces() && l.strides()[0] == 0 && l.strides()[1] == 1
                    && l.extent() >= 2 && !l.kind().equals("parallel")).findFirst().orElse(null);
            if (unit != null) {
                notes.add("reduced loop of extent " + unit.extent() + " is contiguous in the source: vector lanes "
                        + "keep partial results, combined after the loop");
            }
        }
        if (unit != null) {
            order.remove(unit);
            long vl;
            if (unit.reduces()) {
                // k accumulators of `lanes`: the widest k (a power of two, at most vectors.accumulators) that fits
                int k = 1;
                while (2L * k <= vectors.accumulators() && 2L * k * lanes <= unit.extent()) {
                    k *= 2;
                }
                vl = Math.min(unit.extent(), (long) k * lanes);
                tail = unit.extent() % vl;
                if (k > 1) {
                    notes.add(k + " vector accumulators of " + lanes + " lanes (" + vl + " partial results)");
                }
                if (tail != 0) {
                    notes.add("reduced loop of extent " + unit.extent() + ": " + unit.extent() / vl + " x " + vl
                            + " lanes, then a tail of " + tail);
                }
            } else {
                vl = vectorSplit(unit.extent(), vectors);
                if (vl == 0) {
                    vl = lanes;
                    tail = unit.extent() % lanes;
                    long divisor = divisorSplit(unit.extent(), lanes);
                    notes.add("vector loop of extent " + unit.extent() + (divisor == 0 ? " has no divisor in ["
                            + Math.max(2, lanes / 4) + ", " + lanes + "]" : ": whole " + vectors.registerLanes()
                            + "-lane registers and a tail take fewer register operations than " + divisor
                            + "-lane vectors") + ": " + unit.extent() / lanes + " x " + lanes
                            + " lanes, then a tail of " + tail);
                }
            }
            if (vl == unit.extent()) {
                order.add(unit.withKind("vectorized"));
            } else {
                long[] outer = unit.strides().clone();
                for (int o = 0; o < outer.length; o++) {
                    outer[o] *= vl;
                }
                order.add(new Loop(unit.extent() / vl, "serial", unit.reduces(), outer));
                order.add(new Loop(vl, "vectorized", unit.reduces(), unit.strides()));
            }
        } else if (!order.isEmpty()) {
            notes.add("no loop moves every operand by 0 or 1 with the destination moving by 1: no vector loop");
        }
        if (distributed > 0) {
            notes.add("parallel loop from the layout's cpu axis");
        } else if (elements >= PARALLEL_MIN_ELEMENTS && !order.isEmpty()) {
            Loop first = order.get(0);
            if (first.extent() >= 2 && !first.reduces() && !"vectorized".equals(first.kind())) {
                order.set(0, first.withKind("parallel"));
            } else {
                notes.add("outermost loop cannot be parallel (extent " + first.extent()
                        + (first.reduces() ? ", carries a reduction" : "") + ")");
            }
        }
        return new LoopNest(List.copyOf(order), List.copyOf(notes), tail);
    }

    /**
     * Joins two loops into one where, for every operand, the outer stride is the inner extent times the inner
     * stride ({@code s_outer = e_inner * s_inner}), so the pair walks like a single loop of the product extent.
     */
    public static List<Loop> coalesce(List<Loop> loops) {
        List<Loop> out = new ArrayList<>(loops);
        boolean joined = true;
        while (joined) {
            joined = false;
            search:
            for (int a = 0; a < out.size(); a++) {
                for (int b = 0; b < out.size(); b++) {
                    Loop outer = out.get(a);
                    Loop inner = out.get(b);
                    if (a == b || outer.reduces() != inner.reduces() || !outer.kind().equals(inner.kind())) {
                        continue;
                    }
                    boolean continues = true;
                    for (int o = 0; o < outer.strides().length; o++) {
                        continues &= outer.strides()[o] == inner.extent() * inner.strides()[o];
                    }
                    if (continues) {
                        Loop merged = new Loop(outer.extent() * inner.extent(), inner.kind(), inner.reduces(),
                                inner.strides());
                        out.set(b, merged);
                        out.remove(a);
                        joined = true;
                        break search;
                    }
                }
            }
        }
        return out;
    }

    /** A spatial loop where the destination moves by exactly 1 and each vector operand by 0 or 1. */
    private static Loop pickVectorLoop(List<Loop> loops, boolean[] vectorOperands) {
        for (Loop l : loops) {
            if (l.reduces() || l.strides()[0] != 1 || l.extent() < 2 || l.kind().equals("parallel")) {
                continue;
            }
            boolean ok = true;
            for (int o = 1; o < vectorOperands.length; o++) {
                long s = l.strides()[o];
                ok &= !vectorOperands[o] || s == 0 || s == 1;
            }
            if (ok) {
                return l;
            }
        }
        return null;
    }

    /**
     * The vector length for a loop: the extent itself when within {@code lanes}; else the divisor {@link
     * #divisorSplit} gives, unless {@code lanes}-wide vectors and a tail of {@code extent % lanes} take fewer
     * register operations ({@link Vectors#registerOps}): 1000 fp32 on AVX-512 runs as 62 x 16 + a tail of 8
     * (63 zmm operations) rather than 125 x 8 (125 half-width ones); on AVX2 both take 125 ymm operations and the
     * divisor (no tail) is kept. 0 means {@code lanes} and a tail.
     */
    static long vectorSplit(long extent, Vectors vectors) {
        int lanes = vectors.lanes();
        if (extent <= lanes) {
            return extent;
        }
        long divisor = divisorSplit(extent, lanes);
        if (divisor == 0) {
            return 0;
        }
        long withTail = extent / lanes * vectors.registerOps(lanes) + vectors.registerOps(extent % lanes);
        return withTail < extent / divisor * vectors.registerOps(divisor) ? 0 : divisor;
    }

    /**
     * A power of two in [lanes/2, lanes] that divides {@code extent} (whole registers: 40 fp32 runs as 5 x 8, not
     * 4 x 10); else its largest divisor in [lanes/4, lanes]; else 0.
     */
    static long divisorSplit(long extent, int lanes) {
        for (long v = Long.highestOneBit(lanes); v >= Math.max(2, lanes / 2); v /= 2) {
            if (extent % v == 0) {
                return v;
            }
        }
        for (long v = lanes; v >= Math.max(2, lanes / 4); v--) {
            if (extent % v == 0) {
                return v;
            }
        }
        return 0;
    }

    /** The nest as plan loops: outer first with their kind, extent and per-operand strides. */
    public List<PlanParts.NestLoop> describe(List<String> roles) {
        List<PlanParts.NestLoop> out = new ArrayList<>();
        for (Loop l : loops) {
            Map<String, Long> strides = new LinkedHashMap<>();
            for (int o = 0; o < roles.size(); o++) {
                strides.put(roles.get(o), l.strides()[o]);
            }
            out.add(new PlanParts.NestLoop(l.extent(), l.kind(), l.reduces(), strides));
        }
        return out;
    }
}
