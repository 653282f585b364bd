package org.axe4j.schedules.cuda;

import com.google.gson.JsonElement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Group;
import org.axe4j.layout.Grouped;
import org.axe4j.layout.Iter;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Point;
import org.axe4j.layout.Result;
import org.axe4j.layout.Shape;
import org.axe4j.layout.Swizzle;
import org.axe4j.layout.TileOf;
import org.axe4j.schedules.AffineAccess;
import org.axe4j.schedules.Declined;
import org.axe4j.schedules.LoopNest;
import org.axe4j.schedules.Modular;
import org.axe4j.schedules.Operand;
import org.axe4j.schedules.Request;
import org.axe4j.schedules.Rule;
import org.axe4j.schedules.RunTimeStarts;
import org.axe4j.schedules.plan.CudaPlans;
import org.axe4j.schedules.plan.PlanParts;
import org.axe4j.schedules.plan.SchedulePlan;

/**
 * {@code copy_async} global <-> shared as TMA bulk tensor copies ({@code cp.async.bulk.tensor}, sm_90+), issued by
 * one thread. The tensor map (dims, byte strides, box, swizzle) is derived from the two layouts.
 *
 * <p><b>Region.</b> Both operands' regions are sliced to affine pieces ({@link AffineAccess}: the layout's digits
 * restricted to the region) and refined against each other per region dim ({@link LoopNest#refine}): loops l with
 * extent e_l, shared stride ss_l, global stride gs_l and coordinate step u_l in their global buffer dim.
 *
 * <p><b>Box.</b> TMA writes box element (c_0, ..., c_{r-1}) (c_0 fastest) to shared offset
 * {@code swz(start + sum_j c_j * prod_{i<j} box_i)}. So the box loops are the loops in increasing shared stride
 * while {@code ss = prod of the box extents so far} (the first has ss = 1 and must have gs = 1, as TMA's dim 0 is
 * contiguous in global memory), each at most 256 (a longer loop is split: 256 or its largest divisor below). The
 * shared tile over the refined copy shape must then be a tile of that row-major box ({@link TileOf}): its outer
 * layout A places box i at {@code A(i) * span(box)}, one TMA instruction per box.
 *
 * <p><b>Tensor map.</b> The global layout grouped by its buffer shape ({@link Group}) gives each buffer dim d
 * digits (a_k, s_k) with coordinate steps q_k. A digit holding box loops is cut at each box loop's step (a box dim is
 * one tensor-map dim whose coordinate runs over consecutive values); every piece is a tensor-map dim with extent
 * E = hi / lo, element stride s_k * lo and coordinate step C = q_k * lo. An element of the box at issue i has
 * tensor coordinate {@code start_j + inc_ij + c_j} in dim j, where start_j = (b_d / C_j) mod E_j is the region
 * start's digit and inc_ij = sum over the issue loops in dim j of counter * u_l / C_j; the global address is
 * {@code base + sum_j coord_j * stride_j}, equal to the layout's address as long as no coordinate leaves
 * [0, E_j) (checked: no carry between the cut pieces). A start s known only at run time as {@code c n + b}
 * ({@link Modular}) fixes the digit of every map dim below the global dim's outermost one whose C_j * E_j divides c
 * (it is b's digit, checked as a constant one); the outermost takes {@code floor(s / C_j)} at run time when C_j
 * divides c. So a K tile at {@code kt * 128} read as two 64-element swizzle rows keeps its box.
 *
 * <p><b>Limits</b> (CUDA's tensor-map rules): rank <= 5, box dims <= 256, the innermost box dim a multiple of
 * 16 bytes, global strides (dims 1..) multiples of 16 bytes and the global base 16-byte aligned; each box start
 * in shared memory 128-byte aligned, or aligned to the swizzle's repeat (8 rows of 32, 64 or 128 bytes) when the
 * shared tile is swizzled (offsets from the shared data's start, which is taken to be aligned to that repeat: the
 * hardware swizzles absolute addresses, the layout offsets from the data). Swizzle modes: {@code Swizzle<B,M,3>} with 2^M elements = 16 bytes and B = 1, 2, 3
 * is the 32B, 64B, 128B mode; the innermost box dim then spans exactly 16 * 2^B bytes (one swizzle row).
 */
final class CudaTmaRule {
    private CudaTmaRule() {}

    static final int MAX_RANK = 5;
    static final long MAX_BOX = 256;
    static final long GLOBAL_ALIGN_BYTES = 16;
    static final long SHARED_ALIGN_BYTES = 128;
    /** Instructions one call may issue; more means a box far smaller than the tile. */
    static final int MAX_ISSUES = 1024;

    /**
     * mbar: the mbarrier a load completes on; cta_mask: a load multicast to those CTAs of the cluster; cta_group=2: the
     * mbarrier may be the peer CTA's of the pair (.cta_group::2, the emitter reads the value).
     */
    static final Set<String> CONFIG = Set.of("mbar", "cta_mask", "cta_group");

    public static final Rule TMA = new Rule() {
        public String variant() {
            return "axe4j-cuda-tma";
        }

        public int priority() {
            return 12;
        }

        /** The shared tile may be swizzled in a TMA swizzle mode; see the class comment. */
        public boolean acceptsSwizzle() {
            return true;
        }

        @Override
        public boolean acceptsPastEnd() {
            return true;   // TMA fills what lies past the tensor's end with zeros and does not store there
        }

        public SchedulePlan plan(Request call) {
            return tmaPlan(call);
        }
    };

    /** One loop of the region: extent, shared and global strides, global buffer dim and coordinate step in it. */
    record CopyLoop(int regionDim, int globalDim, long extent, long step, long shared, long global) {
        CopyLoop inner(long k) {
            return new CopyLoop(regionDim, globalDim, k, step, shared, global);
        }

        CopyLoop outer(long k) {
            return new CopyLoop(regionDim, globalDim, extent / k, step * k, shared * k, global * k);
        }
    }

    /** A tensor-map dim: a piece of global buffer dim {@code dim} with coordinate step {@code step}. */
    record MapDim(int dim, long step, long extent, long stride, long box) {}

    /** A digit of a global buffer dim: extent a, element stride s and coordinate step q (the extents inside it). */
    record Digit(long extent, long stride, long step) {}

    /** The box loops in shared order, and the loops left to the issues. */
    record BoxLoops(List<CopyLoop> box, List<CopyLoop> issue) {}

    /** A tensor-map dim cut from a digit, and the box loop it holds ({@code -1}: none). */
    private record Cut(MapDim dim, int boxLoop) {}

    /**
     * Each box start's shared alignment in bytes: 128 without swizzle, else the swizzle's repeat of 8 rows of
     * {@code 16 * 2^mode} bytes.
     */
    static long sharedAlignBytes(int mode) {
        return mode == 0 ? SHARED_ALIGN_BYTES : (16L << mode) * 8;
    }

    /** The TMA plan of {@code call}, or Declined with the first rule it breaks. */
    static CudaPlans.Tma tmaPlan(Request call) {
        String op = call.op();
        long threads = CudaRules.requireCudaScope(call);
        if (!call.scope().equals("thread") || threads != 1) {
            throw Declined.of("%s: TMA is issued by one thread; execution scope %s has %d threads", op,
                    call.scope(), threads);
        }
        String arch = call.params().has("arch") ? call.params().get("arch").getAsString() : "";
        if (smVersion(arch) < 90) {
            throw Declined.of("%s: TMA needs sm_90 or newer; the target arch is '%s'", op, arch);
        }
        return TmaCopy.of(call).plan();
    }

    /**
     * A copy between the {@code shared} and {@code global} operands of {@code call}, in direction {@code load}
     * (global to shared) or store, of {@code bytes}-byte elements; each step of its plan is a function of it.
     */
    private record TmaCopy(Request call, String op, Operand shared, Operand global, boolean load, boolean multicast,
            int bytes) {
        CudaPlans.Tma plan() {
            int mode = swizzleMode();
            AffineAccess sa = AffineAccess.of(shared);
            AffineAccess ga = AffineAccess.of(widened());
            if (!ga.replicas().equals(List.of(0L)) || !sa.replicas().equals(List.of(0L))) {
                throw Declined.of("%s: %s / %s has replicas; a TMA box reads and writes each element once", op,
                        shared, global);
            }
            List<List<Digit>> digits = globalDigits();
            List<CopyLoop> copyLoops = loops(sa, ga);
            BoxLoops loops = chooseBox(copyLoops, mode, MAX_RANK);
            List<MapDim> dims;
            try {
                dims = mapDims(digits, loops.box());
            } catch (Declined cut) {
                // a box dim that cuts a global dim it does not divide (a 128-column region of a 136-column tensor
                // in two 64-column swizzle rows): keep the global dim whole and issue one box per piece instead
                loops = fewerBoxDims(copyLoops, mode, loops.box().size(), digits, cut);
                dims = mapDims(digits, loops.box());
            }
            List<CopyLoop> box = loops.box();
            List<CopyLoop> issue = loops.issue();
            long[] start = startCoordinates(dims, issue);
            List<CudaPlans.TmaIssue> issues = issues(box, issue, dims, sa, mode);
            long boxElements = box.stream().mapToLong(CopyLoop::extent).reduce(1, (a, b) -> a * b);
            long globalBase = global.elemOffset() + global.layout().offsetOn(Axis.M);
            if (Math.floorMod(globalBase * bytes, GLOBAL_ALIGN_BYTES) != 0) {
                throw Declined.of("%s: the global tensor %s starts %d bytes into its data, not %d-byte aligned", op,
                        global, globalBase * bytes, GLOBAL_ALIGN_BYTES);
            }
            List<CudaPlans.TmaDim> dimPlans = new ArrayList<>();
            for (int j = 0; j < dims.size(); j++) {
                MapDim m = dims.get(j);
                // start -1: a run-time start s, the coordinate floor(s / step) read by the emitter
                dimPlans.add(new CudaPlans.TmaDim(m.dim(), m.step(), m.extent(), m.stride(), m.box(), start[j]));
            }
            RunTimeStarts starts = RunTimeStarts.of(sa);
            Map<String, PlanParts.Access> access = Map.of(shared.role(), new PlanParts.Access(sa.base(),
                    starts.strides(), starts.terms(), sa.replicas(), shared.layout().toString(), null));
            List<Long> boxDims = dims.stream().map(MapDim::box).toList();
            String instruction = load
                    ? "cp.async.bulk.tensor." + dims.size() + "d.shared::cluster.global.mbarrier::complete_tx::bytes"
                            + (multicast ? ".multicast::cluster" : "")
                    : "cp.async.bulk.tensor." + dims.size() + "d.global.shared::cta.tile.bulk_group";
            return new CudaPlans.Tma(load ? "g2s" : "s2g", dims.size(), instruction, multicast, mode, global.role(),
                    shared.role(), globalBase, dimPlans, access, issues, boxElements * bytes,
                    shared.elements() * bytes, List.of((load ? "TMA load" : "TMA store") + " of "
                    + shared.elements() * bytes
                    + " bytes: " + issues.size() + " x " + dims.size() + "-d box " + boxDims + " ("
                    + boxElements * bytes + " bytes)" + (mode == 0 ? "" : ", " + (16 << mode) + "B swizzle")
                    + "; tensor map dims " + dims.stream().map(MapDim::extent).toList() + " strides "
                    + dims.stream().map(MapDim::stride).toList() + " elements"
                    + (load ? "; the kernel arms the mbarrier with the bytes and waits" : "; the kernel commits and "
                    + "waits the bulk group")
                    + (multicast ? "; multicast: the box lands at the same shared offset in every CTA of cta_mask, "
                    + "completing on each one's mbarrier at the same offset" : "")));
        }

        /** Direction from the storage scopes; one dtype; config mbar for loads only. */
        static TmaCopy of(Request call) {
            String op = call.op();
            Operand dst = call.operand("dst");
            Operand src = call.operand("src0");
            String ds = call.storage("dst");
            String ss = call.storage("src0");
            boolean load = ds.startsWith("shared") && ss.equals("global");
            boolean store = ds.equals("global") && ss.startsWith("shared");
            if (!load && !store) {
                throw Declined.of("%s: TMA copies global <-> shared; %s is in %s, %s is in %s", op, dst, ds, src, ss);
            }
            Operand shared = load ? dst : src;
            Operand global = edgeStarts(call, load ? src : dst);
            if (!dst.dtype().equals(src.dtype())) {
                throw Declined.of("%s: dtypes %s -> %s differ; an async copy does not convert", op, src.dtype(),
                        dst.dtype());
            }
            if (!Arrays.equals(dst.loopExtents(), src.loopExtents())) {
                throw Declined.of("%s: region extents %s of src0 differ from %s of dst (unit dims dropped)", op,
                        Arrays.toString(src.loopExtents()), Arrays.toString(dst.loopExtents()));
            }
            List<String> config = new ArrayList<>();
            JsonElement c = call.params().get("config");
            if (c != null && c.isJsonArray()) {
                c.getAsJsonArray().forEach(e -> config.add(e.getAsString()));
            }
            for (String key : config) {
                if (!CONFIG.contains(key)) {
                    throw Declined.of("%s: axe4j-cuda-tma does not implement the config key %s (only %s)", op, key,
                            String.join(", ", new TreeSet<>(CONFIG)));
                }
            }
            if (load && !config.contains("mbar")) {
                throw Declined.of("%s: a TMA load completes on an mbarrier; pass mbar=<pointer to it> (%s <- %s)",
                        op, dst, src);
            }
            if (!load && config.contains("mbar")) {
                throw Declined.of("%s: a TMA store completes as a bulk group and takes no mbar", op);
            }
            if (!load && config.contains("cta_group")) {
                throw Declined.of("%s: cta_group names the mbarrier of a load; a TMA store has none", op);
            }
            if (!load && config.contains("cta_mask")) {
                throw Declined.of("%s: cta_mask multicasts loads into the cluster's CTAs; a TMA store has none", op);
            }
            return new TmaCopy(call, op, shared, global, load, config.contains("cta_mask"), shared.elementBytes());
        }

        /** 0 for none, else B of {@code Swizzle<B,M,3>} with 2^M elements = 16 bytes (32B, 64B, 128B modes). */
        int swizzleMode() {
            if (!call.swizzle(global.role()).isIdentity()) {
                throw Declined.of("%s: the global tensor %s is swizzled (%s); TMA reads global memory through a "
                        + "strided tensor map", op, global, call.swizzle(global.role()));
            }
            Swizzle swizzle = call.swizzle(shared.role());
            if (swizzle.isIdentity()) {
                return 0;
            }
            int unit = Long.numberOfTrailingZeros(16 / bytes);
            if (bytes > 16 || swizzle.shift() != 3 || swizzle.base() != unit || swizzle.bits() < 1
                    || swizzle.bits() > 3) {
                throw Declined.of("%s: the shared tile %s is swizzled by %s; TMA swizzles 16-byte units: "
                        + "Swizzle<B,%d,3> for %s with B = 1, 2, 3 (32B, 64B, 128B modes)", op, shared, swizzle, unit,
                        shared.dtype());
            }
            if (shared.elemOffset() % swizzle.period() != 0) {
                throw Declined.of("%s: %s is a swizzled view %d elements into its data, not a multiple of the "
                        + "swizzle's period %d (the swizzle applies to addresses from the start of the data)",
                        op, shared, shared.elemOffset(), swizzle.period());
            }
            return swizzle.bits();
        }

        /** The region's loops, per region dim inner first: the common refinement of both operands' pieces. */
        List<CopyLoop> loops(AffineAccess sa, AffineAccess ga) {
            int[] sdims = shared.loopDims();
            int[] gdims = global.loopDims();
            long[] extents = shared.loopExtents();
            List<CopyLoop> out = new ArrayList<>();
            for (int k = 0; k < extents.length; k++) {
                List<LoopNest.Loop> refined = LoopNest.refine(List.of(sa.dims().get(sdims[k]),
                        ga.dims().get(gdims[k])), extents[k], false, op + " dim " + k);
                long step = 1;
                for (LoopNest.Loop l : refined) {
                    if (l.strides()[0] == 0 || l.strides()[1] <= 0) {
                        throw Declined.of("%s: region dim %d moves the shared address by %d and the global one by %d; "
                                + "TMA needs distinct shared elements and increasing global addresses (%s, %s)", op,
                                k, l.strides()[0], l.strides()[1], shared, global);
                    }
                    out.add(new CopyLoop(k, gdims[k], l.extent(), step, l.strides()[0], l.strides()[1]));
                    step *= l.extent();
                }
            }
            return out;
        }

        /**
         * The widest box of fewer than {@code rank} dims whose tensor map cuts no global dim unevenly; rethrows
         * {@code cut} when even a one-dim box does.
         */
        BoxLoops fewerBoxDims(List<CopyLoop> loops, int mode, int rank, List<List<Digit>> digits, Declined cut) {
            for (int r = rank - 1; r >= 1; r--) {
                BoxLoops fewer = chooseBox(loops, mode, r);
                try {
                    mapDims(digits, fewer.box());
                    return fewer;
                } catch (Declined again) {
                    // try a narrower box
                }
            }
            throw cut;
        }

        /**
         * The global operand with the run-time starts that parsing fixed to their one in-bounds value restored where
         * another value also starts inside the tensor: such a region may be an edge tile past the end, which TMA
         * clips, so the start stays a run-time coordinate.
         */
        static Operand edgeStarts(Request call, Operand global) {
            Operand out = global;
            for (int d = 0; d < global.shape().length; d++) {
                if (global.runTimeStarts()[d] != null) {
                    continue;
                }
                var written = call.writtenRunTimeStart(global.role(), d);
                if (written.isPresent() && !written.get().isConstant()
                        && written.get().residue() + written.get().coeff() < global.shape()[d]) {
                    out = out.withRunTimeStart(d, written.get());
                }
            }
            return out;
        }

        /** Box loops in shared order (see the class comment), at most {@code maxRank}; the others are issue loops. */
        BoxLoops chooseBox(List<CopyLoop> loops, int mode, int maxRank) {
            List<CopyLoop> box = new ArrayList<>();
            List<CopyLoop> issue = new ArrayList<>(loops);
            List<CopyLoop> byShared = new ArrayList<>(loops);
            byShared.sort(Comparator.comparingLong(CopyLoop::shared));
            if (byShared.isEmpty() || byShared.get(0).shared() != 1) {
                throw Declined.of("%s: no loop of the region is contiguous in shared memory (%s); a TMA box is "
                        + "row-major there", op, shared);
            }
            CopyLoop first = byShared.get(0);
            if (first.global() != 1) {
                throw Declined.of("%s: the region's shared-contiguous loop (extent %d) moves the global address by "
                        + "%d elements; TMA's innermost box dim must be contiguous in global memory (%s <-> %s)", op,
                        first.extent(), first.global(), shared, global);
            }
            long expected = 1;
            for (CopyLoop l : byShared) {
                if (l.shared() != expected || box.size() == maxRank) {
                    break;
                }
                long limit = MAX_BOX;
                if (box.isEmpty() && mode > 0) {
                    limit = Math.min(limit, (16L << mode) / bytes); // the inner box dim is one swizzle row
                }
                issue.remove(l);
                if (l.extent() > limit) {
                    long k = boxSplit(l, limit, mode, bytes);
                    box.add(l.inner(k));
                    issue.add(l.outer(k));
                    break;
                }
                box.add(l);
                expected *= l.extent();
            }
            long innerBytes = box.get(0).extent() * bytes;
            if (innerBytes % 16 != 0) {
                throw Declined.of("%s: the innermost box dim is %d elements = %d bytes, not a multiple of 16 "
                        + "(%s <-> %s)", op, box.get(0).extent(), innerBytes, shared, global);
            }
            if (mode > 0 && innerBytes != 16L << mode) {
                throw Declined.of("%s: the %dB swizzle of %s needs the innermost box dim to span %d bytes; the "
                        + "region's contiguous run is %d bytes", op, 16 << mode, shared, 16 << mode, innerBytes);
            }
            return new BoxLoops(List.copyOf(box), List.copyOf(issue));
        }

        /** Per global buffer dim, its digits inner first. */
        List<List<Digit>> globalDigits() {
            Shape shape = Shape.of(global.shape());
            Grouped g = Group.tryGroup(global.layout(), shape).orElseThrow(reason -> Declined.of(
                    "%s: global layout %s cannot be grouped by its buffer shape %s", op, global.layout(), shape));
            List<List<Digit>> out = new ArrayList<>();
            for (int d = 0; d < shape.rank(); d++) {
                List<Iter> block = g.block(d);
                List<Digit> digits = new ArrayList<>();
                long q = 1;
                for (int k = block.size() - 1; k >= 0; k--) {
                    Iter it = block.get(k);
                    if (it.extent() == 1) {
                        continue;
                    }
                    if (it.stride() <= 0) {
                        throw Declined.of("%s: global layout %s walks dim %d with stride %d; tensor-map strides are "
                                + "positive", op, global.layout(), d, it.stride());
                    }
                    digits.add(new Digit(it.extent(), it.stride(), q));
                    q *= it.extent();
                }
                if (digits.isEmpty() && global.extent()[d] > 1) {
                    digits.add(new Digit(1, sizeOneStride(), 1));   // a size-1 dim a wider box walks (M = 1)
                }
                out.add(digits);
            }
            return out;
        }

        /**
         * The stride a dim of size 1 gets in the tensor map when a box walks past it: any stride reaches only
         * coordinate 0 inside the tensor, so the layout's span rounded up to TMA's 16-byte stride alignment.
         */
        long sizeOneStride() {
            long perAlign = Math.max(1, GLOBAL_ALIGN_BYTES / bytes);
            long span = Math.max(1, global.layout().spanOn(Axis.M));
            return (span + perAlign - 1) / perAlign * perAlign;
        }

        /**
         * The global operand as if every dim its region runs past were long enough ({@link
         * Operand#firstDimPastEnd}): the dim's outermost digit extended, so the region's loops and their global
         * steps read as inside the tensor. The tensor map keeps the real dims, and TMA clips there.
         */
        Operand widened() {
            if (global.firstDimPastEnd().isEmpty()) {
                return global;
            }
            Shape shape = Shape.of(global.shape());
            Grouped g = Group.tryGroup(global.layout(), shape).orElseThrow(reason -> Declined.of(
                    "%s: global layout %s cannot be grouped by its buffer shape %s", op, global.layout(), shape));
            long[] wide = global.shape().clone();
            List<Iter> shard = new ArrayList<>();
            for (int d = 0; d < wide.length; d++) {
                List<Iter> block = new ArrayList<>(g.block(d));
                if (global.extent()[d] > wide[d]) {
                    long inner = 1;
                    for (int k = 1; k < block.size(); k++) {
                        inner *= block.get(k).extent();
                    }
                    Iter outer = block.isEmpty() ? null : block.get(0);
                    long stride = outer != null && outer.extent() > 1 ? outer.stride() : sizeOneStride();
                    long extent = (global.extent()[d] + inner - 1) / inner;
                    if (block.isEmpty()) {
                        block.add(Iter.of(extent, stride, "m"));
                    } else {
                        block.set(0, Iter.of(extent, stride, "m"));
                    }
                    wide[d] = extent * inner;
                }
                shard.addAll(block);
            }
            return new Operand(global.role(), global.name(), global.dtype(), wide, global.start(), global.extent(),
                    global.layout().withShard(shard), global.elemOffset(), global.runTimeStarts());
        }

        /** Digits cut at the box loops' steps; box dims first (in box order), then the rest inner to outer. */
        List<MapDim> mapDims(List<List<Digit>> digits, List<CopyLoop> box) {
            List<Cut> cutDims = new ArrayList<>();
            for (int d = global.shape().length - 1; d >= 0; d--) {
                for (Digit digit : digits.get(d)) {
                    long a = digit.extent();
                    long s = digit.stride();
                    long q = digit.step();
                    List<Long> cuts = new ArrayList<>(List.of(1L));
                    for (CopyLoop l : box) {
                        if (l.globalDim() == d && l.step() >= q && l.step() < q * a && l.step() / q > 1) {
                            if (l.step() % q != 0) {
                                throw Declined.of("%s: a box loop at coordinate step %d of global dim %d falls inside "
                                        + "a digit of step %d", op, l.step(), d, q);
                            }
                            cuts.add(l.step() / q);
                        }
                    }
                    cuts.sort(null);
                    for (int j = 0; j < cuts.size(); j++) {
                        long lo = cuts.get(j);
                        long hi = j + 1 < cuts.size() ? cuts.get(j + 1) : a;
                        if (hi % lo != 0) {
                            throw Declined.of("%s: global dim %d of %s is cut for the box at steps %s; %d does not "
                                    + "divide %d", op, d, global, cuts, lo, hi);
                        }
                        long step = q * lo;
                        int at = -1;
                        for (int i = 0; i < box.size(); i++) {
                            if (box.get(i).globalDim() == d && box.get(i).step() == step) {
                                at = i;
                            }
                        }
                        MapDim m = new MapDim(d, step, hi / lo, s * lo, at < 0 ? 1 : box.get(at).extent());
                        if (at >= 0 && box.get(at).global() != m.stride()) {
                            throw Declined.of("%s: box loop at step %d of global dim %d moves %d elements, the "
                                    + "tensor-map dim %d", op, step, d, box.get(at).global(), m.stride());
                        }
                        cutDims.add(new Cut(m, at));
                    }
                }
            }
            List<MapDim> dims = new ArrayList<>();
            for (int i = 0; i < box.size(); i++) {
                int boxLoop = i;
                dims.add(cutDims.stream().filter(c -> c.boxLoop() == boxLoop).reduce((x, y) -> y).map(Cut::dim)
                        .orElseThrow(() -> Declined.of("%s: box loop %s is in no tensor-map dim of %s", op,
                                box.get(boxLoop), global)));
            }
            cutDims.stream().filter(c -> c.boxLoop() < 0).map(Cut::dim).forEach(dims::add);
            if (dims.size() > MAX_RANK) {
                throw Declined.of("%s: the tensor map of %s needs %d dims (extents %s), more than TMA's %d", op,
                        global, dims.size(), dims.stream().map(MapDim::extent).toList(), MAX_RANK);
            }
            for (int j = 0; j < dims.size(); j++) {
                MapDim m = dims.get(j);
                if (m.box() > MAX_BOX) {
                    throw Declined.of("%s: box dim %d is %d > %d", op, j, m.box(), MAX_BOX);
                }
                if (j > 0 && (m.stride() * bytes) % GLOBAL_ALIGN_BYTES != 0) {
                    throw Declined.of("%s: tensor-map dim %d (global dim %d, extent %d) of %s has a stride of %d "
                            + "elements = %d bytes, not a multiple of %d", op, j, m.dim(), m.extent(), global,
                            m.stride(), m.stride() * bytes, GLOBAL_ALIGN_BYTES);
                }
            }
            return dims;
        }

        /**
         * The region start's digit in each map dim ({@code -1}: a run-time start, the whole global dim in one map
         * dim); checks that the box and the issue offsets keep every coordinate inside its dim (no carry).
         */
        long[] startCoordinates(List<MapDim> dims, List<CopyLoop> issue) {
            long[] out = new long[dims.size()];
            for (int j = 0; j < dims.size(); j++) {
                MapDim m = dims.get(j);
                long reach = m.box() - 1;
                for (CopyLoop l : issue) {
                    if (l.globalDim() == m.dim() && l.step() >= m.step() && l.step() < m.step() * m.extent()) {
                        reach += (l.extent() - 1) * (l.step() / m.step());
                    }
                }
                long b = global.start()[m.dim()];
                Modular s = global.runTimeStarts()[m.dim()];
                if (s != null && s.isConstant()) {
                    b = s.residue();
                } else if (s != null) {
                    // s = c n + b: the outermost map dim of the global dim takes floor(s / step) as its run-time
                    // coordinate when step divides c; a map dim below it needs its digit of s fixed, step * extent | c
                    long top = m.step() * m.extent();
                    if (top == global.shape()[m.dim()] && s.coeff() % m.step() == 0) {
                        out[j] = -1;
                        continue;
                    }
                    if (top == global.shape()[m.dim()] || s.coeff() % top != 0) {
                        throw Declined.of("%s: global dim %d of %s starts at a run-time index known as %s, but the "
                                + "tensor map splits it (map dim %d: step %d, extent %d) and that start's coordinate "
                                + "in it is not fixed", op, m.dim(), global, s, j, m.step(), m.extent());
                    }
                    b = s.residue();
                }
                out[j] = (b / m.step()) % m.extent();
                if (out[j] + reach >= m.extent()) {
                    throw Declined.of("%s: the region %s runs past a piece of global dim %d (coordinate %d + %d of "
                            + "extent %d at step %d)", op, global, m.dim(), out[j], reach, m.extent(), m.step());
                }
            }
            return out;
        }

        /**
         * One issue per box: the shared tile over the copy shape must be the outer layout A tiled with the row-major
         * box B ({@link TileOf#outer}); issue i writes at {@code A(i) * span(B)} past the shared base.
         */
        List<CudaPlans.TmaIssue> issues(List<CopyLoop> box, List<CopyLoop> issue, List<MapDim> dims,
                AffineAccess sa, int mode) {
            List<CopyLoop> copy = new ArrayList<>(box);
            copy.addAll(issue);
            copy.sort(Comparator.comparingInt(CopyLoop::regionDim).thenComparingLong(l -> -l.step()));
            long[] shape = new long[copy.size()];
            long[] boxShape = new long[copy.size()];
            List<Iter> tile = new ArrayList<>();
            List<Iter> boxIters = new ArrayList<>();
            for (int i = 0; i < copy.size(); i++) {
                CopyLoop l = copy.get(i);
                shape[i] = l.extent();
                boolean inBox = box.contains(l);
                boxShape[i] = inBox ? l.extent() : 1;
                tile.add(new Iter(l.extent(), l.shared(), Axis.M));
                boxIters.add(new Iter(boxShape[i], inBox ? l.shared() : 0, Axis.M));
            }
            Layout tileLayout = Layout.of(tile, List.of(), Map.of());
            Layout boxLayout = Layout.of(boxIters, List.of(), Map.of());
            Result<Layout> match = TileOf.outer(tileLayout, Shape.of(shape), boxLayout, Shape.of(boxShape));
            if (!match.isPresent()) {
                throw Declined.of("%s: the shared tile %s is not whole TMA boxes %s: %s", op, shared,
                        dims.stream().map(MapDim::box).toList(), match.reason());
            }
            Layout outer = match.get();
            long span = boxLayout.spanOn(Axis.M);
            long[] outerShape = new long[copy.size()];
            long count = 1;
            for (int i = 0; i < copy.size(); i++) {
                outerShape[i] = shape[i] / boxShape[i];
                count *= outerShape[i];
            }
            if (count > MAX_ISSUES) {
                throw Declined.of("%s: %d TMA instructions of a %d-element box for %s; at most %d", op, count, span,
                        shared, MAX_ISSUES);
            }
            long align = sharedAlignBytes(mode);
            checkSharedAlignment(sa, align);
            Shape os = Shape.of(outerShape);
            List<CudaPlans.TmaIssue> out = new ArrayList<>();
            for (long x = 0; x < count; x++) {
                long[] counter = os.unflatten(x);
                List<Point> p = outer.apply(os, counter);
                long offset = p.get(0).get(Axis.M) * span;
                if (Math.floorMod((sa.base() + offset) * bytes, align) != 0) {
                    throw Declined.of("%s: box %d of %s starts at shared element %d, not %d-byte aligned", op, x,
                            shared, sa.base() + offset, align);
                }
                long[] inc = new long[dims.size()];
                for (int i = 0; i < copy.size(); i++) {
                    CopyLoop l = copy.get(i);
                    if (outerShape[i] == 1) {
                        continue;
                    }
                    int j = dimOf(dims, l);
                    long per = l.step() / dims.get(j).step();
                    if (l.global() != per * dims.get(j).stride()) {
                        throw Declined.of("%s: issue loop at step %d of global dim %d moves %d elements, not %d x the "
                                + "tensor-map stride %d", op, l.step(), l.globalDim(), l.global(), per,
                                dims.get(j).stride());
                    }
                    inc[j] += counter[i] * per;
                }
                out.add(new CudaPlans.TmaIssue(offset, Arrays.stream(inc).boxed().toList()));
            }
            return out;
        }

        void checkSharedAlignment(AffineAccess sa, long align) {
            if (!sa.startOffset().times(bytes).divisibleBy(align)) {
                throw Declined.of("%s: %s starts at run-time indices that move it by %s elements (%d bytes each); box "
                        + "starts must stay %d-byte aligned", op, shared, sa.startOffset(), bytes, align);
            }
        }

        /** The map dim whose coordinate range holds loop {@code l}'s step. */
        int dimOf(List<MapDim> dims, CopyLoop l) {
            for (int j = 0; j < dims.size(); j++) {
                MapDim m = dims.get(j);
                // the outermost map dim of a global dim also takes steps past its end (an edge tile: TMA clips)
                boolean outermost = m.step() * m.extent() >= global.shape()[m.dim()];
                if (m.dim() == l.globalDim() && l.step() >= m.step()
                        && (l.step() < m.step() * m.extent() || outermost)) {
                    if (l.step() % m.step() != 0) {
                        throw Declined.of("%s: loop at step %d of global dim %d is not a multiple of the map dim's "
                                + "step %d", op, l.step(), m.dim(), m.step());
                    }
                    return j;
                }
            }
            throw Declined.of("%s: loop at step %d of global dim %d lies in no tensor-map dim", op, l.step(),
                    l.globalDim());
        }
    }

    /**
     * The box part k of a loop longer than {@code limit}: the largest divisor of its extent up to the limit whose
     * boxes start aligned ({@code k * shared stride} a multiple of the shared alignment), else the largest divisor.
     */
    static long boxSplit(CopyLoop l, long limit, int mode, int bytes) {
        long align = sharedAlignBytes(mode);
        long largest = 1;
        for (long k = Math.min(l.extent(), limit); k > 1; k--) {
            if (l.extent() % k == 0) {
                largest = Math.max(largest, k);
                if ((k * l.shared() * bytes) % align == 0) {
                    return k;
                }
            }
        }
        return largest;
    }

    /** 90 for "sm_90a", 100 for "sm_100a"; 0 when unknown. */
    static int smVersion(String arch) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("sm_(\\d+)").matcher(arch);
        return m.find() ? Integer.parseInt(m.group(1)) : 0;
    }
}
