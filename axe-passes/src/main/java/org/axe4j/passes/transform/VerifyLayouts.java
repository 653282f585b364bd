package org.axe4j.passes.transform;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.axe4j.layout.Axis;
import org.axe4j.layout.AxisKind;
import org.axe4j.layout.Checks;
import org.axe4j.layout.Group;
import org.axe4j.layout.Iter;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Point;
import org.axe4j.layout.Shape;
import org.axe4j.passes.TirxLayout;
import org.axe4j.passes.TirxLayouts;
import org.axe4j.passes.transform.TirFunction.Buffer;
import org.axe4j.passes.transform.TirFunction.Call;
import org.axe4j.passes.transform.TirFunction.Region;

/**
 * Checks every buffer and tile call of a PrimFunc against the layout rules and returns every violation at once.
 * Rules (the {@link Diagnostic#rule()} names):
 * <ul>
 *   <li>{@code layout-shape}: the layout's size is the buffer's element count and it groups by the shape</li>
 *   <li>{@code memory-span}: addresses {@code offset + sum (e-1)*s} stay in {@code [0, elements of the data)}: a
 *       view's data is the memory of the allocation it aliases (an on-chip allocation's layout span, as
 *       {@link AllocateBySpan} sizes it), a parameter's (the caller's memory) or a global allocation's its own
 *       shape's elements; the message names the shape to declare. On-chip allocations are sized by their layout's
 *       span ({@link AllocateBySpan}) and not reported</li>
 *   <li>{@code thread-extent}: per thread axis, the largest coordinate is below the launched extent
 *       ({@code laneid < 32}, {@code warpid <} warps per CTA from {@code T.warp_id}, ...)</li>
 *   <li>{@code replica-range}, {@code offset-range}: the same bounds, broken only once replicas, or the offset,
 *       are added to the shard's reach</li>
 *   <li>{@code region-bounds}: a region lies inside its buffer</li>
 *   <li>{@code region-shape}: the operand regions of a tile call agree (elementwise: equal extents after dropping
 *       unit dims; reductions: the source without its reduced axes; {@code gemm}, {@code gemm_async}: {@code M, N, K}
 *       with the transposes)</li>
 *   <li>{@code shared-memory}: the shared buffers of a CUDA function fit the target's shared memory per CTA</li>
 *   <li>{@code trn-partitions}, {@code trn-sbuf}, {@code trn-psum-banks}: Trainium on-chip tiles fit 128 partitions,
 *       192 KiB of SBUF per partition, 8 PSUM banks of 2 KiB</li>
 * </ul>
 */
public final class VerifyLayouts {
    private static final Set<String> REDUCTIONS = Set.of("sum", "max", "min", "prod");
    private static final Set<String> NO_SOURCES = Set.of("fill", "zero");

    private final TirFunction f;
    private final TargetLimits target;
    private final List<Diagnostic> out = new ArrayList<>();
    private final List<String> unchecked = new ArrayList<>();

    private VerifyLayouts(TirFunction f, TargetLimits target) {
        this.f = f;
        this.target = target;
    }

    /** Every violation in {@code f} for {@code target}, buffers first (in definition order), then calls. */
    public static List<Diagnostic> check(TirFunction f, TargetLimits target) {
        return run(f, target).out;
    }

    /**
     * What {@link #check} could not decide in {@code f}, one line each: checks of buffers with symbolic shapes, and
     * region bounds against a symbolic extent that do not reduce to a constant. Empty when everything was checked.
     */
    public static List<String> notChecked(TirFunction f, TargetLimits target) {
        return List.copyOf(run(f, target).unchecked);
    }

    private static VerifyLayouts run(TirFunction f, TargetLimits target) {
        VerifyLayouts v = new VerifyLayouts(f, target);
        for (Buffer b : f.buffers()) {
            v.buffer(b);
        }
        v.sharedMemory();
        for (Call c : f.calls()) {
            v.call(c);
        }
        return v;
    }

    private void report(String rule, String subject, String layout, String message) {
        out.add(new Diagnostic(rule, f.name(), subject, layout, message));
    }

    static String subject(Buffer b) {
        return "buffer " + b.name() + " " + b.shapeText() + " " + b.dtype() + (b.scope().isEmpty() ? "" : " " + b.scope());
    }

    /** The layout of {@code b} as axe4j reads it, or null (none, or a form axe4j does not read). */
    static TirxLayout layoutOf(Buffer b) {
        if (b.layout() == null) {
            return null;
        }
        try {
            return TirxLayouts.read(b.layout());
        } catch (RuntimeException e) {
            return null;
        }
    }

    // ---- buffers -------------------------------------------------------------------------------

    private void buffer(Buffer b) {
        TirxLayout tl = layoutOf(b);
        if (b.layout() != null && !b.constantShape()) {
            unchecked.add(f.name() + ": " + subject(b) + ": its layout " + (tl == null ? "(symbolic)" : tl)
                    + " against the symbolic shape (layout size, memory span, offsets, thread extents and on-chip "
                    + "limits need constant extents)");
        }
        if (tl == null || !b.constantShape()) {
            return;
        }
        Layout l = tl.layout();
        String text = tl.toString();
        Shape shape = new Shape(List.of(b.shape()));
        if (l.size() != shape.size()) {
            report("layout-shape", subject(b), text, "the layout has " + l.size() + " elements, the shape "
                    + b.shapeText() + " has " + shape.size());
        } else if (Group.tryGroup(l, shape).isEmpty()) {
            report("layout-shape", subject(b), text, "the layout cannot be grouped by the shape " + b.shapeText()
                    + " (an iter straddles two dimensions)");
        }
        for (Axis axis : l.axes()) {
            Reach r = reach(l, axis, tl.symbolic().isEmpty());
            if (r == null) {
                continue;
            }
            if (axis.equals(Axis.M)) {
                memory(b, r, text, l.size() == shape.size());
            } else if (isThreadAxis(axis)) {
                thread(b, axis, r, text);
            }
        }
        trainium(b, l, text);
    }

    /** How far a layout reaches on one axis: shard and replica iters ({@code sum (e-1)*|s|}), offset, lowest point. */
    record Reach(long shard, long replica, long offset, long lowest) {
        long highest() {
            return lowest + shard + replica;
        }
    }

    static Reach reach(Layout l, Axis axis, boolean integerOffset) {
        if (!integerOffset) {
            return null;
        }
        long shard = 0;
        long replica = 0;
        long negative = 0;
        for (Iter it : l.shard()) {
            if (it.axis().equals(axis)) {
                shard += it.reach();
                negative += it.stride() < 0 ? it.reach() : 0;
            }
        }
        for (Iter it : l.replica()) {
            if (it.axis().equals(axis)) {
                replica += it.reach();
                negative += it.stride() < 0 ? it.reach() : 0;
            }
        }
        long offset = l.offsetOn(axis);
        return new Reach(shard, replica, offset, offset - negative);
    }

    /** Which part first breaks the bound {@code highest < limit}: the shard, the replicas, or the offset. */
    private static String culprit(Reach r, long limit, String plainRule) {
        if (r.shard() >= limit) {
            return plainRule;
        }
        if (r.shard() + r.replica() >= limit) {
            return "replica-range";
        }
        return "offset-range";
    }

    private void memory(Buffer b, Reach r, String text, boolean sized) {
        if (r.lowest() < 0) {
            report("memory-span", subject(b), text, "the layout reaches address " + r.lowest()
                    + ", before the start of the buffer's memory");
        }
        if (sized && b.origin() != TirFunction.Origin.DECL && b.elements() > 0 && r.highest() >= b.elements()
                && AllocateBySpan.storageElements(b) == null) {
            // an on-chip allocation is sized by its layout's span (AllocateBySpan); a parameter, or an allocation in
            // global memory, gets exactly the elements of its shape
            boolean param = b.origin() == TirFunction.Origin.PARAM;
            report(culprit(r, b.elements(), "memory-span"), subject(b), text, "the layout reaches element "
                    + r.highest() + " (shard " + r.shard() + " + replicas " + r.replica() + " + offset " + r.offset()
                    + "), past the " + b.elements() + " elements " + (param ? "of the argument" : "TVM allocates")
                    + " of shape " + b.shapeText() + "; " + (param ? "the caller's memory must hold " : "it needs ")
                    + (r.highest() + 1) + " elements: declare the " + (param ? "parameter" : "buffer")
                    + " with shape " + storageShape(b, r) + " and use its region " + region(b));
            return;
        }
        Buffer data = b.aliasOf();
        if (b.origin() != TirFunction.Origin.DECL || data == null || !data.constantShape()) {
            return;
        }
        if (data.elements() == 0 && data.scope().startsWith("shared") && b.constantShape() && b.elements() > 0
                && r.highest() >= b.elements()) {
            // a pool sized at launch (T.SMEMPool): its bump allocator carves the shape's bytes, not the layout's span,
            // so a padded layout allocated by pool.alloc runs into the pool's next allocation
            Buffer next = nextInPool(b, data);
            Long start = byteOffset(b);
            if (next != null && start != null && start + (r.highest() + 1) * b.elementBytes() > byteOffset(next)) {
                report("pool-span", subject(b), text, "the layout reaches element " + r.highest() + " (shard "
                        + r.shard() + " + replicas " + r.replica() + " + offset " + r.offset() + "), past the "
                        + b.elements() + " elements SMEMPool.alloc carves for shape " + b.shapeText() + " in "
                        + data.name() + ", into " + next.name() + " (byte " + byteOffset(next) + "); allocate it with "
                        + "axe4j.cuda.alloc_by_span(pool, shape, dtype, layout=...), which carves "
                        + (r.highest() + 1) + " elements");
            }
            return;
        }
        Buffer memory = memoryOf(data);
        long capacity = memoryElements(memory) * memory.elementBytes() / b.elementBytes();
        if (memory.elements() > 0 && r.highest() >= capacity) { // 0: a pool sized at launch (dynamic shared memory)
            report(culprit(r, capacity, "memory-span"), subject(b), text, "the layout reaches element " + r.highest()
                    + " (shard " + r.shard() + " + replicas " + r.replica() + " + offset " + r.offset()
                    + "), past the " + capacity + " " + b.dtype() + " elements of " + data.name() + "'s memory");
        }
    }

    /**
     * The buffer that owns the memory {@code data} views: {@code data} itself, or, for a declaration over another
     * buffer's data, that buffer's owner (a padded allocation that {@link AllocateBySpan} has already resized is a
     * declaration over its storage).
     */
    static Buffer memoryOf(Buffer data) {
        Buffer owner = data;
        for (int hops = 0; owner.origin() == TirFunction.Origin.DECL && owner.aliasOf() != null
                && owner.aliasOf() != owner && owner.aliasOf().constantShape() && hops < 64; hops++) {
            owner = owner.aliasOf();
        }
        return owner;
    }

    /** The elements an allocation really has: an on-chip one is allocated by its layout's span, else its shape's. */
    static long memoryElements(Buffer owner) {
        Long bySpan = AllocateBySpan.storageElements(owner);
        return bySpan != null ? bySpan : owner.elements();
    }

    /** Where {@code b} starts in its data, in bytes ({@code elem_offset} times its element size); null if symbolic. */
    static Long byteOffset(Buffer b) {
        Long elements = TirFunction.constant(b.type().get("elem_offset"));
        return elements == null ? null : elements * b.elementBytes();
    }

    /** The view of {@code data} that starts first after {@code b} does (the pool's next allocation), or null. */
    private Buffer nextInPool(Buffer b, Buffer data) {
        Long start = byteOffset(b);
        Buffer next = null;
        for (Buffer c : f.buffers()) {
            Long at = c == b || c.aliasOf() != data ? null : byteOffset(c);
            if (start != null && at != null && at > start && (next == null || at < byteOffset(next))) {
                next = c;
            }
        }
        return next;
    }

    /**
     * A shape whose row-major elements hold a padded layout: the pitched shape (extents {@code s[k-1] / s[k]} from the
     * strides) when the layout has one positive iter per dimension, strides dividing one another, the last 1, and no
     * offset; else the flat {@code (highest + 1,)}.
     */
    static String storageShape(Buffer b, Reach r) {
        long needed = r.highest() + 1;
        String flat = "(" + needed + ",)";
        TirxLayout tl = layoutOf(b);
        if (tl == null || r.offset() != 0 || r.replica() != 0) {
            return flat;
        }
        List<Iter> dims = CanonicalizeLayouts.canonicalFor(tl.layout(), b.shape()).shard();
        if (dims.size() != b.shape().length) {
            return flat;
        }
        long[] out = new long[dims.size()];
        out[0] = b.shape()[0];
        for (int k = 0; k < dims.size(); k++) {
            Iter it = dims.get(k);
            if (!it.axis().equals(Axis.M) || it.stride() <= 0 || it.extent() != b.shape()[k]) {
                return flat;
            }
            if (k > 0) {
                long outer = dims.get(k - 1).stride();
                if (outer % it.stride() != 0 || outer / it.stride() < it.extent()) {
                    return flat;
                }
                out[k] = outer / it.stride();
            }
        }
        if (dims.get(dims.size() - 1).stride() != 1) {
            return flat;
        }
        List<String> parts = new ArrayList<>();
        long total = 1;
        for (long d : out) {
            parts.add(Long.toString(d));
            total *= d;
        }
        return total < needed ? flat : "(" + String.join(", ", parts) + (parts.size() == 1 ? ",)" : ")");
    }

    /** The whole of {@code b} as a region, e.g. {@code [0:16, 0:30]}. */
    private static String region(Buffer b) {
        List<String> parts = new ArrayList<>();
        for (Long d : b.shape()) {
            parts.add("0:" + d);
        }
        return "[" + String.join(", ", parts) + "]";
    }

    static boolean isThreadAxis(Axis axis) {
        return axis.kind() == AxisKind.THREAD || axis.name().equals("tid_in_wg");
    }

    private void thread(Buffer b, Axis axis, Reach r, String text) {
        Long launched = f.threadExtents().get(axis.name());
        if (launched == null && axis.name().equals("laneid")) {
            launched = TargetLimits.LANES;
        }
        if (launched == null) {
            report("thread-extent", subject(b), text, "the layout places elements on " + axis.name()
                    + " (up to " + r.highest() + "), but the function launches no " + axis.name());
            return;
        }
        if (r.lowest() < 0 || r.highest() >= launched) {
            report(culprit(r, launched, "thread-extent"), subject(b), text, axis.name() + " reaches " + r.highest()
                    + " (shard " + r.shard() + " + replicas " + r.replica() + " + offset " + r.offset() + "), but "
                    + axis.name() + " < " + launched + " in this launch");
        }
    }

    private void trainium(Buffer b, Layout l, String text) {
        boolean psum = b.scope().equals("trn.psum");
        if (!psum && !b.scope().equals("trn.sbuf")) {
            return;
        }
        Axis p = Axis.of("P");
        long partitions = l.spanOn(p) + l.offsetOn(p);
        if (partitions > TargetLimits.TRN_PARTITIONS) {
            report("trn-partitions", subject(b), text, "spans " + partitions + " partitions > "
                    + TargetLimits.TRN_PARTITIONS);
        }
        Axis fAxis = Axis.of("F");
        long freeBytes = Checks.mulSaturating(Math.max(0, l.spanOn(fAxis) + l.offsetOn(fAxis)), b.elementBytes());
        if (!psum && freeBytes > TargetLimits.TRN_SBUF_BYTES_PER_PARTITION) {
            report("trn-sbuf", subject(b), text, freeBytes + " bytes per partition > SBUF's "
                    + TargetLimits.TRN_SBUF_BYTES_PER_PARTITION);
        }
        if (psum) {
            Axis bank = Axis.of("Bank");
            long banks = l.axes().contains(bank) ? l.spanOn(bank) + l.offsetOn(bank)
                    : Checks.ceilDiv(freeBytes, TargetLimits.TRN_PSUM_BANK_BYTES);
            if (banks > TargetLimits.TRN_PSUM_BANKS) {
                report("trn-psum-banks", subject(b), text, banks + " PSUM banks (" + freeBytes
                        + " bytes per partition) > " + TargetLimits.TRN_PSUM_BANKS + " banks of "
                        + TargetLimits.TRN_PSUM_BANK_BYTES + " bytes");
            }
        }
    }

    /** CUDA: the bytes of every shared buffer (span on {@code m} times the element size) fit one CTA. */
    private void sharedMemory() {
        if (!target.isCuda()) {
            return;
        }
        long total = 0;
        Map<String, Long> parts = new LinkedHashMap<>();
        for (Buffer b : f.buffers()) {
            TirxLayout tl = layoutOf(b);
            if (b.origin() != TirFunction.Origin.ALLOC || !b.scope().startsWith("shared") || !b.constantShape()) {
                continue;
            }
            long elements = tl == null ? b.elements() : tl.layout().spanOn(Axis.M) + Math.max(0, tl.layout().offsetOn(Axis.M));
            long bytes = Checks.mulSaturating(elements, b.elementBytes());
            parts.put(b.name(), bytes);
            total = Checks.addSaturating(total, bytes);
        }
        if (total > target.sharedBytesPerCta()) {
            List<String> each = new ArrayList<>();
            parts.forEach((n, v) -> each.add(n + " " + v + " B"));
            report("shared-memory", "function", "", total + " bytes of shared memory (" + String.join(", ", each)
                    + ") > " + target.sharedBytesPerCta() + " bytes per CTA on " + target.kind()
                    + (target.arch().isEmpty() ? "" : " " + target.arch()));
        }
    }

    // ---- tile calls ----------------------------------------------------------------------------

    private void call(Call c) {
        for (Region r : c.regions()) {
            bounds(c, r);
        }
        if (!c.regions().isEmpty()) {
            written(c, c.regions().get(0).buffer());
        }
        if (c.regions().size() < 2 || NO_SOURCES.contains(c.op())) {
            return;
        }
        for (Region r : c.regions()) {
            if (!r.constantExtents()) {
                return;
            }
        }
        if (c.op().startsWith("gemm")) {
            gemm(c);
        } else if (REDUCTIONS.contains(c.op())) {
            reduction(c);
        } else {
            List<Long> want = c.regions().get(0).squeezed();
            for (Region r : c.regions().subList(1, c.regions().size())) {
                if (!r.squeezed().equals(want) && !trnBroadcast(c.regions().get(0), r)) {
                    report("region-shape", c.label(), "", "operand " + r + " has extents " + r.squeezed()
                            + ", the destination " + c.regions().get(0) + " has " + want + " (unit dims dropped)");
                }
            }
        }
    }

    private final Set<String> writtenChecked = new java.util.HashSet<>();

    /**
     * A written buffer's layout must send distinct logical elements to distinct places (the shard map injective);
     * copies of one element are the replica iters' business. Otherwise two elements are written to one address and
     * one of them is lost: a stride-0 iter, or iters that overlap.
     */
    private void written(Call c, Buffer b) {
        TirxLayout tl = layoutOf(b);
        if (tl == null || !writtenChecked.add(b.name()) || tl.layout().isShardInjective()) {
            return;
        }
        Layout l = tl.layout();
        String how = l.shard().stream().filter(it -> it.extent() > 1 && it.stride() == 0).findFirst()
                .map(it -> "its iter " + it + " has stride 0 (a broadcast written as a layout: only reads may use it)")
                .orElse("its iters overlap");
        String witness = "";
        if (l.size() <= 1 << 16) {
            Map<Point, Long> seen = new java.util.HashMap<>();
            for (long x = 0; x < l.size(); x++) {
                Long first = seen.putIfAbsent(l.shardImage(x), x);
                if (first != null) {
                    witness = "; logical elements " + first + " and " + x + " (flat) both go to " + l.shardImage(x);
                    break;
                }
            }
        }
        report("write-alias", c.label(), tl.toString(), "destination " + subject(b) + " is written, but " + how
                + witness);
    }

    /** On trn an operand may repeat along its unit dims (a per-partition column {@code [P, 1]} against {@code [P, F]}). */
    private boolean trnBroadcast(Region dst, Region operand) {
        if (!target.kind().equals("trn") || dst.extents().length != operand.extents().length) {
            return false;
        }
        for (int k = 0; k < dst.extents().length; k++) {
            Long d = dst.extents()[k];
            Long o = operand.extents()[k];
            if (d == null || o == null || (o != 1 && !o.equals(d))) {
                return false;
            }
        }
        return true;
    }

    private void bounds(Call c, Region r) {
        Long[] shape = r.buffer().shape();
        for (int k = 0; k < Math.min(shape.length, r.extents().length); k++) {
            if (shape[k] == null || r.begins()[k] == null || r.extents()[k] == null) {
                symbolicBounds(c, r, k);
                continue;
            }
            long end = r.begins()[k] + r.extents()[k];
            if (r.begins()[k] < 0 || end > shape[k]) {
                report("region-bounds", c.label(), "", "operand " + r + " dim " + k + " spans [" + r.begins()[k]
                        + ", " + end + ") outside the buffer's extent " + shape[k]);
            }
        }
    }

    /**
     * Dim {@code k} of {@code r} against a symbolic extent: with {@link LinearIndex}, end - extent and begin are
     * decided when the variables cancel (e.g. {@code [0, n + 1)} against {@code n}); a symbolic extent left undecided
     * is listed by {@link #notChecked}. (A run-time begin on a constant extent is the loops' business, not listed.)
     */
    private void symbolicBounds(Call c, Region r, int k) {
        Object shapeExpr = ((List<?>) r.buffer().type().get("shape")).get(k);
        if (k >= r.beginExprs().size()) {
            return;
        }
        LinearIndex extent = LinearIndex.of(shapeExpr);
        LinearIndex begin = LinearIndex.of(r.beginExprs().get(k));
        LinearIndex size = LinearIndex.of(r.extentExprs().get(k));
        boolean symbolicExtent = extent == null || !extent.isConstant();
        if (extent == null || begin == null || size == null) {
            if (symbolicExtent) {
                unchecked.add(f.name() + ": " + c.label() + ": operand " + r + " dim " + k + " against the extent "
                        + shapeExpr + " (not a linear index)");
            }
            return;
        }
        LinearIndex end = begin.plus(size, 1);
        LinearIndex past = end.plus(extent, -1);
        if ((past.isConstant() && past.constant() > 0) || (begin.isConstant() && begin.constant() < 0)) {
            report("region-bounds", c.label(), "", "operand " + r + " dim " + k + " spans [" + begin + ", " + end
                    + ") outside the buffer's extent " + extent);
        } else if (symbolicExtent && !(past.isConstant() && begin.isConstant())) {
            unchecked.add(f.name() + ": " + c.label() + ": operand " + r + " dim " + k + " spans [" + begin + ", "
                    + end + ") against the symbolic extent " + extent + ": not decided");
        }
    }

    private void reduction(Call c) {
        Region dst = c.regions().get(0);
        Region src = c.regions().get(1);
        int rank = src.extents().length;
        Set<Integer> axes = new java.util.HashSet<>();
        if (!c.others().isEmpty() && c.others().get(0) instanceof List<?> list) {
            for (Object a : list) {
                Long v = TirFunction.constant(a);
                if (v == null) {
                    return;
                }
                axes.add((int) ((v % rank + rank) % rank));
            }
        } else {
            return;
        }
        List<Long> kept = new ArrayList<>();
        for (int k = 0; k < rank; k++) {
            if (!axes.contains(k) && src.extents()[k] != 1) {
                kept.add(src.extents()[k]);
            }
        }
        if (!dst.squeezed().equals(kept)) {
            report("region-shape", c.label(), "", "destination " + dst + " has extents " + dst.squeezed()
                    + ", the source " + src + " without its reduced axes " + new java.util.TreeSet<>(axes) + " has "
                    + kept);
        }
    }

    private void gemm(Call c) {
        if (c.regions().size() < 3) {
            return;
        }
        long[] d = matrix(c.regions().get(0));
        long[] a = matrix(c.regions().get(1));
        long[] b = matrix(c.regions().get(2));
        if (d == null || a == null || b == null) {
            return;
        }
        List<Boolean> flags = new ArrayList<>(); // transA, transB: the first two booleans after the operands
        c.others().forEach(o -> {
            if (o instanceof Boolean f) {
                flags.add(f);
            }
        });
        boolean ta = flags.size() > 0 && flags.get(0);
        boolean tb = flags.size() > 1 && flags.get(1);
        long m = d[0];
        long n = d[1];
        long am = ta ? a[1] : a[0];
        long ak = ta ? a[0] : a[1];
        boolean kMajorB = c.op().equals("gemm_async") != tb; // gemm_async: B is N x K unless transB; gemm: K x N
        long bk = kMajorB ? b[1] : b[0];
        long bn = kMajorB ? b[0] : b[1];
        List<String> problems = new ArrayList<>();
        if (am != m) {
            problems.add("A has M = " + am + ", D has M = " + m);
        }
        // gemm_async(cta_group=2): one MMA over a CTA pair, B holding this CTA's N/2 rows
        long group = c.op().equals("gemm_async") ? c.configInt("cta_group", 1) : 1;
        if (bn * group != n) {
            problems.add("B has N = " + bn + (group > 1 ? " (x cta_group " + group + ")" : "") + ", D has N = " + n);
        }
        if (ak != bk) {
            problems.add("A has K = " + ak + ", B has K = " + bk);
        }
        if (c.op().equals("gemm") && c.regions().size() > 3) {
            long[] cc = matrix(c.regions().get(3));
            if (cc != null && (cc[0] != m || cc[1] != n)) {
                problems.add("C is " + cc[0] + "x" + cc[1] + ", D is " + m + "x" + n);
            }
        }
        if (!problems.isEmpty()) {
            report("region-shape", c.label(), "", "gemm operands disagree: " + String.join("; ", problems)
                    + (ta || tb ? " (trans_a=" + ta + ", trans_b=" + tb + ")" : ""));
            return;
        }
        if (target.kind().equals("cuda")) {
            for (MmaFragmentCheck.Finding x : MmaFragmentCheck.check(c, ta, tb)) {
                report("mma-fragment", c.label(), x.layout(), x.message());
            }
        }
    }

    /** The (rows, cols) of a matrix operand: its last two extents after dropping leading unit dims. */
    private static long[] matrix(Region r) {
        Long[] e = r.extents();
        int start = 0;
        while (e.length - start > 2 && e[start] == 1) {
            start++;
        }
        if (e.length - start != 2) {
            return null;
        }
        return new long[] {e[start], e[start + 1]};
    }
}
