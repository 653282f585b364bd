package org.axe4j.schedules;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
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
 * ({@link Modular}, TVM's modular-set analysis). The digits below the first {@code J} whose radix product
 * {@code A_J = a_0 ... a_{J-1}} divides c see the constant start digit {@code b mod A_J} and are walked as for a
 * constant start; the digits from J up must form one stride p (they merge into one piece), and the run-time part
 * {@code floor(s / A_J) = (c / A_J) n + floor(b / A_J)} adds {@code floor(s / A_J) * p} to the base
 * ({@code startStrides} p and {@code startDivisors} A_J, absent when 1). With nothing known (c = 1) that is the
 * whole dim walked by one stride, s adding {@code s * p}. {@code startOffset} is what every run-time start adds, as
 * a {@link Modular} value: the base address is always one of {@code base + startOffset}, which is what alignment is
 * proven from. For example, column {@code bx * 32} (c = 32) of a row-major 64 x 64 fp32 tensor adds {@code 32 n}
 * elements: 16-byte vectors stay aligned; a column {@code kt * 64} of columns stored in blocks of 64
 * ({@code S[(64,2,64):(64,4096,1)]}) walks the block digit (stride 4096) with {@code floor(s / 64) = n}.
 *
 * <p>The worker axis {@code cpu}: a shard iter (e, s@cpu) spreads its digit over e parallel workers. CPU workers
 * share one memory, so worker w's part of the buffer is a slab of {@code span_m(L)} elements placed after the
 * slabs of workers 0..w-1: the point (m, cpu = w) is the address {@code m + w * span_m(L)}, i.e. the iter walks
 * memory with stride {@code s * span_m(L)}. {@code S[(2,4,8):(1@cpu,8,1)]} is row-major 8x8 memory whose two row
 * halves go to two workers. Such pieces are marked {@code distributed}; the loops they become run in parallel.
 */
public record AffineAccess(long base, List<List<Piece>> dims, List<Long> replicas, SortedMap<Integer, Long> startStrides,
        SortedMap<Integer, Long> startDivisors, Modular startOffset) {

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
        TreeMap<Integer, Long> startStrides = new TreeMap<>();
        TreeMap<Integer, Long> startDivisors = new TreeMap<>();
        Modular startOffset = Modular.ZERO;
        for (int d = 0; d < op.shape().length; d++) {
            List<Piece> digits = radix.get(d);
            Modular s = op.runTimeStarts()[d];
            boolean runTime = s != null && !s.isConstant();
            long pos = s == null ? op.start()[d] : s.isConstant() ? s.residue() : 0;
            int constantDigits = digits.size();
            if (runTime) {
                // the digits whose radix product A_J divides c see the constant start digit b mod A_J
                constantDigits = 0;
                long known = 1;
                while (constantDigits < digits.size()
                        && s.coeff() % (known * digits.get(constantDigits).extent()) == 0) {
                    known *= digits.get(constantDigits).extent();
                    constantDigits++;
                }
                pos = Math.floorMod(s.residue(), known);
            }
            List<Piece> loops = new ArrayList<>();
            long count = op.extent()[d];
            long below = 1;
            for (Piece digit : digits.subList(0, constantDigits)) {
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
                    String from = runTime ? s.toString() : Long.toString(op.start()[d] + 0);
                    throw Declined.of("%s: region [%s, %s + %d) of dim %d crosses a digit of extent %d (stride %d) "
                            + "part way", op, from, from, op.extent()[d], d, a, digit.stride());
                }
                pos /= a;
                below *= a;
            }
            if (runTime) {
                List<Piece> high = merge(digits.subList(constantDigits, digits.size()));
                if (high.size() > 1 || high.stream().anyMatch(Piece::distributed)) {
                    throw Declined.of("%s: dim %d starts at a run-time index %s, but the layout walks it as %s; the "
                            + "digits above the start's known part (%d elements) must be one memory stride", op, d, s,
                            merge(digits), below);
                }
                long stride = high.isEmpty() ? 0 : high.get(0).stride();
                if (count > 1) {
                    loops.add(new Piece(count, stride));
                }
                startStrides.put(d, stride);
                if (below > 1) {
                    startDivisors.put(d, below);
                }
                // floor(s / A_J) = (c / A_J) n + floor(b / A_J)
                startOffset = startOffset.plus(new Modular(s.coeff() / below, Math.floorDiv(s.residue(), below))
                        .times(stride));
            }
            dims.add(merge(loops));
        }
        List<Long> replicas = new ArrayList<>();
        for (Point r : layout.replicaSet()) {
            replicas.add(r.get(Axis.M));
        }
        return new AffineAccess(base, dims, replicas, startStrides, startDivisors, startOffset);
    }

    /**
     * {@code op}'s region start with each run-time start s replaced by its constant low part {@code s mod A_J}
     * ({@code b mod startDivisor}, 0 without a divisor): the layout's address of a region element counted from this
     * start, plus {@code floor(s / A_J) * startStride}, is its address at run time. Rules that read addresses off
     * the layout element by element (ldmatrix rows, matrix descriptors) use it; {@code op} must be one
     * {@link #of} accepts.
     */
    public long[] lowStart(Operand op) {
        long[] start = op.start().clone();
        for (int d = 0; d < start.length; d++) {
            Modular s = op.runTimeStarts()[d];
            if (s != null) {
                start[d] = s.isConstant() ? s.residue() : Math.floorMod(s.residue(), startDivisors.getOrDefault(d, 1L));
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
    static void requireMemoryOnly(Operand op) {
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
    static boolean distributed(Operand op) {
        return op.layout().shard().stream().anyMatch(it -> it.axis().equals(CPU) && it.extent() > 1);
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
