package org.axe4j.mesh;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.axe4j.layout.AxeException;
import org.axe4j.layout.Iter;
import org.axe4j.layout.Layout;

/**
 * The elements of a redistribution, cell by cell. <b>Cell digits</b> of a {@link Refinement} are those on a device
 * axis in the source or the destination, and its composite digits; the others (on m in both) are <b>free</b>. A cell is one assignment of
 * the cell digits: all its elements have the same holders and the same needers, and on each of them the cell's
 * elements form one strided box, {@code base + sum_k i_k * mstride_k} over the free digits. A cell clipped to the
 * logical shape (padding removed) is a few {@link Piece}s, each a box in every buffer.
 *
 * <p>Validated per cell, exactly: device coordinates inside the mesh, non-negative local offsets, partial groups
 * holding the same elements. Overlap (two elements at one rank's offset) is checked by a sufficient condition on
 * the layout's iters; when it fails, by enumeration for layouts of at most 2^26 elements, else refused.
 */
final class Cells {
    /** Above this many cells the planner refuses (a cell is a few boxes per rank in the plan). */
    static final long CELL_LIMIT = 1L << 22;
    /** Above this many (cell, replica point) pairs the planner refuses. */
    static final long PLACEMENT_LIMIT = 1L << 24;

    /** Where one layout places a cell: rank and the local offset of the cell's first free position. */
    record Placement(int rank, long base) {}

    /** One cell: its logical flat base and its placements per layout (0 = source, 1 = destination). */
    static final class Cell {
        final long globalBase;
        final Placement[][] at;
        final long[] coordBase;

        Cell(long globalBase, Placement[][] at, long[] coordBase) {
            this.globalBase = globalBase;
            this.at = at;
            this.coordBase = coordBase;
        }

        /** The first placement of {@code layout} on {@code rank}, or null. */
        Placement on(int layout, int rank) {
            for (Placement p : at[layout]) {
                if (p.rank() == rank) {
                    return p;
                }
            }
            return null;
        }

        /** Distinct ranks of a layout's placements, increasing. */
        int[] ranks(int layout) {
            return Arrays.stream(at[layout]).mapToInt(Placement::rank).distinct().sorted().toArray();
        }
    }

    /** A box of one cell: free digit f ranges over {@code [lo[f], lo[f] + ext[f])}. */
    record Piece(Cell cell, long[] lo, long[] ext) {
        long size() {
            long n = 1;
            for (long e : ext) {
                n *= e;
            }
            return n;
        }
    }

    final Refinement ref;
    final DistTensor src;
    final DistTensor dst;
    final MeshRanks ranks;
    final int[] cellDigits;
    final int[] freeDigits;
    final List<Piece> pieces = new ArrayList<>();
    final long cellCount;

    Cells(Refinement ref, DistTensor src, DistTensor dst, MeshRanks ranks) {
        this.ref = ref;
        this.src = src;
        this.dst = dst;
        this.ranks = ranks;
        List<Integer> cd = new ArrayList<>();
        List<Integer> fd = new ArrayList<>();
        long cells = 1;
        for (int k = 0; k < ref.digits(); k++) {
            if (ref.axis[0][k] != 0 || ref.axis[1][k] != 0) {
                cd.add(k);
                cells = Math.multiplyExact(cells, ref.extent[k]);
                if (cells > CELL_LIMIT) {
                    throw new AxeException(AxeException.Kind.INVALID, "redistribute " + src.layout() + " -> "
                            + dst.layout() + ": more than " + CELL_LIMIT + " cells (assignments of the digits on device"
                            + " axes); the planner handles at most 2^22");
                }
            } else {
                fd.add(k);
            }
        }
        cellDigits = cd.stream().mapToInt(Integer::intValue).toArray();
        freeDigits = fd.stream().mapToInt(Integer::intValue).toArray();
        cellCount = cells;
        List<DistTensor> tensors = List.of(src, dst);
        List<List<long[]>> replicas = new ArrayList<>();
        long perCell = 0;
        for (DistTensor t : tensors) {
            replicas.add(replicaPoints(t, ranks, ref.axisCount));
            perCell += replicas.get(replicas.size() - 1).size();
        }
        if (Math.multiplyExact(cells, perCell) > PLACEMENT_LIMIT) {
            throw new AxeException(AxeException.Kind.INVALID, "redistribute " + src.layout() + " -> " + dst.layout()
                    + ": " + cells + " cells times " + perCell + " replica points exceed 2^24");
        }
        enumerate(tensors, replicas);
        checkOverlap(src);
        if (dst != src) {
            checkOverlap(dst);
        }
    }

    private void enumerate(List<DistTensor> tensors, List<List<long[]>> replicas) {
        int c = cellDigits.length;
        long[] v = new long[c];
        for (long cell = 0; cell < cellCount; cell++) {
            if (cell > 0) {
                for (int i = c - 1; i >= 0; i--) {
                    if (++v[i] < ref.extent[cellDigits[i]]) {
                        break;
                    }
                    v[i] = 0;
                }
            }
            long[] fixed = new long[ref.digits()];
            Arrays.fill(fixed, -1);
            long gbase = 0;
            for (int i = 0; i < c; i++) {
                fixed[cellDigits[i]] = v[i];
                gbase += ref.valueOf(cellDigits[i], v[i]) * ref.globalStride[cellDigits[i]];
            }
            List<long[][]> boxes = clip(fixed);
            if (boxes.isEmpty()) {
                continue;
            }
            Placement[][] at = new Placement[2][];
            for (int l = 0; l < 2; l++) {
                long[] coord = new long[ref.axisCount];
                for (int i = 0; i < c; i++) {
                    ref.place(l, cellDigits[i], v[i], coord);
                }
                List<long[]> reps = replicas.get(l);
                at[l] = new Placement[reps.size()];
                for (int q = 0; q < reps.size(); q++) {
                    at[l][q] = place(tensors.get(l), coord, reps.get(q), gbase, boxes.get(0)[0]);
                }
            }
            long[] coordBase = new long[ref.logicalDims.length];
            for (int i = 0; i < c; i++) {
                coordBase[ref.dim[cellDigits[i]]] += ref.valueOf(cellDigits[i], v[i]) * ref.dimWeight[cellDigits[i]];
            }
            Cell cellObj = new Cell(gbase, at, coordBase);
            for (long[][] b : boxes) {
                Piece p = new Piece(cellObj, b[0], b[1]);
                for (int l = 0; l < 2; l++) {
                    for (Placement pl : at[l]) {
                        long min = box(p, l, pl.base()).min();
                        if (min < 0) {
                            throw new AxeException(AxeException.Kind.INVALID, "distributed tensor " + tensors.get(l)
                                    + ": element " + Holdings.coordText(tensors.get(l), gbase + offset(p.lo(), ref.globalStride))
                                    + " gets local offset m=" + min + " on rank " + pl.rank()
                                    + " (offsets must be non-negative)");
                        }
                    }
                }
                pieces.add(p);
            }
            checkPartialGroups(at[0], gbase, boxes.get(0)[0]);
        }
    }

    private long offset(long[] lo, long[] strides) {
        long o = 0;
        for (int f = 0; f < freeDigits.length; f++) {
            o += lo[f] * strides[freeDigits[f]];
        }
        return o;
    }

    private Placement place(DistTensor t, long[] coord, long[] rep, long gbase, long[] lo) {
        int rank = 0;
        for (int a = 1; a < ref.axisCount; a++) {
            long value = coord[a] + rep[a];
            int[] table = ranks.rankPart[a - 1];
            if (value < 0 || value >= table.length) {
                throw new AxeException(AxeException.Kind.INVALID, "distributed tensor " + t + ": element "
                        + Holdings.coordText(t, gbase + offset(lo, ref.globalStride)) + " is placed at "
                        + ranks.axes.get(a - 1) + "=" + value + ", outside the mesh (0.." + (table.length - 1)
                        + "): no rank would hold it");
            }
            rank += table[(int) value];
        }
        return new Placement(rank, coord[0] + rep[0]);
    }

    /** Every rank of a partial group holds what any of them holds (exact: holders are fixed per cell). */
    private void checkPartialGroups(Placement[] at, long gbase, long[] lo) {
        if (!src.isPartial()) {
            return;
        }
        boolean[] holds = new boolean[ranks.size];
        for (Placement p : at) {
            holds[p.rank()] = true;
        }
        for (Placement p : at) {
            for (int other : ranks.group(p.rank(), src.partialDims())) {
                if (!holds[other]) {
                    throw new AxeException(AxeException.Kind.INVALID, "distributed tensor " + src + ": ranks "
                            + p.rank() + " and " + other + " are one partial group (mesh dims " + src.partialDims()
                            + ") but only one of them holds element "
                            + Holdings.coordText(src, gbase + offset(lo, ref.globalStride))
                            + "; a partial layout must replicate over its partial dimensions");
                }
            }
        }
    }

    /**
     * Overlap: two different elements at one offset of one rank. Sufficient: on every axis, the layout's iters
     * (shard and replica) are injective together (sorted by |stride|, each |stride| exceeds the reach of the
     * smaller ones), so a point determines every digit. Otherwise enumerate (small, unpadded) or refuse.
     */
    private static void checkOverlap(DistTensor t) {
        Layout l = t.layout();
        List<Iter> all = new ArrayList<>(l.shard());
        all.addAll(l.replica());
        for (var axis : l.axes()) {
            List<Iter> on = all.stream().filter(it -> it.axis().equals(axis) && it.extent() > 1)
                    .sorted((a, b) -> Long.compare(Math.abs(a.stride()), Math.abs(b.stride()))).toList();
            long reach = 0;
            for (Iter it : on) {
                if (Math.abs(it.stride()) <= reach) {
                    if (l.size() <= Holdings.ELEMENT_LIMIT) {
                        Holdings.of(t);
                        return;
                    }
                    throw new AxeException(AxeException.Kind.INVALID, "distributed tensor " + t + ": cannot prove that"
                            + " no rank holds two elements at one local offset (the iters on axis " + axis
                            + " are not injective by their strides) and the layout has more than 2^26 elements to enumerate");
                }
                reach += (it.extent() - 1) * Math.abs(it.stride());
            }
        }
    }

    /**
     * The free-digit boxes of a cell inside the logical shape. Per dimension, its digits (outermost first, fixed
     * or free) form a mixed radix of the coordinate; {@code coordinate < logical extent} splits into at most one
     * box per free digit plus one.
     */
    private List<long[][]> clip(long[] fixed) {
        int f = freeDigits.length;
        long[] lo = new long[f];
        long[] ext = new long[f];
        for (int i = 0; i < f; i++) {
            ext[i] = ref.extent[freeDigits[i]];
        }
        boolean[] segmentedDim = new boolean[ref.logicalDims.length];
        for (int k = 0; k < ref.digits(); k++) {
            if (ref.isSegmented(k)) {
                // the segment's length, and the logical bound: its start plus the free digit after it
                int d = ref.dim[k];
                long start = ref.segStart[k][(int) fixed[k]];
                long len = Math.min(ref.segLength[k][(int) fixed[k]], ref.logicalDims[d] - start);
                if (len <= 0) {
                    return List.of();
                }
                ext[freeIndex(k + 1)] = len;
                segmentedDim[d] = true;
            }
        }
        List<long[][]> out = new ArrayList<>();
        out.add(new long[][] {lo, ext});
        for (int d = 0; d < ref.logicalDims.length; d++) {
            if (segmentedDim[d]) {
                continue;
            }
            List<Integer> digits = new ArrayList<>();
            long span = 1;
            for (int k = 0; k < ref.digits(); k++) {
                if (ref.dim[k] == d) {
                    digits.add(k);
                    span *= ref.extent[k];
                }
            }
            if (span <= ref.logicalDims[d]) {
                continue;
            }
            List<long[][]> next = new ArrayList<>();
            for (long[][] box : out) {
                limit(digits, 0, ref.logicalDims[d], box, fixed, next);
            }
            out = next;
            if (out.isEmpty()) {
                break;
            }
        }
        return out;
    }

    /** Boxes of {@code box} where the value of {@code digits[pos..]} is below {@code limit}. */
    private void limit(List<Integer> digits, int pos, long limit, long[][] box, long[] fixed, List<long[][]> out) {
        if (limit <= 0) {
            return;
        }
        long span = 1;
        for (int i = pos; i < digits.size(); i++) {
            span *= ref.extent[digits.get(i)];
        }
        if (limit >= span) {
            out.add(box);
            return;
        }
        int k = digits.get(pos);
        long w = ref.dimWeight[k];
        if (fixed[k] >= 0) {
            limit(digits, pos + 1, limit - fixed[k] * w, box, fixed, out);
            return;
        }
        int f = freeIndex(k);
        long q = limit / w;
        if (q > 0) {
            long[][] whole = {box[0].clone(), box[1].clone()};
            whole[1][f] = q;
            out.add(whole);
        }
        long[][] part = {box[0].clone(), box[1].clone()};
        part[0][f] = q;
        part[1][f] = 1;
        limit(digits, pos + 1, limit - q * w, part, fixed, out);
    }

    private int freeIndex(int digit) {
        for (int i = 0; i < freeDigits.length; i++) {
            if (freeDigits[i] == digit) {
                return i;
            }
        }
        throw new IllegalStateException("digit " + digit + " is not free");
    }

    /** The piece's box in layout l's buffer at a placement base; extent-1 digits are left out. */
    Box box(Piece p, int l, long base) {
        return strided(p, base, ref.stride[l]);
    }

    /** The piece's global box (logical row-major flat indices). */
    Box globalBox(Piece p) {
        return strided(p, p.cell().globalBase, ref.globalStride);
    }

    /** The piece packed compactly at {@code base} (a received or reduced buffer). */
    Box compact(Piece p, long base) {
        return Box.compact(base, kept(p.ext(), p.ext()));
    }

    private Box strided(Piece p, long base, long[] strides) {
        long b = base;
        long[] s = new long[freeDigits.length];
        for (int f = 0; f < freeDigits.length; f++) {
            b += p.lo()[f] * strides[freeDigits[f]];
            s[f] = strides[freeDigits[f]];
        }
        return new Box(b, kept(p.ext(), p.ext()), kept(p.ext(), s));
    }

    private static long[] kept(long[] ext, long[] values) {
        return java.util.stream.IntStream.range(0, ext.length).filter(i -> ext[i] > 1).mapToLong(i -> values[i]).toArray();
    }

    /** The piece cut into at most n parts along its outermost free digit of extent > 1 (nearly equal parts). */
    static List<Piece> split(Piece p, int n) {
        int f = 0;
        while (f < p.ext().length && p.ext()[f] == 1) {
            f++;
        }
        if (n <= 1 || f == p.ext().length) {
            return List.of(p);
        }
        long e = p.ext()[f];
        int parts = (int) Math.min(n, e);
        List<Piece> out = new ArrayList<>();
        long at = 0;
        for (int i = 0; i < parts; i++) {
            long len = e / parts + (i < e % parts ? 1 : 0);
            long[] lo = p.lo().clone();
            long[] ext = p.ext().clone();
            lo[f] += at;
            ext[f] = len;
            out.add(new Piece(p.cell(), lo, ext));
            at += len;
        }
        return out;
    }

    /** Per-dimension coordinate range {@code [lo, hi)} of a piece's elements. */
    long[][] coordinateRange(Piece p) {
        int rank = ref.logicalDims.length;
        long[] lo = p.cell().coordBase.clone();
        long[] hi = p.cell().coordBase.clone();
        for (int f = 0; f < freeDigits.length; f++) {
            int k = freeDigits[f];
            lo[ref.dim[k]] += p.lo()[f] * ref.dimWeight[k];
            hi[ref.dim[k]] += (p.lo()[f] + p.ext()[f] - 1) * ref.dimWeight[k];
        }
        for (int d = 0; d < rank; d++) {
            hi[d]++;
        }
        return new long[][] {lo, hi};
    }

    /** Every replica point plus the offset, as per-axis vectors (index 0 is m). */
    static List<long[]> replicaPoints(DistTensor t, MeshRanks ranks, int axisCount) {
        Layout l = t.layout();
        List<long[]> pts = new ArrayList<>();
        long[] base = new long[axisCount];
        for (var e : l.offset().entrySet()) {
            base[Refinement.axisIndex(e.getKey(), ranks, t)] += e.getValue();
        }
        pts.add(base);
        for (Iter it : l.replica()) {
            int a = Refinement.axisIndex(it.axis(), ranks, t);
            List<long[]> next = new ArrayList<>();
            for (long[] p : pts) {
                for (long i = 0; i < it.extent(); i++) {
                    long[] q = p.clone();
                    q[a] += i * it.stride();
                    next.add(q);
                }
            }
            pts = next;
            if (pts.size() > (1 << 20)) {
                throw new AxeException(AxeException.Kind.INVALID, "distributed tensor " + t + ": more than 2^20 replicas");
            }
        }
        return pts;
    }
}
