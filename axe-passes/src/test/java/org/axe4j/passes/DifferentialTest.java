package org.axe4j.passes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.function.Predicate;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Canonicalize;
import org.axe4j.layout.DirectSum;
import org.axe4j.layout.Group;
import org.axe4j.layout.Grouped;
import org.axe4j.layout.Iter;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Oracle;
import org.axe4j.layout.Point;
import org.axe4j.layout.Property;
import org.axe4j.layout.RandomLayouts;
import org.axe4j.layout.Region;
import org.axe4j.layout.Result;
import org.axe4j.layout.Shape;
import org.axe4j.layout.Slice;
import org.axe4j.layout.Tile;
import org.axe4j.layout.TileOf;
import org.axe4j.passes.DivergenceLedger.Example;
import org.axe4j.passes.DivergenceLedger.Outcome;
import org.axe4j.passes.TirxCalls.Answer;
import org.axe4j.passes.TirxCalls.GroupAnswer;
import org.axe4j.tvm.Tvm;
import org.axe4j.tvm.TvmObject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * Differential test of axe4j's layout algebra against TIRx's (the C++ {@code tirx.*} globals) on the same
 * seeded random operands ({@link Property#CASES} per operation), every answer of both sides checked by
 * enumeration ({@link Oracle}, {@link DifferentialCases}). Outcomes are counted in a {@link DivergenceLedger}:
 * agree, differ-by-design (both correct; the reason is named and explained), only-axe4j (TIRx refuses),
 * only-TIRx (TIRx answers correctly where axe4j refuses: the test fails) and TIRx-wrong (an upstream defect,
 * reported with its smallest reproduction). A wrong axe4j answer fails the test at once with the seed.
 * The table is printed at the end, and a run with the default seed and case count writes
 * {@code docs/divergences.md}.
 *
 * <p>The operations run concurrently (this class alone: {@code junit-platform.properties} keeps every other class
 * on one thread), so that this, the longest class of the module, does not leave the other test fork idle at the
 * end; each operation draws its own seeded cases and the ledger is synchronized, so the counts do not change.
 */
@Execution(ExecutionMode.CONCURRENT)
class DifferentialTest {
    private static final DivergenceLedger LEDGER = new DivergenceLedger();
    private static long startNanos;

    @BeforeAll
    static void load() {
        Tvm.load();
        startNanos = System.nanoTime();
    }

    @AfterAll
    static void report() throws Exception {
        double seconds = (System.nanoTime() - startNanos) / 1e9;
        System.out.print(LEDGER.consoleTable());
        System.out.printf("differential suite: %d cases per operation, base seed %d, %.1f s%n", Property.CASES,
                Property.BASE_SEED, seconds);
        String root = System.getProperty("axe4j.repo.root");
        boolean fullRun = Property.CASES == 10_000 && System.getProperty("axe4j.seed") == null && root != null;
        if (fullRun && Boolean.getBoolean("axe4j.write.divergences")) {   // `make divergences`; tests write nothing
            Path file = Path.of(root, "docs", "divergences.md");
            LEDGER.write(file, Property.BASE_SEED, Property.CASES);
            System.out.println("wrote " + file.normalize());
        }
    }

    // ---- apply ----------------------------------------------------------------------------------------

    /**
     * TIRx's {@code LayoutApplyLinear(L, x)} returns the base point {@code D(x) + O}: compared with that at every
     * index of layouts up to {@value #APPLY_SAMPLES} elements and at {@value #APPLY_SAMPLES} indices of larger ones.
     */
    @Test
    void apply() {
        Property.forAll("differential apply", r -> {
            Layout l = DifferentialCases.layout(r);
            List<TreeSet<Point>> table = Oracle.table(l);
            List<TreeSet<Point>> bases = Oracle.table(l.withReplica(List.of()));
            try (TvmObject t = TirxLayouts.toTvm(l)) {
                for (long x : sampledIndices(r, l.size())) {
                    Point required = bases.get((int) x).first();
                    Point ours = l.base(x);
                    assertEquals(required, ours, "axe4j base of " + l + " at " + x);
                    assertTrue(table.get((int) x).contains(ours), "axe4j base of " + l + " at " + x + " not in L(x)");
                    Answer<Point> theirs = TirxCalls.applyLinear(t, x);
                    if (!theirs.answered()) {
                        record("apply", Outcome.ONLY_AXE4J, theirs.refusal(), "TIRx raises where D(x)+O exists.",
                                example(l + " at " + x, theirs.shown(), ours.toString(),
                                        TirxCalls.python(l) + ".apply(" + x + ")", DifferentialCases.weight(l)));
                    } else if (theirs.value().equals(required)) {
                        LEDGER.record("apply", Outcome.AGREE);
                    } else {
                        record("apply", Outcome.TIRX_WRONG, "base point differs from D(x)+O",
                                "TIRx's apply returns a point other than D(x)+O.",
                                example(l + " at " + x, theirs.shown(), ours.toString(),
                                        TirxCalls.python(l) + ".apply(" + x + ")", DifferentialCases.weight(l)));
                    }
                }
            }
        });
    }

    /** Every index of a small layout; of a larger one the first, the last and random others, APPLY_SAMPLES in all. */
    private static long[] sampledIndices(Random r, long size) {
        if (size <= APPLY_SAMPLES) {
            return java.util.stream.LongStream.range(0, size).toArray();
        }
        long[] xs = new long[APPLY_SAMPLES];
        xs[0] = 0;
        xs[1] = size - 1;
        for (int i = 2; i < xs.length; i++) {
            xs[i] = (long) (r.nextDouble() * size);
        }
        return xs;
    }

    private static final int APPLY_SAMPLES = 32;

    // ---- canonicalize ---------------------------------------------------------------------------------

    @Test
    void canonicalize() {
        Property.forAll("differential canonicalize", r -> {
            Layout l = DifferentialCases.layout(r);
            List<TreeSet<Point>> required = Oracle.table(l);
            Layout ours = Canonicalize.canonicalize(l);
            compare("canonicalize", l.toString(), TirxCalls.python(l) + ".canonicalize()", DifferentialCases.weight(l),
                    Optional.of(ours), TirxCalls.canonicalize(l), c -> DifferentialCases.induces(c, required),
                    c -> DifferentialCases.firstDifference(c, required), theirs -> FormDifferences.reason(ours, theirs));
        });
    }

    // ---- span -----------------------------------------------------------------------------------------

    /** span_a: axe4j {@code max - min + 1} of the image on a; TIRx adds the offset on a (documented). */
    @Test
    void span() {
        Property.forAll("differential span", r -> {
            Layout l = DifferentialCases.layout(r);
            Map<Axis, Long> required = DifferentialCases.enumeratedSpan(l);
            try (TvmObject t = TirxLayouts.toTvm(l)) {
                for (Axis a : l.axes()) {
                    long ours = l.spanOn(a);
                    assertEquals(required.get(a), ours, "axe4j span on " + a + " of " + l);
                    Answer<Long> theirs = TirxCalls.span(t, a);
                    String input = l + " on " + a.name();
                    String python = TirxCalls.python(l) + ".span(\"" + a.name() + "\")";
                    long w = DifferentialCases.weight(l);
                    if (!theirs.answered()) {
                        record("span", Outcome.ONLY_AXE4J, theirs.refusal(), "TIRx raises on this layout and axis.",
                                example(input, theirs.shown(), "" + ours, python, w));
                        continue;
                    }
                    long v = theirs.value();
                    long offset = l.offsetOn(a);
                    if (v == ours) {
                        LEDGER.record("span", Outcome.AGREE);
                    } else if (v == ours + offset) {
                        record("span", Outcome.BY_DESIGN, offset > 0 ? "TIRx adds the offset" : "TIRx adds a negative offset",
                                offset > 0
                                        ? "TIRx's span on an axis is the extent of the image plus the offset on that "
                                        + "axis: the size of the range [0, max] that holds the image when every "
                                        + "stride is non-negative. axe4j's span (paper, Appendix C) is "
                                        + "max - min + 1 = 1 + sum (e-1)|s| over the iters on the axis, independent "
                                        + "of the offset, which is what tile scales the outer layout by."
                                        : "TIRx adds the offset on the axis to the extent of the image, also when "
                                        + "the offset is negative, so its span can be smaller than the image's "
                                        + "extent (or not positive). axe4j's span is max - min + 1, independent of "
                                        + "the offset.",
                                example(input, "" + v, "" + ours, python, w));
                    } else {
                        record("span", Outcome.TIRX_WRONG, spanDefect(l, a, v),
                                "TIRx's span is neither the extent of the image (max - min + 1) nor that plus the "
                                        + "offset: it sums (e-1)*s with the sign of each stride, so a negative "
                                        + "stride shrinks the span (down to zero or negative values) instead of "
                                        + "widening it. Tile, which scales the outer layout by the inner span, "
                                        + "inherits the error.",
                                example(input, "" + v, "" + ours + " (enumerated max - min + 1)", python, w));
                    }
                }
            }
        });
    }

    private static String spanDefect(Layout l, Axis a, long tirx) {
        long signed = 1 + l.offsetOn(a);
        for (List<Iter> part : List.of(l.shard(), l.replica())) {
            for (Iter it : part) {
                if (it.axis().equals(a)) {
                    signed += (it.extent() - 1) * it.stride();
                }
            }
        }
        return signed == tirx ? "negative strides counted with their sign" : "span differs otherwise";
    }

    // ---- group ----------------------------------------------------------------------------------------

    /** Group by a factorisation of the size; half the layouts are grouped by the shape by construction. */
    @Test
    void group() {
        Property.forAll("differential group", r -> {
            Layout l;
            Shape shape;
            if (r.nextBoolean()) {
                l = DifferentialCases.layout(r);
                shape = RandomLayouts.shapeOf(r, l.size(), 3);
            } else {
                shape = DifferentialCases.shape(r, 1 + r.nextInt(3), 64);
                l = DifferentialCases.grouped(r, shape);
            }
            Result<Grouped> ours = Group.tryGroup(l, shape);
            ours.ifPresent(g -> assertTrue(groupedCorrectly(l, shape, g.layout(), g.seps()),
                    () -> "axe4j group of " + l + " by " + shape + ": " + g));
            Answer<GroupAnswer> theirs = TirxCalls.group(l, shape);
            String input = l + " by " + shape;
            String python = TirxCalls.python(l) + ".group(" + TirxCalls.python(shape) + ")";
            long w = DifferentialCases.weight(l);
            String oursText = ours.map(g -> g.layout() + " seps " + g.seps()).orElse("refuses");
            if (!theirs.answered()) {
                if (ours.isPresent()) {
                    record("group", Outcome.ONLY_AXE4J, theirs.refusal(), FormDifferences.refusal(theirs.refusal()),
                            example(input, theirs.shown(), oursText, python, w));
                } else {
                    LEDGER.record("group", Outcome.AGREE);
                }
                return;
            }
            GroupAnswer g = theirs.value();
            if (ours.isPresent() && ours.get().layout().equals(g.layout()) && ours.get().seps().equals(g.seps())) {
                LEDGER.record("group", Outcome.AGREE); // the same answer as axe4j's, already checked
            } else if (!groupedCorrectly(l, shape, g.layout(), g.seps())) {
                record("group", Outcome.TIRX_WRONG, "grouped layout wrong",
                        "TIRx's grouped layout does not induce the map of the layout, or its blocks do not multiply "
                                + "to the shape.", example(input, theirs.shown(), oursText, python, w));
            } else if (ours.isEmpty()) {
                fail("group: TIRx answers correctly where axe4j refuses: " + input + " -> " + g);
            } else {
                String[] reason = ours.get().layout().equals(g.layout())
                        ? new String[] {"separators differ", "The same grouped layout, split at other separators."}
                        : FormDifferences.reason(ours.get().layout(), g.layout());
                record("group", Outcome.BY_DESIGN, reason[0], reason[1],
                        example(input, theirs.shown(), oursText, python, w));
            }
        });
    }

    /** Same map as {@code l}, and block k (between seps k and k+1) multiplies to dimension k. */
    static boolean groupedCorrectly(Layout l, Shape shape, Layout grouped, List<Integer> seps) {
        if (!Oracle.sameMap(l, grouped) || seps.size() != shape.rank() + 1 || seps.get(0) != 0
                || seps.get(shape.rank()) != grouped.shard().size()) {
            return false;
        }
        for (int k = 0; k < shape.rank(); k++) {
            long product = 1;
            for (int i = seps.get(k); i < seps.get(k + 1); i++) {
                product *= grouped.shard().get(i).extent();
            }
            if (product != shape.dim(k)) {
                return false;
            }
        }
        return true;
    }

    // ---- tile and direct sum --------------------------------------------------------------------------

    @Test
    void tile() {
        Property.forAll("differential tile", r -> {
            int rank = 1 + r.nextInt(3);
            Shape ta = DifferentialCases.shape(r, rank, 16);
            Shape tb = DifferentialCases.shape(r, rank, 16);
            Layout a = DifferentialCases.grouped(r, ta);
            Layout b = DifferentialCases.grouped(r, tb);
            List<TreeSet<Point>> required = DifferentialCases.interleavedMap(a, ta, b, tb,
                    DifferentialCases.enumeratedSpan(b));
            Layout ours = Tile.tile(a, ta, b, tb);
            String input = "tile(" + a + " by " + ta + ", " + b + " by " + tb + ")";
            String python = TirxCalls.python(b) + ".tile(" + TirxCalls.python(a) + ", " + TirxCalls.python(ta) + ", "
                    + TirxCalls.python(tb) + ")";
            compare("tile", input, python, DifferentialCases.weight(a, b), Optional.of(ours),
                    TirxCalls.tile(a, ta, b, tb), c -> DifferentialCases.induces(c, required),
                    c -> DifferentialCases.firstDifference(c, required), theirs -> FormDifferences.reason(ours, theirs),
                    theirs -> tileDefect(a, ta, b, tb, theirs));
        });
    }

    /** TIRx's tile, in words: what it computes instead of A (x) B. */
    static final String TIRX_TILE_CONVENTION = "TIRx's tile scales the outer shard only, and only on the axes of the "
            + "inner shard's iters of extent above 1, by its own span of the inner layout, 1 + sum (e-1)*s + O_a (strides with their "
            + "sign, inner offset counted); the outer replicas and offset are added unscaled. A (x) B scales the "
            + "whole outer image (shard, replicas, offset) on every axis by the extent of the inner image, "
            + "max - min + 1 = 1 + sum (e-1)|s| over the inner shard and replicas, so that tiles neither overlap "
            + "nor leave gaps. Every case of this kind was checked to be exactly A (x) B with the deviations named "
            + "(and with no single one of them, when two are named).";

    /** The kind of a wrong tile-like answer: the fewest deviations of TIRx's tile that explain it, or none. */
    static String[] tileKind(Optional<List<DifferentialCases.TileDeviation>> deviations, String unexplained) {
        if (deviations.isEmpty()) {
            return new String[] {"not explained by TIRx's tile", unexplained};
        }
        List<DifferentialCases.TileDeviation> d = deviations.get();
        String name = d.isEmpty() ? "three or more deviations at once"
                : String.join(" + ", d.stream().map(x -> x.words).toList());
        return new String[] {"TIRx's tile: " + name, TIRX_TILE_CONVENTION};
    }

    private static String[] tileDefect(Layout a, Shape ta, Layout b, Shape tb, Layout theirs) {
        return tileKind(DifferentialCases.tirxTileDeviations(a, ta, b, tb, Oracle.table(theirs)),
                "TIRx's tile does not induce A (x) B, nor TIRx's own tile convention applied to these operands.");
    }

    @Test
    void directSum() {
        Property.forAll("differential direct sum", r -> {
            int rank = 1 + r.nextInt(3);
            Shape ta = DifferentialCases.shape(r, rank, 16);
            Shape tb = DifferentialCases.shape(r, rank, 16);
            Layout a = DifferentialCases.grouped(r, ta);
            Layout b = DifferentialCases.grouped(r, tb);
            List<TreeSet<Point>> required = DifferentialCases.interleavedMap(a, ta, b, tb, Map.of());
            Layout ours = DirectSum.directSum(a, ta, b, tb);
            String input = "directSum(" + a + " by " + ta + ", " + b + " by " + tb + ")";
            String python = TirxCalls.python(b) + ".direct_sum(" + TirxCalls.python(a) + ", " + TirxCalls.python(ta)
                    + ", " + TirxCalls.python(tb) + ")";
            compare("direct-sum", input, python, DifferentialCases.weight(a, b), Optional.of(ours),
                    TirxCalls.directSum(a, ta, b, tb), c -> DifferentialCases.induces(c, required),
                    c -> DifferentialCases.firstDifference(c, required), theirs -> FormDifferences.reason(ours, theirs));
        });
    }

    private static final String FACTOR_UNEXPLAINED = "TIRx's factor does not rebuild the tiled layout, neither "
            + "as A (x) B nor under TIRx's own tile convention.";

    // ---- tile-of --------------------------------------------------------------------------------------

    /** A tiled layout, or (one case in four) a random layout of the same shape that is rarely one. */
    private record TileCase(Layout a, Shape ta, Layout b, Shape tb, Shape t, Layout l, boolean isTile) {}

    private static TileCase tileCase(Random r) {
        int rank = 1 + r.nextInt(3);
        Shape ta = DifferentialCases.shape(r, rank, 16);
        Shape tb = DifferentialCases.shape(r, rank, 16);
        Layout a = DifferentialCases.grouped(r, ta);
        Layout b = DifferentialCases.grouped(r, tb);
        Shape t = Tile.tiledShape(ta, tb);
        int form = r.nextInt(4);
        Layout l = switch (form) {
            case 0 -> DifferentialCases.grouped(r, t);
            case 1 -> Canonicalize.canonicalize(Tile.tile(a, ta, b, tb));
            default -> Tile.tile(a, ta, b, tb);
        };
        return new TileCase(a, ta, b, tb, t, l, form != 0);
    }

    /** Given the inner layout, find the outer: axe4j {@link TileOf#outer}, TIRx {@code inner.is_tile_inner}. */
    @Test
    void tileOuter() {
        Property.forAll("differential tile-outer", r -> {
            TileCase c = tileCase(r);
            List<TreeSet<Point>> tiled = Oracle.table(c.l());
            Map<Axis, Long> span = DifferentialCases.enumeratedSpan(c.b());
            Predicate<Layout> correct = x -> x.size() == c.ta().size()
                    && DifferentialCases.interleavedMatches(x, c.ta(), c.b(), c.tb(), span, tiled);
            Result<Layout> ours = TileOf.outer(c.l(), c.t(), c.b(), c.tb());
            assertTrue(ours.isPresent() || !c.isTile(), () -> "axe4j finds no outer layout of the tile " + c);
            String input = "outer of " + c.l() + " by " + c.t() + " over inner " + c.b() + " by " + c.tb();
            String python = TirxCalls.python(c.b()) + ".is_tile_inner(" + TirxCalls.python(c.l()) + ", "
                    + TirxCalls.python(c.t()) + ", " + TirxCalls.python(c.tb()) + ")";
            compare("tile-outer", input, python, DifferentialCases.weight(c.l(), c.b()), ours.toOptional(),
                    TirxCalls.outerOf(c.l(), c.t(), c.b(), c.tb()), correct,
                    x -> "A (x) B with this A differs from L", theirs -> FormDifferences.reason(ours.get(), theirs),
                    theirs -> tileKind(DifferentialCases.tirxTileDeviations(theirs, c.ta(), c.b(), c.tb(), tiled),
                            FACTOR_UNEXPLAINED));
        });
    }

    /** Given the outer layout, find the inner: axe4j {@link TileOf#inner}, TIRx {@code outer.is_tile_outer}. */
    @Test
    void tileInner() {
        Property.forAll("differential tile-inner", r -> {
            TileCase c = tileCase(r);
            List<TreeSet<Point>> tiled = Oracle.table(c.l());
            Predicate<Layout> correct = x -> x.size() == c.tb().size()
                    && DifferentialCases.interleavedMatches(c.a(), c.ta(), x, c.tb(), DifferentialCases.enumeratedSpan(x),
                    tiled);
            Result<Layout> ours = TileOf.inner(c.l(), c.t(), c.a(), c.ta());
            assertTrue(ours.isPresent() || !c.isTile(), () -> "axe4j finds no inner layout of the tile " + c);
            String input = "inner of " + c.l() + " by " + c.t() + " under outer " + c.a() + " by " + c.ta();
            String python = TirxCalls.python(c.a()) + ".is_tile_outer(" + TirxCalls.python(c.l()) + ", "
                    + TirxCalls.python(c.t()) + ", " + TirxCalls.python(c.ta()) + ")";
            compare("tile-inner", input, python, DifferentialCases.weight(c.l(), c.a()), ours.toOptional(),
                    TirxCalls.innerOf(c.l(), c.t(), c.a(), c.ta()), correct,
                    x -> "A (x) B with this B differs from L", theirs -> FormDifferences.reason(ours.get(), theirs),
                    theirs -> tileKind(DifferentialCases.tirxTileDeviations(c.a(), c.ta(), theirs, c.tb(), tiled),
                            FACTOR_UNEXPLAINED));
        });
    }

    // ---- slice ----------------------------------------------------------------------------------------

    @Test
    void slice() {
        Property.forAll("differential slice", r -> {
            Layout l;
            Shape shape;
            Optional<Region> box = Optional.empty();
            int family = r.nextInt(3);
            if (family == 0) {
                l = DifferentialCases.layout(r);
                shape = RandomLayouts.shapeOf(r, l.size(), 3);
            } else if (family == 1) {
                shape = DifferentialCases.shape(r, 1 + r.nextInt(3), 96);
                l = DifferentialCases.grouped(r, shape);
            } else { // a flat box that wraps the fastest digit once
                l = DifferentialCases.layout(r);
                shape = Shape.of(l.size());
                box = DifferentialCases.oneWrapRegion(r, l);
            }
            Region region = box.isPresent() ? box.get() : DifferentialCases.region(r, shape);
            List<TreeSet<Point>> required = DifferentialCases.sliceMap(l, shape, region);
            String input = l + " by " + shape + " on " + region;
            String python = TirxCalls.python(l) + ".slice(" + TirxCalls.python(shape) + ", "
                    + TirxCalls.python(region) + ")";
            Result<Layout> oursSlice = Slice.trySlice(l, shape, region);
            compare("slice", input, python, DifferentialCases.weight(l), oursSlice.toOptional(),
                    TirxCalls.slice(l, shape, region), c -> DifferentialCases.induces(c, required),
                    c -> DifferentialCases.firstDifference(c, required), theirs -> FormDifferences.reason(oursSlice.get(), theirs),
                    theirs -> sliceDefect(l, shape, region, theirs));
        });
    }

    private static String[] sliceDefect(Layout l, Shape shape, Region region, Layout theirs) {
        if (shape.rank() == 1 && carriesThroughSeveralDigits(l, region.begin(0), region.end(0))) {
            return new String[] {"carry through several digits",
                "The box crosses a carry that moves two or more slower digits at once (the index goes from "
                        + "(.., d, e'-1, e-1) to (.., d+1, 0, 0)). TIRx's slice writes the jump across the carry as "
                        + "s' - (e-1)*s (the next digit's stride minus the fastest digit's reach), which is right only "
                        + "when the carry stops at the next digit; axe4j reads the jump off the block, "
                        + "f(lo + n) - f(lo), so a rippling carry is exact. The slice TIRx returns maps part of the "
                        + "box to points outside L."};
        }
        return new String[] {"slice map differs", "TIRx's slice does not induce y -> L(begin + y) on the box."};
    }

    /** Whether some step x -> x+1 inside [begin, end) changes three or more digits (fastest included). */
    private static boolean carriesThroughSeveralDigits(Layout l, long begin, long end) {
        for (long x = begin; x + 1 < end; x++) {
            long[] a = l.digits(x);
            long[] b = l.digits(x + 1);
            int changed = 0;
            for (int k = 0; k < a.length; k++) {
                changed += a[k] != b[k] ? 1 : 0;
            }
            if (changed >= 3) {
                return true;
            }
        }
        return false;
    }

    // ---- comparison -----------------------------------------------------------------------------------

    private static void compare(String op, String input, String python, long weight, Optional<Layout> ours,
                                Answer<Layout> theirs, Predicate<Layout> correct, Function<Layout, String> difference,
                                Function<Layout, String[]> byDesign) {
        compare(op, input, python, weight, ours, theirs, correct, difference, byDesign,
                x -> new String[] {op + " answer wrong", "TIRx's " + op + " answer does not induce the required map."});
    }

    /**
     * The common verdict: axe4j's answer must be correct (else the test fails); TIRx's is checked by the same
     * predicate; then agree / by-design / only-axe4j / only-TIRx / TIRx-wrong as the ledger defines them.
     */
    private static void compare(String op, String input, String python, long weight, Optional<Layout> ours,
                                Answer<Layout> theirs, Predicate<Layout> correct, Function<Layout, String> difference,
                                Function<Layout, String[]> byDesign, Function<Layout, String[]> defect) {
        ours.ifPresent(o -> assertTrue(correct.test(o),
                () -> op + ": axe4j's answer " + o + " to " + input + " is wrong: " + difference.apply(o)));
        String oursText = ours.map(Layout::toString).orElse("refuses");
        if (!theirs.answered()) {
            if (ours.isPresent()) {
                record(op, Outcome.ONLY_AXE4J, theirs.refusal(), FormDifferences.refusal(theirs.refusal()),
                        example(input, theirs.shown(), oursText, python, weight));
            } else {
                LEDGER.record(op, Outcome.AGREE);
            }
            return;
        }
        Layout t = theirs.value();
        if (ours.isPresent() && ours.get().equals(t)) {
            LEDGER.record(op, Outcome.AGREE); // the same layout as axe4j's, already checked
            return;
        }
        if (!correct.test(t)) {
            String[] kind = defect.apply(t);
            String shown = LEDGER.wouldKeep(op, Outcome.TIRX_WRONG, kind[0], weight)
                    ? t + " (" + difference.apply(t) + ")" : t.toString();
            record(op, Outcome.TIRX_WRONG, kind[0], kind[1], example(input, shown, oursText, python, weight));
        } else if (ours.isEmpty()) {
            fail(op + ": TIRx answers correctly where axe4j refuses: " + input + " -> " + t);
        } else {
            String[] reason = byDesign.apply(t);
            record(op, Outcome.BY_DESIGN, reason[0], reason[1], example(input, t.toString(), oursText, python, weight));
        }
    }

    private static void record(String op, Outcome outcome, String reason, String explanation, Example example) {
        LEDGER.record(op, outcome, reason, explanation, example);
    }

    private static Example example(String input, String tirx, String axe4j, String python, long weight) {
        return new Example(input, tirx, axe4j, TirxCalls.PYTHON_PRELUDE + "print(" + python + ")", weight);
    }
}
