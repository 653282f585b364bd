package org.axe4j.schedules.cuda;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.axe4j.layout.AxeException;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Group;
import org.axe4j.layout.Grouped;
import org.axe4j.layout.Iter;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Shape;
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
 * may start at a run-time index only when it lies on registers with one stride ({@link #startStrides}).
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
    final java.util.SortedMap<Integer, Long> startStrides;

    private RegisterTile(Operand op, long threads, List<List<Piece>> dims, long slotBase, List<Guard> guards,
            List<Digit> replicas, List<Digit> missing, java.util.SortedMap<Integer, Long> startStrides) {
        this.op = op;
        this.threads = threads;
        this.dims = dims;
        this.slotBase = slotBase;
        this.guards = guards;
        this.replicas = replicas;
        this.missing = missing;
        this.startStrides = startStrides;
    }

    /** Every value the slot base takes over the run-time starts: slotBase + sum_d s_d * startStrides_d. */
    Modular slotValues() {
        Modular out = Modular.constant(slotBase);
        for (Map.Entry<Integer, Long> e : startStrides.entrySet()) {
            out = out.plus(op.runTimeStarts()[e.getKey()].times(e.getValue()));
        }
        return out;
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
        java.util.SortedMap<Integer, Long> startStrides = new TreeMap<>();
        for (int d = o.shape().length - 1; d >= 0; d--) {
            // per iter, innermost first: {extent, register stride, tau (0 for a register iter)}
            List<long[]> digits = new ArrayList<>();
            for (Iter it : grouped.block(d)) {
                Position pos = positions.get(it.axis());
                digits.add(0, pos == null ? new long[] {it.extent(), it.stride(), 0}
                        : new long[] {it.extent(), 0, pos.div() * it.stride()});
            }
            if (o.symbolic()[d]) {
                dims.add(0, symbolicDim(o, d, digits, startStrides, what));
                continue;
            }
            List<Piece> pieces = new ArrayList<>();
            long pos = o.start()[d];
            long count = o.extent()[d];
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
                    throw Declined.of("%s: region [%d, %d) of dim %d crosses a digit of extent %d part way", what,
                            o.start()[d], o.start()[d] + o.extent()[d], d, a);
                }
                count /= take;
                pos /= a;
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
        return new RegisterTile(o, threads, dims, slotBase, guards, replicas, missing, startStrides);
    }

    /**
     * A dim whose start s is a run-time value (a loop variable): it must lie on registers, walked by one stride p
     * (one fused iter); s then adds {@code s * p} to the slot ({@code startStrides}). A dim on threads is declined:
     * which threads hold the region would change at run time.
     */
    private static List<Piece> symbolicDim(Operand o, int d, List<long[]> digits,
            java.util.SortedMap<Integer, Long> startStrides, String what) {
        if (digits.size() > 1 || digits.stream().anyMatch(x -> x[2] != 0)) {
            throw Declined.of("%s: dim %d starts at a run-time index but is not one register stride of the layout "
                    + "(thread digits or several register digits); its holders would depend on the index", what, d);
        }
        long stride = digits.isEmpty() ? 0 : digits.get(0)[1];
        startStrides.put(d, stride);
        return o.extent()[d] == 1 ? List.of() : List.of(new Piece(o.extent()[d], stride, null));
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
