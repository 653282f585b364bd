package org.axe4j.passes;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import org.axe4j.layout.AxeException;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Checks;
import org.axe4j.layout.IndexForm;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Point;
import org.axe4j.layout.Region;
import org.axe4j.layout.Result;
import org.axe4j.layout.Shape;
import org.axe4j.layout.Slice;
import org.axe4j.layout.SwizzledLayout;
import org.axe4j.tvm.DataType;
import org.axe4j.tvm.Tvm;
import org.axe4j.tvm.TvmObject;

/**
 * {@code apply} at a symbolic index and {@code slice} at a symbolic region start, with TIR expressions
 * (PrimExprs) in and out, as TIRx answers them.
 * <ul>
 *   <li>apply: every point of L(x) with each coordinate the formula of {@link IndexForm},
 *       {@code O_a + r_a + sum s_k * floormod(floordiv(x, B_k), e_k)}, built in the index's data type; a
 *       coordinate of a shape flattens row-major first ({@code x = sum c_i * R_i}).</li>
 *   <li>slice: a start {@code beta_i + sigma_i} ({@code sigma_i} affine in TIR variables, the width an integer)
 *       is the integer slice at {@code beta} shifted by {@link IndexForm#startShift}: a symbolic offset
 *       {@code s_k * sigma / B_k} with {@code sigma = sum sigma_i R_i}. Where no iter reads the start as a
 *       translation, {@link DigitOffsetSlice} gives the offset as the digit formula at the start, when one body
 *       is right at every start value.</li>
 * </ul>
 * A swizzled layout ({@code swz o L}) keeps its swizzle after every offset: apply gives {@code swz} of the whole
 * address as an expression ({@link SwizzledAddress}), slice the body and symbolic offset under the swizzle.
 * What has no such form (a slice whose body changes with the start, a width that is not an integer) is refused with
 * an error naming the index or region entry.
 */
final class SymbolicIndex {
    private SymbolicIndex() {}

    /** True for a PrimExpr that is not an integer constant. */
    static boolean isSymbolic(Object value) {
        if (!(value instanceof TvmObject o) || "ir.IntImm".equals(o.typeKey())) {
            return false;
        }
        return o.fieldNames().contains("ty") && o.get("ty") instanceof TvmObject t && "ir.PrimType".equals(t.typeKey());
    }

    /** True when {@code x} (a flat index or a coordinate list) holds a symbolic index. */
    static boolean anySymbolic(Object x) {
        if (x instanceof List<?> list) {
            for (Object c : list) {
                if (isSymbolic(c)) {
                    return true;
                }
            }
            return false;
        }
        return isSymbolic(x);
    }

    private static DataType dtype(TvmObject expr) {
        return (DataType) ((TvmObject) expr.get("ty")).get("dtype");
    }

    // ---- apply ----------------------------------------------------------------------------

    /** Every point of L(x) at a symbolic flat index or coordinate, each {@code {axis: PrimExpr or integer}}. */
    static List<Object> apply(TirxLayout l, Object x, Object shapeArg) {
        if (l.composed() && new SwizzledLayout(l.swizzle(), l.layout()).isBare()) {
            return applyBare(l, x, shapeArg);
        }
        Flat flat = shapeArg == null ? new Flat(require(x, "x"), "x") : flatten(l, x, shapeArg);
        IndexForm form = IndexForm.of(l.layout());
        List<Object> out = new ArrayList<>();
        for (Point r : l.layout().replicaSet()) {
            Map<String, Object> coords = new LinkedHashMap<>();
            TreeSet<Axis> axes = new TreeSet<>(form.digits().keySet());
            axes.addAll(r.coords().keySet());
            axes.addAll(l.symbolic().terms().keySet());
            for (Axis a : axes) {
                if (l.composed() && a.equals(Axis.M)) {
                    coords.put(a.name(), swizzledAddress(l, flat, form, r));
                    continue;
                }
                Object sum = null;
                for (IndexForm.Digit d : form.digits().getOrDefault(a, List.of())) {
                    sum = add(sum, digit(flat, d));
                }
                long constant = Checks.add(() -> "the coordinate on " + a + " of " + l, l.layout().offsetOn(a), r.get(a));
                Object rest = AffineExprs.write(constant, l.symbolic().on(a));
                sum = sum == null ? rest : rest instanceof Long c ? (c == 0 ? sum : add(sum, constant(flat, c)))
                        : add(sum, sameType(flat, (TvmObject) rest, "the symbolic offset on " + a.name() + " of " + l));
                coords.put(a.name(), sum);
            }
            out.add(coords);
        }
        return out;
    }

    /**
     * The m coordinate of a swizzled layout at a symbolic index: {@code swz(D_m(x) + O_m + r_m + symbolic_m)}, the
     * swizzle after every offset; digits and terms that are multiples of the swizzle's period are added after it.
     */
    private static Object swizzledAddress(TirxLayout l, Flat flat, IndexForm form, Point r) {
        long period = l.swizzle().period();
        String what = "the address on m of " + l + " at " + flat.name() + " " + flat.expr().repr();
        List<SwizzledAddress.Part> parts = new ArrayList<>();
        for (IndexForm.Digit d : form.digits().getOrDefault(Axis.M, List.of())) {
            parts.add(new SwizzledAddress.Part(digit(flat, d), d.stride() % period == 0));
        }
        long c = Checks.add(() -> "the coordinate on m of " + l, l.layout().offsetOn(Axis.M), r.get(Axis.M));
        parts.add(new SwizzledAddress.Part(c == 0 ? null : constant(flat, c), c % period == 0));
        for (SymbolicOffset.Term t : l.symbolic().on(Axis.M)) {
            parts.add(new SwizzledAddress.Part(sameType(flat, (TvmObject) AffineExprs.write(0, List.of(t)),
                    "the symbolic offset on m of " + l), t.coefficient() % period == 0));
        }
        Object address = SwizzledAddress.of(l.swizzle(), parts, what);
        return address == null ? 0L : address;
    }

    /**
     * A bare swizzle (the swizzle of memory, any size) at a symbolic index: the flat index (of a coordinate: row-major
     * over the shape given) is the address, {@code swz(x + symbolic_m)}.
     */
    private static List<Object> applyBare(TirxLayout l, Object x, Object shapeArg) {
        TirxLayout over = l;
        if (shapeArg != null) {
            Shape shape = LayoutGlobals.shape(shapeArg, "shape");
            over = l.withLayout(new SwizzledLayout(l.swizzle(), l.layout()).over(shape).layout());
        }
        Flat flat = shapeArg == null ? new Flat(require(x, "x"), "x") : flatten(over, x, shapeArg);
        List<SwizzledAddress.Part> parts = new ArrayList<>();
        parts.add(new SwizzledAddress.Part(flat.expr(), false));
        for (SymbolicOffset.Term t : l.symbolic().on(Axis.M)) {
            parts.add(new SwizzledAddress.Part(sameType(flat, (TvmObject) AffineExprs.write(0, List.of(t)),
                    "the symbolic offset on m of " + l), t.coefficient() % l.swizzle().period() == 0));
        }
        Map<String, Object> coords = new LinkedHashMap<>();
        TreeSet<Axis> axes = new TreeSet<>(l.symbolic().terms().keySet());
        axes.add(Axis.M);
        for (Axis a : axes) {
            coords.put(a.name(), a.equals(Axis.M) ? SwizzledAddress.of(l.swizzle(), parts, "the address on m of " + l)
                    : sameType(flat, (TvmObject) AffineExprs.write(0, l.symbolic().on(a)),
                            "the symbolic offset on " + a.name() + " of " + l));
        }
        return List.of(coords);
    }

    /** A flat index as a PrimExpr, and what names it in errors. */
    private record Flat(TvmObject expr, String name) {}

    /** {@code sum c_i * R_i} over a coordinate of {@code shape}, integers and PrimExprs mixed. */
    private static Flat flatten(TirxLayout l, Object coordArg, Object shapeArg) {
        Shape shape = LayoutGlobals.shape(shapeArg, "shape");
        l.layout().requireAdmits(shape);
        if (!(coordArg instanceof List<?> coord) || coord.size() != shape.rank()) {
            throw new IllegalArgumentException("coord must be an array of " + shape.rank() + " indices (one per "
                    + "dimension of " + shape + "), got " + shown(coordArg));
        }
        TvmObject first = null;
        for (Object c : coord) {
            if (isSymbolic(c)) {
                first = (TvmObject) c;
                break;
            }
        }
        Flat typed = new Flat(first, "coord");
        Object sum = null;
        long stride = 1;
        for (int i = shape.rank() - 1; i >= 0; i--) {
            Object c = coord.get(i);
            String what = "coord[" + i + "]";
            Object term;
            if (isSymbolic(c)) {
                TvmObject e = sameType(typed, (TvmObject) c, what);
                term = stride == 1 ? e : mul(e, constant(new Flat(e, what), stride));
            } else {
                long v = TirxLayouts.integer(c, null, what);
                if (v < 0 || v >= shape.dims().get(i)) {
                    throw new IllegalArgumentException(what + " = " + v + " is outside [0, " + shape.dims().get(i)
                            + ") of shape " + shape);
                }
                long t = Checks.mul(what + " * " + stride, v, stride);
                term = t == 0 ? null : constant(typed, t);
            }
            sum = term == null ? sum : add(sum, term);
            stride *= shape.dims().get(i); // at most the size
        }
        return new Flat((TvmObject) (sum == null ? constant(typed, 0) : sum), "the coordinate " + shown(coordArg));
    }

    private static TvmObject require(Object x, String what) {
        if (!isSymbolic(x)) {
            throw new IllegalArgumentException(what + " must be an integer or a PrimExpr, got " + shown(x));
        }
        return (TvmObject) x;
    }

    /** {@code stride * floormod(floordiv(x, B), e)}, the outermost without the mod. */
    private static Object digit(Flat x, IndexForm.Digit d) {
        Object q = d.divisor() == 1 ? x.expr()
                : Tvm.call("prim.FloorDiv", x.expr(), constant(x, d.divisor()), IrLocation.none());
        Object t = d.outermost() ? q : Tvm.call("prim.FloorMod", q, constant(x, d.extent()), IrLocation.none());
        return d.stride() == 1 ? t : mul(t, constant(x, d.stride()));
    }

    /** An integer constant in the index's data type; one that does not fit it is refused naming the index. */
    private static Object constant(Flat x, long value) {
        DataType type = dtype(x.expr());
        if (type.code() != DataType.INT && type.code() != DataType.UINT || type.bits() > 64) {
            throw new IllegalArgumentException(x.name() + " " + x.expr().repr() + " has data type " + type
                    + "; a symbolic index must be an integer expression");
        }
        if (type.bits() < 64) {
            long min = type.code() == DataType.UINT ? 0 : -(1L << (type.bits() - 1));
            long max = type.code() == DataType.UINT ? (1L << type.bits()) - 1 : (1L << (type.bits() - 1)) - 1;
            if (value < min || value > max) {
                throw new IllegalArgumentException(x.name() + " " + x.expr().repr() + " is " + type + " and the "
                        + "layout needs the constant " + value + ", which does not fit it; give an int64 index");
            }
        }
        return Tvm.call("ir.IntImm", type, value, IrLocation.none());
    }

    private static TvmObject sameType(Flat x, TvmObject e, String what) {
        if (x.expr() != null && !dtype(x.expr()).equals(dtype(e))) {
            throw new IllegalArgumentException(what + " " + e.repr() + " is " + dtype(e) + " but " + x.name() + " "
                    + x.expr().repr() + " is " + dtype(x.expr()) + "; give every symbolic index one data type");
        }
        return e;
    }

    private static Object add(Object a, Object b) {
        return a == null ? b : Tvm.call("prim.Add", a, b, IrLocation.none());
    }

    private static Object mul(Object a, Object b) {
        return Tvm.call("prim.Mul", a, b, IrLocation.none());
    }

    // ---- slice ----------------------------------------------------------------------------

    /** One region entry: integer begin and width, and the symbolic part of the begin. */
    record Entry(long begin, long width, List<SymbolicOffset.Term> terms) {}

    /**
     * {@code slice(layout, shape, region)} where some region begin is a PrimExpr: the integer slice at the
     * begins' integer parts (moved into the shape where they lie outside it), shifted by a symbolic offset.
     * Null where the integer slice has no layout; an error naming the region where no iter reads the start linearly.
     */
    static TirxLayout slice(TirxLayout l, Shape shape, List<?> region) {
        if (region.size() != shape.rank()) {
            throw new IllegalArgumentException("region has " + region.size() + " entries for shape " + shape
                    + " of rank " + shape.rank());
        }
        if (l.composed()) {
            // (swz o L)(b + y) = swz(L(b + y)): slice the layout under the swizzle, which stays after every offset; a
            // bare swizzle is the identity over the shape
            l = l.withLayout(new SwizzledLayout(l.swizzle(), l.layout()).over(shape).layout());
        }
        List<Entry> entries = new ArrayList<>();
        for (int k = 0; k < region.size(); k++) {
            entries.add(entry(region.get(k), "region[" + k + "]"));
        }
        // Flat symbolic start: sigma = sum_i R_i * sigma_i, one coefficient per variable; the integer parts
        // moved into [0, S_i - w_i] join it as the coefficient of the constant 1.
        List<SymbolicOffset.Term> vars = new ArrayList<>();
        List<Long> coefficients = new ArrayList<>();
        long moved = 0;
        long[][] pairs = new long[shape.rank()][];
        long stride = 1;
        for (int i = shape.rank() - 1; i >= 0; i--) {
            Entry e = entries.get(i);
            long dim = shape.dims().get(i);
            if (e.width() < 0 || e.width() > dim) {
                throw new IllegalArgumentException("region[" + i + "] has width " + e.width() + ", outside [0, " + dim
                        + "] of shape " + shape);
            }
            long begin = Math.max(0, Math.min(e.begin(), dim - e.width()));
            pairs[i] = new long[] {begin, begin + e.width()};
            final int at = i;
            final long r = stride;
            moved = Checks.add(() -> "the flat start of region", moved,
                    Checks.mul(() -> "the flat start of region[" + at + "]", e.begin() - begin, r));
            for (SymbolicOffset.Term t : e.terms()) {
                long c = Checks.mul(() -> "the flat start of region[" + at + "]", t.coefficient(), r);
                int j = indexOf(vars, t);
                if (j < 0) {
                    vars.add(t);
                    coefficients.add(c);
                } else {
                    coefficients.set(j, Checks.add("the flat start of region", coefficients.get(j), c));
                }
            }
            stride *= dim;
        }
        long[] all = new long[coefficients.size() + 1];
        for (int j = 0; j < coefficients.size(); j++) {
            all[j] = coefficients.get(j);
        }
        all[coefficients.size()] = moved;
        boolean symbolic = false;
        for (long c : coefficients) {
            symbolic |= c != 0;
        }
        Result<IndexForm.Shift> shift = IndexForm.startShift(l.layout(), all);
        if (shift.isEmpty()) {
            // Not a translation: the offset is the digit formula at the symbolic start, where one body fits all.
            return DigitOffsetSlice.slice(l, shape, entries, "region " + shownRegion(region) + " of shape " + shape,
                    shift.reason());
        }
        IndexForm.Shift s = shift.get();
        Result<Layout> sliced = Slice.trySlice(l.layout(), shape, Region.of(pairs));
        if (sliced.isEmpty()) {
            return null;
        }
        // The shift: s_k * (sigma / B_k) on axis a_k, the constant part into the integer offset.
        TreeMap<Axis, Long> offset = new TreeMap<>(sliced.get().offset());
        offset.merge(s.axis(), s.coefficient(moved), (a, b) -> Checks.add("the offset of the slice", a, b));
        Layout body = sliced.get().withOffset(offset);
        TreeMap<Axis, List<SymbolicOffset.Term>> terms = new TreeMap<>();
        l.symbolic().terms().forEach((a, ts) -> terms.put(a, new ArrayList<>(ts)));
        List<SymbolicOffset.Term> on = terms.computeIfAbsent(s.axis(), a -> new ArrayList<>());
        for (int j = 0; j < vars.size(); j++) {
            SymbolicOffset.Term v = vars.get(j);
            long c = s.coefficient(coefficients.get(j));
            int at = indexOf(on, v);
            if (at < 0) {
                on.add(new SymbolicOffset.Term(c, v.name(), v.var()));
            } else {
                on.set(at, new SymbolicOffset.Term(Checks.add("the offset of the slice", on.get(at).coefficient(), c),
                        v.name(), v.var()));
            }
        }
        return new TirxLayout(body, new SymbolicOffset(terms), l.swizzle(), l.composed());
    }

    /** True when some region begin or end is symbolic. */
    static boolean anySymbolicRegion(Object region) {
        if (!(region instanceof List<?> list)) {
            return false;
        }
        for (Object item : list) {
            if (item instanceof TvmObject r && "ir.Range".equals(r.typeKey())
                    && (isSymbolic(TirxLayouts.rangeBegin(r)) || isSymbolic(r.get("extent")))) {
                return true;
            }
            if (item instanceof List<?> pair && pair.stream().anyMatch(SymbolicIndex::isSymbolic)) {
                return true;
            }
        }
        return false;
    }

    private static Entry entry(Object item, String what) {
        AffineExprs.Affine begin;
        long width;
        if (item instanceof TvmObject r && "ir.Range".equals(r.typeKey())) {
            begin = AffineExprs.read(TirxLayouts.rangeBegin(r), what + ".min");
            width = integerWidth(AffineExprs.read(r.get("extent"), what + ".extent"), new AffineExprs.Affine(0, List.of()), what);
        } else if (item instanceof List<?> pair && pair.size() == 2) {
            begin = AffineExprs.read(pair.get(0), what + " begin");
            width = integerWidth(AffineExprs.read(pair.get(1), what + " end"), begin, what);
        } else {
            throw new IllegalArgumentException(what + " must be an ir.Range or a [begin, end] pair, got " + shown(item));
        }
        return new Entry(begin.constant(), width, begin.terms());
    }

    /** {@code end - begin}, which must be an integer: the variables cancel. */
    private static long integerWidth(AffineExprs.Affine end, AffineExprs.Affine begin, String what) {
        List<SymbolicOffset.Term> rest = new ArrayList<>(end.terms());
        for (SymbolicOffset.Term t : begin.terms()) {
            int j = indexOf(rest, t);
            long c = j < 0 ? -t.coefficient() : rest.get(j).coefficient() - t.coefficient();
            if (j < 0) {
                rest.add(new SymbolicOffset.Term(c, t.name(), t.var()));
            } else {
                rest.set(j, new SymbolicOffset.Term(c, t.name(), t.var()));
            }
        }
        rest.removeIf(t -> t.coefficient() == 0);
        if (!rest.isEmpty()) {
            throw new AxeException(AxeException.Kind.NOT_REPRESENTABLE, what + " has a symbolic width: end - begin "
                    + "keeps the terms " + rest + "; axe4j slices boxes of integer widths");
        }
        return Checks.sub(what + " width (end - begin)", end.constant(), begin.constant());
    }

    private static int indexOf(List<SymbolicOffset.Term> terms, SymbolicOffset.Term t) {
        for (int j = 0; j < terms.size(); j++) {
            if (terms.get(j).sameQuantity(t)) {
                return j;
            }
        }
        return -1;
    }

    private static String shownRegion(List<?> region) {
        List<String> parts = new ArrayList<>();
        for (Object item : region) {
            if (item instanceof TvmObject r && "ir.Range".equals(r.typeKey())) {
                parts.add(shown(TirxLayouts.rangeBegin(r)) + ":+" + shown(r.get("extent")));
            } else if (item instanceof List<?> p && p.size() == 2) {
                parts.add(shown(p.get(0)) + ":" + shown(p.get(1)));
            } else {
                parts.add(shown(item));
            }
        }
        return "[" + String.join(", ", parts) + "]";
    }

    static String shown(Object value) {
        if (value instanceof TvmObject o) {
            return o.repr();
        }
        if (value instanceof List<?> list) {
            List<String> parts = new ArrayList<>();
            list.forEach(v -> parts.add(shown(v)));
            return "[" + String.join(", ", parts) + "]";
        }
        return String.valueOf(value);
    }
}
