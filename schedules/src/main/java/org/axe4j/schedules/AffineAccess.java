package org.axe4j.schedules;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Iter;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Point;

/**
 * The memory address of a region element as an affine function of loop counters.
 *
 * <p>For a layout L = S[(e_0..e_k):(s_0..s_k)] + R + O over a buffer of shape (n_0..n_r) starting
 * {@code elem_offset} elements into its data, the row-major flat index x of a coordinate c is split into the
 * digits of the shard iters, so {@code addr(c) = elem_offset + sum_k digit_k(x) * s_k + r + O_m}. The shard iters are first grouped by buffer dimension
 * (an iter that spans two dimensions is split, which needs divisibility), giving for dimension d a mixed radix
 * {@code (a_0, p_0), (a_1, p_1), ...} (innermost first) with {@code prod a_j = n_d}. For the region
 * {@code [b, b + e)} of that dimension the index {@code b + i} is then affine in counters
 * {@code i = i_0 + a_0 * i_1 + ...} when each digit either starts at 0 and runs over its full radix or keeps
 * the index inside one digit: {@code addr = base + sum_j i_j * p_j}. Anything else (the region crosses a digit
 * boundary part way) is declined. Replica points give extra constant displacements {@code r}.
 *
 * <p>A dim whose start s is known only at run time comes with what is known of it, {@code s = c n + b}
 * ({@link Modular}, TVM's modular-set analysis). Its digit j is {@code x_j(s) = floor(s / A_j) mod a_j}
 * ({@code A_j = a_0 ... a_{j-1}}). The first J digits, J the most whose radix product {@code A_J} divides c, have
 * the fixed digits of {@code b mod A_J} and are walked as for a constant start. What the region still walks then goes on in
 * one of two ways: the digits from J up form one stride p (they merge into one piece) and the region is one loop
 * there, adding {@code floor(s / A_J) * p}; or the region stays inside digit J for every n (x_J runs over
 * {@code r + g k}, g = gcd(c / A_J, a_J), and {@code r + count <= g}) and is a loop of digit J. Every digit from J up
 * then adds {@code x_j(s) * p_j} to the base at run time ({@link StartTerm}s, merged where strides continue each
 * other). {@code startOffset} is what the terms add, as a {@link Modular} value (x_J is {@code g k + r}, a digit
 * above is any value); the base address is always one of {@code base + startOffset}, which is what alignment is
 * proven from. For example, column {@code bx * 32} (c = 32) of a row-major 64 x 64 fp32 tensor adds {@code 32 n}
 * elements, which keeps 16-byte vectors; a 16-column tile at {@code kt * 16} of columns stored in blocks of 64
 * ({@code S[(64,2,64):(64,4096,1)]}) is a loop inside the block, adding {@code (s mod 64) + floor(s / 64) * 4096}.
 *
 * <p>The worker axis {@code cpu}: a shard iter (e, s@cpu) spreads its digit over e parallel workers. CPU workers
 * share one memory, so worker w's part of the buffer is a slab of {@code span_m(L)} elements placed after the
 * slabs of workers 0..w-1: the point (m, cpu = w) is the address {@code m + w * span_m(L)}, i.e. the iter walks
 * memory with stride {@code s * span_m(L)}. {@code S[(2,4,8):(1@cpu,8,1)]} is row-major 8x8 memory whose two row
 * halves go to two workers. Such pieces are marked {@code distributed}; the loops they become run in parallel.
 */
public record AffineAccess(long base, List<List<Piece>> dims, List<Long> replicas,
        SortedMap<Integer, List<StartTerm>> startTerms, Modular startOffset) {

    /** The axis whose iters spread a digit over parallel CPU workers (see the class comment). */
    public static final Axis CPU = Axis.of("cpu");

    /**
     * A loop of {@code extent} counters moving the address by {@code stride} each; {@code distributed} when the
     * digit comes from a {@link #CPU} iter, i.e. is spread over parallel workers.
     */
    public record Piece(long extent, long stride, boolean distributed) {
        public Piece(long extent, long stride) {
            this(extent, stride, false);
        }

        Piece withExtentStride(long e, long s) {
            return new Piece(e, s, distributed);
        }
    }

    /**
     * What a run-time start s adds to the base: {@code (floor(s / divisor) mod modulus) * stride} ({@code modulus} 0:
     * no mod, the dim's outermost digits).
     */
    public record StartTerm(long divisor, long modulus, long stride) {
        long apply(long s) {
            long x = Math.floorDiv(s, divisor);
            return (modulus == 0 ? x : Math.floorMod(x, modulus)) * stride;
        }
    }

    /** Decomposes {@code op}'s region over the memory axis, or declines with the reason. */
    public static AffineAccess of(Operand op) {
        Layout layout = op.layout();
        requireMemoryOnly(op);
        long size = 1;
        for (long n : op.shape()) {
            size *= n;
        }
        if (layout.size() != size) {
            throw Declined.of("%s: layout %s maps %d elements, the buffer shape has %d", op, layout, layout.size(),
                    size);
        }
        List<List<Piece>> radix = groupByDim(op);
        long base = op.elemOffset() + layout.offsetOn(Axis.M);
        List<List<Piece>> dims = new ArrayList<>();
        TreeMap<Integer, List<StartTerm>> startTerms = new TreeMap<>();
        Modular startOffset = Modular.ZERO;
        for (int d = 0; d < op.shape().length; d++) {
            List<Piece> digits = radix.get(d);
            Modular s = op.runTimeStarts()[d];
            boolean runTime = s != null && !s.isConstant();
            long pos = s == null ? op.start()[d] : s.isConstant() ? s.residue() : 0;
            int fixed = digits.size();
            long known = 1;
            if (runTime) {
                // the digits whose radix product A_J divides c have the digits of b mod A_J
                fixed = 0;
                while (fixed < digits.size() && s.coeff() % (known * digits.get(fixed).extent()) == 0) {
                    known *= digits.get(fixed).extent();
                    fixed++;
                }
                pos = Math.floorMod(s.residue(), known);
            }
            List<Piece> loops = new ArrayList<>();
            long count = op.extent()[d];
            long step = 1;   // A_j: the elements of the dim one step of digit j moves over
            for (Piece digit : digits.subList(0, fixed)) {
                long a = digit.extent();
                long low = pos % a;
                if (count == 1) {
                    base += low * digit.stride();
                } else if (low == 0 && count % a == 0) {
                    loops.add(digit);
                    count /= a;
                } else if (low + count <= a) {
                    loops.add(digit.withExtentStride(count, digit.stride()));
                    base += low * digit.stride();
                    count = 1;
                } else {
                    throw Declined.of("%s: region [%d, %d) of dim %d crosses a digit of extent %d (stride %d) part way:"
                            + " use the regions %s of the dim, each inside whole digits, or one that starts at a "
                            + "multiple of %d", op, op.start()[d], op.start()[d] + op.extent()[d], d, a,
                            digit.stride(), segmentsText(digits.stream().map(Piece::extent).toList(), op.start()[d],
                            op.extent()[d]), step * a);
                }
                pos /= a;
                step *= a;
            }
            if (runTime) {
                RunTimeDim rt = runTimeDim(op, d, s, digits, fixed, known, count);
                loops.addAll(rt.loops());
                startTerms.put(d, rt.terms());
                startOffset = startOffset.plus(rt.offset());
            }
            dims.add(merge(loops));
        }
        List<Long> replicas = new ArrayList<>();
        for (Point r : layout.replicaSet()) {
            replicas.add(r.get(Axis.M));
        }
        return new AffineAccess(base, dims, replicas, startTerms, startOffset);
    }

    private record RunTimeDim(List<Piece> loops, List<StartTerm> terms, Modular offset) {}

    /**
     * The digits {@code high} of dim d from J up (A_J = {@code known} divides c), of which the region still walks
     * {@code count} elements: one merged stride, or a loop inside digit J for every n (see the class comment).
     */
    private static RunTimeDim runTimeDim(Operand op, int d, Modular s, List<Piece> digits, int fixed, long known,
            long count) {
        List<Piece> high = digits.subList(fixed, digits.size());
        List<Piece> merged = merge(high);
        if (merged.stream().anyMatch(Piece::distributed)) {
            throw Declined.of("%s: dim %d starts at a run-time index %s on the worker axis cpu", op, d, s);
        }
        // floor(s / A_J) = (c / A_J) n + floor(b / A_J)
        Modular above = new Modular(s.coeff() / known, Math.floorDiv(s.residue(), known));
        if (merged.size() == 1 || (merged.isEmpty() && count == 1)) {
            long stride = merged.isEmpty() ? 0 : merged.get(0).stride();
            List<Piece> loops = count > 1 ? List.of(new Piece(count, stride)) : List.of();
            return new RunTimeDim(loops, List.of(new StartTerm(known, 0, stride)), above.times(stride));
        }
        Piece first = merged.get(0);
        long g = Modular.gcd(above.coeff(), first.extent());
        long r = Math.floorMod(above.residue(), g);
        if (count > 1 && r + count > g) {
            throw Declined.of("%s: dim %d starts at a run-time index %s, so the region (%d elements past the start's "
                    + "known part of %d) may cross digit (%d, stride %d) of %s part way: %s", op, d, s, count, known,
                    first.extent(), first.stride(), merge(high), startAdvice(s, digits, op.extent()[d]));
        }
        List<Piece> loops = count > 1 ? List.of(first.withExtentStride(count, first.stride())) : List.of();
        // digit J takes the values g k + r; each digit above it any value: x_j(s) = floor(s / A_j) mod a_j
        List<StartTerm> terms = new ArrayList<>();
        Modular offset = new Modular(g, r).times(first.stride());
        long divisor = known;
        for (int j = 0; j < merged.size(); j++) {
            Piece p = merged.get(j);
            boolean outermost = j == merged.size() - 1;
            terms.add(new StartTerm(divisor, outermost ? 0 : p.extent(), p.stride()));
            if (j > 0) {
                offset = offset.plus(Modular.ANY.times(p.stride()));
            }
            divisor *= p.extent();
        }
        return new RunTimeDim(loops, terms, offset);
    }

    /**
     * The way forward for a run-time start s of a region of {@code extent} elements over the dim's digits (a_j,
     * innermost first, c_j = a_0 ... a_{j-1}): with i the highest digit where c_i divides the extent and
     * {@code m = extent / c_i <= a_i}, a start that is a multiple of {@code c_i * q} (q the smallest divisor of a_i
     * with m <= q) covers the digits below i whole and m values of digit i that never carry; when the start is one,
     * T.meta_var lets TVM see it.
     */
    static String startAdvice(Modular s, List<Piece> digits, long extent) {
        long c = 1;
        long multiple = 0;
        for (Piece p : digits) {
            long a = p.extent();
            if (extent % c == 0 && extent / c <= a) {
                long q = extent / c;
                while (a % q != 0) {
                    q++;
                }
                multiple = c * q;
            }
            c *= a;
        }
        if (multiple == 0) {
            return "no start keeps a region of " + extent + " elements inside whole digits of this dim; split it";
        }
        return "a start that is a multiple of " + multiple + " never crosses one; if the start is one, bind it with "
                + "T.meta_var(...) (a plain assignment hides what TVM knows of it: here " + s + ")";
    }

    /** What the run-time starts add to the base for the start values {@code starts} (constant dims ignored). */
    public long startOffsetAt(long[] starts) {
        long out = 0;
        for (Map.Entry<Integer, List<StartTerm>> e : startTerms.entrySet()) {
            for (StartTerm t : e.getValue()) {
                out += t.apply(starts[e.getKey()]);
            }
        }
        return out;
    }

    /**
     * {@code op}'s region start with each run-time start s replaced by its fixed low part {@code s mod A_J}
     * ({@code b mod A_J}): the layout's address of a region element counted from this start, plus what the
     * {@link StartTerm}s add, is its address at run time. Rules that read addresses off
     * the layout element by element (ldmatrix rows, matrix descriptors) use it; {@code op} must be one
     * {@link #of} accepts.
     */
    public long[] lowStart(Operand op) {
        long[] start = op.start().clone();
        for (int d = 0; d < start.length; d++) {
            Modular s = op.runTimeStarts()[d];
            if (s != null) {
                long divisor = startTerms.containsKey(d) ? startTerms.get(d).get(0).divisor() : 1;
                start[d] = s.isConstant() ? s.residue() : Math.floorMod(s.residue(), divisor);
            }
        }
        return start;
    }

    /** Every value the base address takes over the run-time starts: {@code base + startOffset}. */
    public Modular baseValues() {
        return startOffset.plus(base);
    }

    /**
     * Only axes m and cpu describe a CPU: a thread axis names hardware a CPU thread does not have, and another
     * memory axis (reg, P, TCol, ...) is storage a CPU does not have. The cpu axis carries shard iters only.
     */
    public static void requireMemoryOnly(Operand op) {
        for (Axis axis : op.layout().axes()) {
            if (!axis.equals(Axis.M) && !axis.equals(CPU)) {
                throw Declined.of("%s: layout axis %s is neither the CPU memory axis m nor the worker axis cpu", op,
                        axis);
            }
        }
        if (op.layout().offsetOn(CPU) != 0 || op.layout().replica().stream().anyMatch(it -> it.axis().equals(CPU))) {
            throw Declined.of("%s: the cpu axis takes shard iters only (no replica or offset on cpu)", op);
        }
    }

    /** True when a shard iter of {@code op}'s layout is on the {@link #CPU} axis. */
    public static boolean distributed(Operand op) {
        return op.layout().shard().stream().anyMatch(it -> it.axis().equals(CPU) && it.extent() > 1);
    }

    /**
     * True when the region [start, start + count) of a dim with digit extents a_j (innermost first) is affine in the
     * digits: walking them from the inside with pos = start, each digit is either taken whole from 0 (pos mod a = 0,
     * a | count: count /= a) or holds the rest ((pos mod a) + count <= a); then pos /= a.
     */
    public static boolean fitsDigits(List<Long> digits, long start, long count) {
        long pos = start;
        for (long a : digits) {
            long low = pos % a;
            if (count == 1) {
                pos /= a;
                continue;
            }
            if (low == 0 && count % a == 0) {
                count /= a;
            } else if (low + count <= a) {
                count = 1;
            } else {
                return false;
            }
            pos /= a;
        }
        return true;
    }

    /** The region [start, start + count) as the fewest consecutive regions each {@link #fitsDigits}, greedily. */
    public static List<long[]> segments(List<Long> digits, long start, long count) {
        List<long[]> out = new ArrayList<>();
        long from = start;
        long end = start + count;
        while (from < end) {
            long to = end;
            while (to > from + 1 && !fitsDigits(digits, from, to - from)) {
                to--;
            }
            out.add(new long[] {from, to});
            from = to;
        }
        return out;
    }

    /** {@link #segments} as text: {@code [4, 8) [8, 32) [32, 36)}. */
    public static String segmentsText(List<Long> digits, long start, long count) {
        return String.join(" ", segments(digits, start, count).stream().map(x -> "[" + x[0] + ", " + x[1] + ")")
                .toList());
    }

    /** The digit extents of each buffer dim, innermost first, as {@link #of} walks them (no region applied). */
    public static List<List<Long>> digitExtents(Operand op) {
        return groupByDim(op).stream().map(d -> d.stream().map(Piece::extent).toList()).toList();
    }

    /** The shard iters regrouped per buffer dim, innermost first; splits an iter across dims when divisible. */
    static List<List<Piece>> groupByDim(Operand op) {
        Deque<Piece> iters = new ArrayDeque<>();
        long slab = op.layout().spanOn(Axis.M);
        for (Iter it : op.layout().shard()) {
            if (it.extent() != 1) {
                boolean cpu = it.axis().equals(CPU);
                iters.addLast(new Piece(it.extent(), cpu ? it.stride() * slab : it.stride(), cpu));
            }
        }
        List<List<Piece>> out = new ArrayList<>();
        for (int d = op.shape().length - 1; d >= 0; d--) {
            List<Piece> dim = new ArrayList<>();
            long rest = op.shape()[d];
            while (rest > 1) {
                Piece inner = iters.pollLast();
                if (inner == null) {
                    throw Declined.of("%s: layout iters run out before dim %d", op, d);
                }
                if (inner.extent() <= rest) {
                    if (rest % inner.extent() != 0) {
                        throw Declined.of("%s: iter extent %d does not divide the remaining extent %d of dim %d", op,
                                inner.extent(), rest, d);
                    }
                    dim.add(inner);
                    rest /= inner.extent();
                } else {
                    if (inner.extent() % rest != 0) {
                        throw Declined.of("%s: dim %d (remaining extent %d) does not divide iter extent %d", op, d,
                                rest, inner.extent());
                    }
                    dim.add(inner.withExtentStride(rest, inner.stride()));
                    iters.addLast(inner.withExtentStride(inner.extent() / rest, inner.stride() * rest));
                    rest = 1;
                }
            }
            out.add(0, dim);
        }
        return out;
    }

    /** Joins adjacent pieces (inner first) where the outer stride continues the inner one: a*p == q. */
    static List<Piece> merge(List<Piece> inner) {
        List<Piece> out = new ArrayList<>();
        for (Piece p : inner) {
            if (!out.isEmpty()) {
                Piece last = out.get(out.size() - 1);
                if (last.extent() * last.stride() == p.stride() && last.distributed() == p.distributed()) {
                    out.set(out.size() - 1, last.withExtentStride(last.extent() * p.extent(), last.stride()));
                    continue;
                }
            }
            out.add(p);
        }
        return out;
    }
}
