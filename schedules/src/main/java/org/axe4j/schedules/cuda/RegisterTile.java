package org.axe4j.schedules.cuda;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import org.axe4j.layout.AxeException;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Group;
import org.axe4j.layout.Grouped;
import org.axe4j.layout.Iter;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Shape;
import org.axe4j.schedules.AffineAccess;
import org.axe4j.schedules.AffineAccess.StartTerm;
import org.axe4j.schedules.Declined;
import org.axe4j.schedules.Modular;
import org.axe4j.schedules.Operand;
import org.axe4j.schedules.Request;

/**
 * A register (local) tile at warp, warpgroup or CTA scope: which thread of the scope holds each element of the
 * operand's region, and in which of its register slots.
 *
 * <p>The scope's threads are numbered t in [0, T) (t = threadIdx.x mod 32 at warp scope, mod 128 at warpgroup
 * scope, threadIdx.x at CTA scope). A thread axis a is a field of t: {@code c_a = (t / div_a) mod size_a}
 * ({@link #position}: laneid = t mod 32, warpid = t / 32, wid_in_wg = (t / 32) mod 4, tid_in_wg = t mod 128,
 * wgid = t / 128, tx = t). The layout's shard and replica iters on axis a, sorted by stride, must form a mixed
 * radix of c_a (strides 1, e_0, e_0 e_1, ...), so the iter (e, s@a) is the digit {@code (t / (div_a s)) mod e}
 * of t. Shard digits say which thread holds an element; replica digits are free (every thread along them holds
 * it). The iters on axis m give the register slot: {@code slot = O_m + sum d_k s_k}. Digit ranges of t that no
 * iter names are {@link #missing}: threads there hold the same elements as if replicated.
 *
 * <p>The region: the shard is grouped per buffer dim ({@link Group#group}: an iter split across two dims when
 * divisible, neighbours fused); for the region [b, b + e) of a dim each digit is either whole, or restricted to
 * {@code [lo, lo + count)} with the digits above it fixed (a run-time start is declined). A restricted thread digit
 * is a {@link #guards guard}: only threads with {@code lo <= (t / tau) mod mod < lo + count} take part. A dim
 * may start at a run-time index when it lies on registers with one stride ({@link #startStrides}), or when the
 * region covers whole digits below one digit and the digits that move with the start are on registers
 * ({@link #startTerms}, {@link #runTimeDim}).
 */
final class RegisterTile {
    /** {@code value = ((((t / tau) mod mod) - lo) / below) mod count} (count kept by the {@link Piece}). */
    record ThreadPart(long tau, long mod, long lo, long below) {
        /** The same value as {@code (t / tau') mod count} when the digit is whole and the split divides it. */
        ThreadPart normalized(long count) {
            if (lo == 0 && mod % (below * count) == 0) {
                return new ThreadPart(tau * below, count, 0, 1);
            }
            return this;
        }
    }

    /** {@code count} values of one digit; a memory piece moves the slot by {@code stride}, a thread piece by 0. */
    record Piece(long count, long stride, ThreadPart thread) {
        boolean isThread() {
            return thread != null;
        }

        Piece inner(long m) {
            return new Piece(m, stride, thread);
        }

        Piece outer(long m) {
            return new Piece(count / m, stride * m, thread == null ? null
                    : new ThreadPart(thread.tau(), thread.mod(), thread.lo(), thread.below() * m));
        }
    }

    /** Only threads with {@code lo <= (t / tau) mod mod < lo + count} hold region elements. */
    record Guard(long tau, long mod, long lo, long count) {}

    /** A thread digit {@code (t / tau) mod count}. */
    record Digit(long tau, long count) {}

    /** Where axis a sits in t: {@code c_a = (t / div) mod size}. */
    record Position(long div, long size) {}

    final Operand op;
    final long threads;
    /** Per buffer dim, innermost first, the region's pieces with count > 1. */
    final List<List<Piece>> dims;
    /** The slot of the region's first element on every thread: offsets, element offset and fixed digits. */
    final long slotBase;
    final List<Guard> guards;
    /** Replica digits on thread axes: every thread along them holds the element. */
    final List<Digit> replicas;
    /** Digit ranges of t no iter names. */
    final List<Digit> missing;
    /** Register stride of each dim that starts at a run-time index: the slot moves by start * stride. */
    final SortedMap<Integer, Long> startStrides;
    /**
     * Dims that start at a run-time index s over several register digits: the slot moves by
     * {@code (floor(s / divisor) mod modulus) * stride} per term (modulus 0: none), see {@link #symbolicDim}.
     */
    final SortedMap<Integer, List<StartTerm>> startTerms;

    private RegisterTile(Operand op, long threads, List<List<Piece>> dims, long slotBase, List<Guard> guards,
            List<Digit> replicas, List<Digit> missing, SortedMap<Integer, Long> startStrides,
            SortedMap<Integer, List<StartTerm>> startTerms) {
        this.op = op;
        this.threads = threads;
        this.dims = dims;
        this.slotBase = slotBase;
        this.guards = guards;
        this.replicas = replicas;
        this.missing = missing;
        this.startStrides = startStrides;
        this.startTerms = startTerms;
    }

    /**
     * Every value the slot base takes over the run-time starts: slotBase + sum_d s_d * startStrides_d + the values
     * of each start term ({@link #digitValues}).
     */
    Modular slotValues() {
        Modular out = Modular.constant(slotBase);
        for (Map.Entry<Integer, Long> e : startStrides.entrySet()) {
            out = out.plus(op.runTimeStarts()[e.getKey()].times(e.getValue()));
        }
        for (Map.Entry<Integer, List<StartTerm>> e : startTerms.entrySet()) {
            for (StartTerm t : e.getValue()) {
                out = out.plus(digitValues(op.startValues(e.getKey()), t.divisor(), t.modulus()).times(t.stride()));
            }
        }
        return out;
    }

    /**
     * The values of {@code floor(s / c) mod a} (a 0: no mod) for s in {@code q n + r}: when c divides q it is
     * {@code (q / c) n + floor(r / c)}, and its residue mod a moves in steps of gcd(q / c, a); else any value.
     */
    static Modular digitValues(Modular s, long c, long a) {
        if (s.coeff() % c != 0) {
            return Modular.ANY;
        }
        Modular x = new Modular(s.coeff() / c, Math.floorDiv(s.residue(), c));
        if (x.isConstant() && a != 0) {
            return Modular.constant(Math.floorMod(x.residue(), a));
        }
        return a == 0 ? x : new Modular(gcd(x.coeff(), a), Math.floorMod(x.residue(), a));
    }

    private static long gcd(long a, long b) {
        return b == 0 ? Math.abs(a) : gcd(b, a % b);
    }

    /** Registers each thread allocates: the span of the layout on m. */
    long slots() {
        return op.layout().spanOn(Axis.M) + Math.max(0, op.layout().offsetOn(Axis.M));
    }

    /**
     * The position of thread axis {@code axis} at {@code scope} with {@code threads} threads, or a decline naming
     * why the axis cannot index this scope's threads.
     */
    static Position position(String what, Axis axis, String scope, long threads) {
        boolean wide = scope.equals("warpgroup") || scope.equals("cta");
        switch (axis.name()) {
            case "laneid":
                if (threads % 32 != 0) {
                    throw Declined.of("%s: laneid needs whole warps; the %s scope has %d threads", what, scope,
                            threads);
                }
                return new Position(1, 32);
            case "wid_in_wg":
            case "tid_in_wg":
                if (!wide || threads % 128 != 0) {
                    throw Declined.of("%s: %s indexes a warpgroup's threads; the %s scope has %d threads", what, axis,
                            scope, threads);
                }
                return axis.name().equals("tid_in_wg") ? new Position(1, 128) : new Position(32, 4);
            case "warpid":
            case "wgid":
            case "tx":
                long div = axis.name().equals("warpid") ? 32 : axis.name().equals("wgid") ? 128 : 1;
                if (!scope.equals("cta")) {
                    throw Declined.of("%s: %s indexes the CTA's threads, not those of one %s (at %s scope use %s)",
                            what, axis, scope, scope, scope.equals("warp") ? "laneid" : "wid_in_wg, tid_in_wg");
                }
                if (threads % div != 0) {
                    throw Declined.of("%s: %s needs whole units of %d threads; the CTA has %d", what, axis, div,
                            threads);
                }
                return new Position(div, threads / div);
            default:
                throw Declined.of("%s: layout axis %s is neither the register axis m nor a thread axis (laneid, "
                        + "warpid, wid_in_wg, tid_in_wg, wgid, tx)", what, axis);
        }
    }

    static boolean isThreadAxis(Axis a) {
        return List.of("laneid", "warpid", "wid_in_wg", "tid_in_wg", "wgid", "tx").contains(a.name());
    }

    /** The partition of local operand {@code o} at the call's scope with {@code threads} threads. */
    static RegisterTile of(Request call, Operand o, long threads) {
        String what = call.op() + ": " + o;
        Layout layout = o.layout();
        long size = 1;
        for (long n : o.shape()) {
            size *= n;
        }
        if (layout.size() != size) {
            throw Declined.of("%s: layout maps %d elements, the buffer shape has %d", what, layout.size(), size);
        }
        Map<Axis, Position> positions = new TreeMap<>();
        for (Axis a : layout.axes()) {
            if (!a.equals(Axis.M)) {
                positions.put(a, position(what, a, call.scope(), threads));
            }
        }
        for (Iter it : layout.replica()) {
            if (it.axis().equals(Axis.M) && it.extent() > 1) {
                throw Declined.of("%s: replica iter %s on registers: one element in several slots of a thread", what,
                        it);
            }
        }
        for (Axis a : layout.offset().keySet()) {
            if (!a.equals(Axis.M)) {
                throw Declined.of("%s: offset %d on thread axis %s shifts the threads; a register tile starts at "
                        + "thread 0", what, layout.offsetOn(a), a);
            }
        }
        if (!layout.isShardInjective()) {
            throw Declined.of("%s: two elements share a thread and register (the shard is not injective)", what);
        }
        List<Digit> replicas = new ArrayList<>();
        List<Digit> missing = new ArrayList<>();
        List<long[]> used = new ArrayList<>(); // {div, size} of axes with iters
        for (Map.Entry<Axis, Position> e : positions.entrySet()) {
            Axis axis = e.getKey();
            Position pos = e.getValue();
            List<Iter> iters = new ArrayList<>();
            List<Boolean> isReplica = new ArrayList<>();
            for (Iter it : layout.shard()) {
                if (it.axis().equals(axis) && it.extent() > 1) {
                    iters.add(it);
                    isReplica.add(false);
                }
            }
            for (Iter it : layout.replica()) {
                if (it.axis().equals(axis) && it.extent() > 1) {
                    iters.add(it);
                    isReplica.add(true);
                }
            }
            if (iters.isEmpty()) {
                continue;
            }
            used.add(new long[] {pos.div(), pos.size()});
            Integer[] order = new Integer[iters.size()];
            for (int i = 0; i < order.length; i++) {
                order[i] = i;
            }
            java.util.Arrays.sort(order, Comparator.comparingLong(i -> iters.get(i).stride()));
            long expected = 1;
            for (int i : order) {
                Iter it = iters.get(i);
                if (it.stride() <= 0 || it.stride() % expected != 0) {
                    throw Declined.of("%s: the %s iters %s are not a mixed radix of %s (strides must be 1, e0, e0*e1, "
                            + "...)", what, axis, iters, axis);
                }
                if (it.stride() > expected) {
                    missing.add(new Digit(pos.div() * expected, it.stride() / expected));
                }
                if (isReplica.get(i)) {
                    replicas.add(new Digit(pos.div() * it.stride(), it.extent()));
                }
                expected = it.stride() * it.extent();
            }
            if (expected > pos.size()) {
                throw Declined.of("%s: the %s iters reach %d, the %s scope has %d values of %s", what, axis, expected,
                        call.scope(), pos.size(), axis);
            }
            if (pos.size() % expected != 0) {
                throw Declined.of("%s: the %s iters cover %d of %d values; not a divisor", what, axis, expected,
                        pos.size());
            }
            if (expected < pos.size()) {
                missing.add(new Digit(pos.div() * expected, pos.size() / expected));
            }
        }
        used.sort(Comparator.comparingLong(u -> u[0]));
        for (int i = 1; i < used.size(); i++) {
            if (used.get(i - 1)[0] * used.get(i - 1)[1] > used.get(i)[0]) {
                throw Declined.of("%s: two thread axes of %s index the same threads (positions %d.. and %d..)", what,
                        layout, used.get(i - 1)[0], used.get(i)[0]);
            }
        }
        // threads between and above the named axes
        long next = 1;
        for (long[] u : used) {
            if (u[0] > next) {
                missing.add(new Digit(next, u[0] / next));
            }
            next = u[0] * u[1];
        }
        if (next < threads) {
            missing.add(new Digit(next, threads / next));
        }
        return region(call, o, threads, positions, replicas, missing, what);
    }

    /**
     * The digit extents of each buffer dim of {@code o}, innermost first, as {@link #region} walks them (no region
     * applied); declines a layout that cannot be grouped by the shape.
     */
    static List<List<Long>> digitExtents(Operand o) {
        Grouped grouped;
        try {
            grouped = Group.group(o.layout(), Shape.of(o.shape()));
        } catch (AxeException e) {
            throw Declined.of("%s: %s", o, e.getMessage().strip());
        }
        List<List<Long>> out = new ArrayList<>();
        for (int d = 0; d < o.shape().length; d++) {
            List<Long> digits = new ArrayList<>();
            for (Iter it : grouped.block(d)) {
                digits.add(0, it.extent());
            }
            out.add(digits);
        }
        return out;
    }

    /**
     * Groups the shard per dim ({@link Group#group}: refined and fused so each dim's iters multiply to its extent)
     * and applies the region: pieces, guards and the slot base.
     */
    private static RegisterTile region(Request call, Operand o, long threads, Map<Axis, Position> positions,
            List<Digit> replicas, List<Digit> missing, String what) {
        Grouped grouped;
        try {
            grouped = Group.group(o.layout(), Shape.of(o.shape()));
        } catch (AxeException e) {
            throw Declined.of("%s: %s", what, e.getMessage().strip());
        }
        long slotBase = o.elemOffset() + o.layout().offsetOn(Axis.M);
        List<Guard> guards = new ArrayList<>();
        List<List<Piece>> dims = new ArrayList<>();
        SortedMap<Integer, Long> startStrides = new TreeMap<>();
        SortedMap<Integer, List<StartTerm>> startTerms = new TreeMap<>();
        for (int d = o.shape().length - 1; d >= 0; d--) {
            // per iter, innermost first: {extent, register stride, tau (0 for a register iter)}
            List<long[]> digits = new ArrayList<>();
            for (Iter it : grouped.block(d)) {
                Position pos = positions.get(it.axis());
                if (it.extent() > 1 || !o.symbolic()[d]) {
                    digits.add(0, pos == null ? new long[] {it.extent(), it.stride(), 0}
                            : new long[] {it.extent(), 0, pos.div() * it.stride()});
                }
            }
            if (o.symbolic()[d] && digits.size() <= 1 && digits.stream().allMatch(x -> x[2] == 0)) {
                dims.add(0, oneStrideDim(o, d, digits, startStrides));
                continue;
            }
            if (o.symbolic()[d]) {
                RunTimeDim rt = runTimeDim(o, d, digits, what);
                dims.add(0, rt.pieces());
                slotBase += rt.slotOffset();
                guards.addAll(rt.guards());
                if (!rt.terms().isEmpty()) {
                    startTerms.put(d, rt.terms());
                }
                continue;
            }
            List<Piece> pieces = new ArrayList<>();
            long pos = o.start()[d];
            long count = o.extent()[d];
            long radix = 1;   // the elements of the dim one step of the digit moves over
            for (long[] digit : digits) {
                long a = digit[0];
                boolean thread = digit[2] != 0;
                long low = pos % a;
                long take;
                if (count == 1) {
                    take = 1;
                } else if (low == 0 && count % a == 0) {
                    take = a;
                } else if (low + count <= a) {
                    take = count;
                } else {
                    throw Declined.of("%s: region [%d, %d) of dim %d crosses a digit of extent %d part way: use the "
                            + "regions %s of the dim, each inside whole digits, or one that starts at a multiple of %d",
                            what, o.start()[d], o.start()[d] + o.extent()[d], d, a, AffineAccess.segmentsText(
                            digits.stream().map(x -> x[0]).toList(), o.start()[d], o.extent()[d]), radix * a);
                }
                count /= take;
                pos /= a;
                radix *= a;
                if (thread) {
                    if (take < a) {
                        guards.add(new Guard(digit[2], a, low, take));
                    }
                    if (take > 1) {
                        pieces.add(new Piece(take, 0, new ThreadPart(digit[2], a, low, 1)));
                    }
                } else {
                    slotBase += low * digit[1];
                    if (take > 1) {
                        pieces.add(new Piece(take, digit[1], null));
                    }
                }
            }
            dims.add(0, pieces);
        }
        return new RegisterTile(o, threads, dims, slotBase, guards, replicas, missing, startStrides, startTerms);
    }

    /**
     * A dim whose start s is a run-time value on one register stride p (one fused iter): s adds {@code s * p} to
     * the slot ({@code startStrides}).
     */
    private static List<Piece> oneStrideDim(Operand o, int d, List<long[]> digits,
            SortedMap<Integer, Long> startStrides) {
        long stride = digits.isEmpty() ? 0 : digits.get(0)[1];
        startStrides.put(d, stride);
        return o.extent()[d] == 1 ? List.of() : List.of(new Piece(o.extent()[d], stride, null));
    }

    /** What a run-time start makes of a dim: its pieces, a constant slot offset, guards and start terms. */
    record RunTimeDim(List<Piece> pieces, long slotOffset, List<Guard> guards, List<StartTerm> terms) {}

    /**
     * A dim whose start s (values {@code q n + r}, {@link Operand#startValues}) is a run-time value, over several
     * digits {@code (a_k, p_k)} (innermost first; c_k = a_0 ... a_{k-1}). The region [s, s + E) is E = c_i * m
     * elements for the highest digit i with c_i | E and m = E / c_i <= a_i: digits below i are covered whole
     * (thread or register, as for a constant full range) when c_i | s; digit i runs over m values from
     * {@code x_i = floor(s / c_i) mod a_i}, which take the values {@code g k + r_i}, g = gcd(q / c_i, a_i), so the
     * slice never carries when {@code r_i + m <= g}. Each digit k >= i is then either fixed (c_{k+1} | q: the digit
     * of r, as for a constant start) or moves with s: on registers it adds {@code x_k * p_k} to the slot (a start
     * term [c_k, a_k, p_k], modulus 0 for the outermost), on threads it is declined (the holders would depend on s).
     * So the accumulator's columns {@code c * 32 : c * 32 + 32} over (2 registers, 4 lanes, 32 registers of stride 4)
     * are digits 0 and 1 whole and 4 values of digit 2 from {@code (floor(s / 8) mod 32) * 4}.
     */
    private static RunTimeDim runTimeDim(Operand o, int d, List<long[]> digits, String what) {
        Modular s = o.startValues(d);
        long extent = o.extent()[d];
        int i = chunkDigit(digits, extent);
        if (i < 0) {
            throw Declined.of("%s: dim %d starts at a run-time index (%s) and its region of %d elements is no "
                    + "run of whole digits of %s: it crosses a digit part way for some start; regions of %s elements "
                    + "are such runs", what, d, valuesText(s), extent, describeDigits(digits), runExtents(digits,
                    extent));
        }
        long below = span(digits, i);
        long m = extent / below;
        long a = digits.get(i)[0];
        Modular x = digitValues(s, below, a);
        if (!s.divisibleBy(below) || (m > 1 && x.coeff() != 0 && x.residue() + m > x.coeff())
                || (m > 1 && x.coeff() == 0 && x.residue() + m > a)) {
            throw Declined.of("%s: dim %d starts at a run-time index (%s); its region of %d elements spans %d "
                    + "value(s) of digit %d of %s, which carry into the next digit for some start: it needs a start "
                    + "that is a multiple of %d", what, d, valuesText(s), extent, m, i, describeDigits(digits),
                    below * smallestDivisorAtLeast(a, m));
        }
        List<Piece> pieces = new ArrayList<>();
        for (long[] digit : digits.subList(0, i)) {
            pieces.add(digit[2] != 0 ? new Piece(digit[0], 0, new ThreadPart(digit[2], digit[0], 0, 1))
                    : new Piece(digit[0], digit[1], null));
        }
        long slotOffset = 0;
        List<Guard> guards = new ArrayList<>();
        List<StartTerm> terms = new ArrayList<>();
        long c = below;
        for (int k = i; k < digits.size(); k++) {
            long[] digit = digits.get(k);
            long ak = digit[0];
            long take = k == i ? m : 1;
            boolean thread = digit[2] != 0;
            boolean outermost = k == digits.size() - 1;
            if (s.coeff() % (c * ak) == 0) { // fixed: the digit of r
                long low = Math.floorMod(Math.floorDiv(s.residue(), c), ak);
                if (thread) {
                    if (take < ak) {
                        guards.add(new Guard(digit[2], ak, low, take));
                    }
                    if (take > 1) {
                        pieces.add(new Piece(take, 0, new ThreadPart(digit[2], ak, low, 1)));
                    }
                } else {
                    slotOffset += low * digit[1];
                    if (take > 1) {
                        pieces.add(new Piece(take, digit[1], null));
                    }
                }
            } else if (thread) {
                throw Declined.of("%s: dim %d starts at a run-time index (%s) and its thread digit %d "
                        + "((t / %d) mod %d, of %s) moves with it: the threads holding the region would depend on "
                        + "the start; a start that is a multiple of %d keeps it fixed", what, d, valuesText(s), k,
                        digit[2], ak, describeDigits(digits), c * ak);
            } else {
                terms.add(new StartTerm(c, outermost ? 0 : ak, digit[1]));
                if (take > 1) {
                    pieces.add(new Piece(take, digit[1], null));
                }
            }
            c *= ak;
        }
        return new RunTimeDim(pieces, slotOffset, guards, terms);
    }

    /** The highest digit i with c_i | E and E / c_i <= a_i (see {@link #runTimeDim}); -1 when none. */
    private static int chunkDigit(List<long[]> digits, long extent) {
        int found = -1;
        long c = 1;
        for (int k = 0; k < digits.size(); k++) {
            if (extent % c == 0 && extent / c <= digits.get(k)[0]) {
                found = k;
            }
            c *= digits.get(k)[0];
        }
        return found;
    }

    /** The region extents near {@code extent} that are runs of whole digits (c_i m, m <= a_i): the way forward. */
    private static String runExtents(List<long[]> digits, long extent) {
        java.util.TreeSet<Long> runs = new java.util.TreeSet<>();
        long c = 1;
        for (long[] digit : digits) {
            for (long m = 1; m <= digit[0]; m++) {
                runs.add(c * m);
            }
            c *= digit[0];
        }
        Long below = runs.floor(extent);
        Long above = runs.ceiling(extent);
        List<String> near = new ArrayList<>();
        if (below != null) {
            near.add(Long.toString(below));
        }
        if (above != null && !above.equals(below)) {
            near.add(Long.toString(above));
        }
        return String.join(" or ", near);
    }

    /** c_i: the product of the extents of the digits below i. */
    private static long span(List<long[]> digits, int i) {
        long c = 1;
        for (long[] digit : digits.subList(0, i)) {
            c *= digit[0];
        }
        return c;
    }

    /** The smallest divisor of a that is at least m: the step of digit values that keeps m of them together. */
    private static long smallestDivisorAtLeast(long a, long m) {
        for (long g = Math.max(1, m); g < a; g++) {
            if (a % g == 0) {
                return g;
            }
        }
        return a;
    }

    /** What is known of a run-time start, for a decline: "any value" or "values 32n + 0". */
    private static String valuesText(Modular s) {
        return s.equals(Modular.ANY) ? "any value" : "values " + s;
    }

    /** Digits innermost first as (extent, register stride) or (extent, thread (t / tau) mod extent). */
    private static String describeDigits(List<long[]> digits) {
        return digits.stream().map(x -> x[2] != 0 ? "(" + x[0] + ", thread t/" + x[2] + ")"
                : "(" + x[0] + ", register stride " + x[1] + ")").toList().toString();
    }

    /** Every thread of the scope is named by an iter (shard or replica), as element-wise work needs. */
    void requireCovered(Request call) {
        if (!missing.isEmpty()) {
            long covered = threads;
            for (Digit m : missing) {
                covered /= m.count();
            }
            throw Declined.of("%s: %s: the layout's thread iters cover %d of the scope's %d threads (digits "
                    + "(t / tau) mod n not named: %s); a layout names every thread of the %s scope, with a replica "
                    + "iter where threads hold copies", call.op(), op, covered, threads, describe(missing),
                    call.scope());
        }
    }

    static String describe(List<Digit> digits) {
        return digits.stream().map(x -> "tau=" + x.tau() + " n=" + x.count()).toList().toString();
    }

    /**
     * Thread digits as merged t-ranges {@code [tau, tau * count)} (adjacent ranges joined), so two descriptions
     * of the same set of threads compare equal.
     */
    static List<Digit> canonical(List<Digit> digits) {
        List<Digit> sorted = new ArrayList<>(digits.stream().filter(x -> x.count() > 1).toList());
        sorted.sort(Comparator.comparingLong(Digit::tau));
        List<Digit> out = new ArrayList<>();
        for (Digit x : sorted) {
            if (!out.isEmpty()) {
                Digit last = out.get(out.size() - 1);
                if (last.tau() * last.count() == x.tau()) {
                    out.set(out.size() - 1, new Digit(last.tau(), last.count() * x.count()));
                    continue;
                }
            }
            out.add(x);
        }
        return out;
    }
}
