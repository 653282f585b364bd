package org.axe4j.passes;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeMap;
import org.axe4j.layout.AxeException;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Checks;
import org.axe4j.layout.Equivalence;
import org.axe4j.layout.IndexForm;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Region;
import org.axe4j.layout.Result;
import org.axe4j.layout.Shape;
import org.axe4j.layout.Slice;
import org.axe4j.tvm.DataType;
import org.axe4j.tvm.Tvm;
import org.axe4j.tvm.TvmObject;

/**
 * {@code slice} at a symbolic start that the layout does not read as a translation ({@code S[(4,4):(1,4)]} over
 * {@code (16)} from {@code v}): the offset is the layout's digit formula at the start. With {@code f} the row-major
 * flat index of the shape, {@code b} a start and {@code y} a point of the box,
 * <pre>
 *   L(f(b) + f(y)) = body(y) + delta(f(b))      delta(x) = sum_k s_k * floormod(floordiv(x, B_k), e_k)
 * </pre>
 * ({@code delta} is {@link IndexForm}'s formula without the offset, the outermost digit without the mod). The
 * answer is {@code body} (the slice at one start {@code b*}, less {@code delta(f(b*))}) plus the PrimExpr
 * {@code delta(f(b))}, and it is right at every start exactly when {@code slice_b - delta(f(b))} is one map for
 * every start {@code b} the region admits: per dimension every {@code b_i} in {@code [0, S_i - w_i]} congruent to
 * the begin's integer part modulo the gcd {@code g_i} of its coefficients (each dimension on its own, an
 * expression term as a free integer). That is proven
 * <ul>
 *   <li>when the box is aligned: every {@code f(b)} is congruent modulo {@code G = gcd_i(R_i g_i)}; if some digit
 *       boundary {@code B_j} (a product of inner extents, an iter split where a divisor of its extent helps)
 *       divides {@code G} and {@code f(b) mod B_j + f(w - 1) < B_j}, the digits below {@code j} are those of
 *       {@code f(b) mod B_j + f(y)} and the digits from {@code j} up those of {@code f(b)}, at every start;</li>
 *   <li>otherwise by slicing at every start, up to {@link #MAX_STARTS} of them, and comparing the bodies
 *       ({@link Equivalence}).</li>
 * </ul>
 * Null where the slice at some admitted start has no layout; an error naming the region where the body changes
 * with the start or there are too many starts to check.
 */
final class DigitOffsetSlice {
    /** Most starts sliced one by one when the box is not aligned to the layout's digits. */
    static final long MAX_STARTS = 1024;

    private DigitOffsetSlice() {}

    static TirxLayout slice(TirxLayout l, Shape shape, List<SymbolicIndex.Entry> entries, String region,
            String notTranslation) {
        int n = shape.rank();
        long[] first = new long[n];
        long[] step = new long[n];
        long[] last = new long[n];
        long[] width = new long[n];
        long[] rowStride = new long[n];
        long flatConstant = 0;
        List<SymbolicOffset.Term> flatTerms = new ArrayList<>();
        long congruence = 0; // G = gcd_i(R_i g_i)
        VariableBounds bounds = new VariableBounds();
        long starts = 1;
        long r = 1;
        for (int i = n - 1; i >= 0; i--) {
            SymbolicIndex.Entry e = entries.get(i);
            long dim = shape.dims().get(i);
            width[i] = e.width();
            rowStride[i] = r;
            last[i] = dim - e.width();
            if (e.terms().isEmpty()) {
                if (e.begin() < 0 || e.begin() > last[i]) {
                    throw new IllegalArgumentException(region + ": region[" + i + "] begins at " + e.begin()
                            + ", outside [0, " + last[i] + "] (width " + e.width() + " of " + dim + ")");
                }
                first[i] = e.begin();
                last[i] = e.begin();
                step[i] = 1;
            } else {
                long g = 0;
                for (SymbolicOffset.Term t : e.terms()) {
                    g = Checks.gcd(g, t.coefficient());
                }
                step[i] = g;
                first[i] = Math.floorMod(e.begin(), g);
                if (first[i] > last[i]) {
                    throw new IllegalArgumentException(region + ": no value of the variables keeps region[" + i
                            + "] inside the shape: its begin is " + first[i] + " modulo " + g + ", past the last start "
                            + last[i] + " (width " + e.width() + " of " + dim + ")");
                }
                if (e.terms().size() == 1 && !bounds.bound(e.begin(), e.terms().get(0), last[i])) {
                    throw new IllegalArgumentException(region + ": no value of " + e.terms().get(0).name() + " keeps "
                            + "every region entry it begins inside the shape");
                }
                long values = (last[i] - first[i]) / g + 1;
                // counted up to MAX_STARTS + 1, past which only "too many" matters
                starts = values > MAX_STARTS ? MAX_STARTS + 1 : Math.min(MAX_STARTS + 1, starts * values);
                congruence = Checks.gcd(congruence, Checks.mul("the flat start of " + region, r, g));
            }
            final long rr = r;
            flatConstant = Checks.add("the flat start of " + region, flatConstant,
                    Checks.mul("the flat start of " + region, e.begin(), rr));
            for (SymbolicOffset.Term t : e.terms()) {
                add(flatTerms, Checks.mul("the flat start of " + region, t.coefficient(), rr), t);
            }
            r *= dim; // at most the size
        }
        Result<Layout> atFirst = Slice.trySlice(l.layout(), shape, box(first, width));
        if (atFirst.isEmpty()) {
            return null;
        }
        IndexForm form = IndexForm.of(l.layout());
        Layout body = lessDelta(atFirst.get(), form, flat(first, rowStride));
        long reach = 0; // f(w - 1): the last point of the box, flat
        for (int i = 0; i < n; i++) {
            reach += (width[i] - 1) * rowStride[i]; // below the size
        }
        if (!aligned(l.layout(), congruence, flat(first, rowStride), reach)) {
            if (starts > MAX_STARTS) {
                throw new AxeException(AxeException.Kind.NOT_REPRESENTABLE, region + " starts at a symbolic index that "
                        + l + " does not read as a translation (" + notTranslation + "), and the box is not aligned to its "
                        + "digits; the region admits more than " + MAX_STARTS + " starts, past what axe4j slices one by "
                        + "one to find a body common to every start");
            }
            long[] b = first.clone();
            do {
                Result<Layout> at = Slice.trySlice(l.layout(), shape, box(b, width));
                if (at.isEmpty()) {
                    return null;
                }
                Layout other = lessDelta(at.get(), form, flat(b, rowStride));
                if (!Equivalence.equivalent(body, other)) {
                    throw new AxeException(AxeException.Kind.NOT_REPRESENTABLE, region + " starts at a symbolic index "
                            + "that " + l + " does not read as a translation, and the slice's body changes with the start: "
                            + body + " at the start " + Arrays.toString(first) + ", " + other + " at "
                            + Arrays.toString(b) + "; no layout plus a symbolic offset is right at every value");
                }
            } while (next(b, first, step, last));
        }
        // The offset: delta at the symbolic flat start, integer parts into the layout's offset.
        TreeMap<Axis, Long> offset = new TreeMap<>(body.offset());
        TreeMap<Axis, List<SymbolicOffset.Term>> terms = new TreeMap<>();
        l.symbolic().terms().forEach((a, ts) -> terms.put(a, new ArrayList<>(ts)));
        DataType type = dataType(flatTerms, region);
        for (var e : form.digits().entrySet()) {
            for (IndexForm.Digit d : e.getValue()) {
                long c = digit(d, flatConstant, flatTerms, bounds, type, region,
                        terms.computeIfAbsent(e.getKey(), a -> new ArrayList<>()));
                offset.merge(e.getKey(), c, (x, y) -> Checks.add("the offset of the slice", x, y));
            }
        }
        return new TirxLayout(body.withOffset(offset), new SymbolicOffset(terms), l.swizzle(), l.composed());
    }

    /** The slice less {@code delta(x)}: its offset minus the digits of {@code x}. */
    static Layout lessDelta(Layout sliced, IndexForm form, long x) {
        TreeMap<Axis, Long> offset = new TreeMap<>(sliced.offset());
        form.digits().forEach((axis, digits) -> {
            for (IndexForm.Digit d : digits) {
                offset.merge(axis, -d.at(x), Long::sum);
            }
        });
        return sliced.withOffset(offset);
    }

    /**
     * Some digit boundary {@code B} divides {@code congruence} and the box from {@code x mod B} stays below it. The
     * boundaries are {@code B_k * q} for every divisor {@code q} of {@code e_k}: splitting {@code (e_k, s_k)} into
     * {@code (e_k/q, q*s_k), (q, s_k)} keeps the map and makes {@code B_k * q} a boundary.
     */
    static boolean aligned(Layout l, long congruence, long x, long reach) {
        long boundary = 1; // B_k, the product of the extents inside iter k
        for (int k = l.shard().size() - 1; k >= -1; k--) {
            long extent = k >= 0 ? l.shard().get(k).extent() : 1;
            if (congruence % boundary == 0) {
                long room = Checks.gcd(congruence / boundary, extent);
                for (long q : divisors(room)) {
                    long b = boundary * q; // at most the size
                    if (Math.floorMod(x, b) + reach < b) {
                        return true;
                    }
                }
            }
            boundary *= extent;
        }
        return false;
    }

    /** The divisors of {@code n} up to 2^20 and their cofactors (all of them for {@code n} below 2^40). */
    private static List<Long> divisors(long n) {
        List<Long> out = new ArrayList<>();
        for (long d = 1; d <= 1 << 20 && d * d <= n; d++) {
            if (n % d == 0) {
                out.add(d);
                out.add(n / d);
            }
        }
        return out;
    }

    /**
     * Adds {@code s * floormod(floordiv(x, B), e)} (the outermost without the mod) to {@code terms} and returns its
     * integer part, simplified by identities true at every integer value and by the variables' bounds:
     * <ul>
     *   <li>a factor {@code h} common to {@code B} and every coefficient of {@code x} cancels:
     *       {@code floordiv(h*m + k, h*B') = floordiv(m + floordiv(k, h), B')};</li>
     *   <li>whole multiples of {@code B'} leave the division: {@code floordiv(B'*a + r, B') = a + floordiv(r, B')},
     *       each coefficient and the constant split so; a remainder {@code r} that stays in one block of
     *       {@code B'} over the bounds is a constant quotient;</li>
     *   <li>{@code floormod(q, e)} of an affine {@code q}: coefficients and constant reduced modulo {@code e}; over
     *       the bounds in one block {@code [K e, K e + e)} it is {@code q - K e}; else a factor {@code g} of {@code e}
     *       and every coefficient comes out: {@code floormod(g*m + g*a + r, g*e') = g * floormod(m + a, e') + r}
     *       for the reduced constant {@code g*a + r}, {@code 0 <= r < g}.</li>
     * </ul>
     */
    private static long digit(IndexForm.Digit d, long constant, List<SymbolicOffset.Term> x, VariableBounds bounds,
            DataType type, String region, List<SymbolicOffset.Term> terms) {
        String what = "the offset of the slice of " + region;
        long h = common(d.divisor(), x);
        long qc = Math.floorDiv(constant, h);
        List<SymbolicOffset.Term> q = divided(x, h);
        long divisor = d.divisor() / h;
        if (divisor != 1) {
            List<SymbolicOffset.Term> whole = new ArrayList<>();
            List<SymbolicOffset.Term> rest = new ArrayList<>();
            for (SymbolicOffset.Term t : q) {
                whole.add(new SymbolicOffset.Term(Math.floorDiv(t.coefficient(), divisor), t.name(), t.var()));
                rest.add(new SymbolicOffset.Term(Math.floorMod(t.coefficient(), divisor), t.name(), t.var()));
            }
            whole.removeIf(t -> t.coefficient() == 0);
            rest.removeIf(t -> t.coefficient() == 0);
            long restConstant = Math.floorMod(qc, divisor);
            qc = Math.floorDiv(qc, divisor);
            long[] span = bounds.interval(restConstant, rest);
            if (span != null && Math.floorDiv(span[0], divisor) == Math.floorDiv(span[1], divisor)) {
                qc += Math.floorDiv(span[0], divisor); // the remainder stays in one block
            } else {
                TvmObject div = (TvmObject) Tvm.call("prim.FloorDiv", AffineExprs.write(restConstant, rest),
                        constant(type, divisor, region), IrLocation.none());
                if (!d.outermost() && whole.isEmpty() && qc == 0) {
                    long[] quotient = span == null ? null : new long[] {Math.floorDiv(span[0], divisor),
                            Math.floorDiv(span[1], divisor)};
                    boolean inRange = quotient != null && quotient[0] >= 0 && quotient[1] < d.extent();
                    add(terms, d.stride(), opaque(inRange ? div
                            : (TvmObject) Tvm.call("prim.FloorMod", div, constant(type, d.extent(), region),
                                    IrLocation.none())));
                    return 0;
                }
                if (!d.outermost()) { // floormod(whole + floordiv(rest, B'), e), whole
                    whole.add(opaque(div));
                    TvmObject mod = (TvmObject) Tvm.call("prim.FloorMod", AffineExprs.write(qc, whole),
                            constant(type, d.extent(), region), IrLocation.none());
                    add(terms, d.stride(), opaque(mod));
                    return 0;
                }
                whole.add(opaque(div));
            }
            q = whole;
        }
        if (d.outermost()) {
            for (SymbolicOffset.Term t : q) {
                add(terms, Checks.mul(what, d.stride(), t.coefficient()), t);
            }
            return Checks.mul(what, d.stride(), qc);
        }
        long e = d.extent();
        List<SymbolicOffset.Term> reduced = new ArrayList<>();
        for (SymbolicOffset.Term t : q) {
            if (Math.floorMod(t.coefficient(), e) != 0) {
                reduced.add(new SymbolicOffset.Term(Math.floorMod(t.coefficient(), e), t.name(), t.var()));
            }
        }
        long rc = Math.floorMod(qc, e);
        if (reduced.isEmpty()) {
            return Checks.mul(what, d.stride(), rc);
        }
        long[] span = bounds.interval(rc, reduced);
        if (span != null && Math.floorDiv(span[0], e) == Math.floorDiv(span[1], e)) {
            for (SymbolicOffset.Term t : reduced) { // floormod(q, e) = q - K e over the bounds
                add(terms, Checks.mul(what, d.stride(), t.coefficient()), t);
            }
            return Checks.mul(what, d.stride(), rc - Math.floorDiv(span[0], e) * e);
        }
        long g = common(e, reduced); // floormod(g*m + g*a + r, g*e') = g * floormod(m + a, e') + r, 0 <= r < g
        TvmObject mod = (TvmObject) Tvm.call("prim.FloorMod", AffineExprs.write(rc / g, divided(reduced, g)),
                constant(type, e / g, region), IrLocation.none());
        add(terms, Checks.mul(what, d.stride(), g), opaque(mod));
        return Checks.mul(what, d.stride(), rc % g);
    }

    /** gcd of {@code n} and every coefficient. */
    private static long common(long n, List<SymbolicOffset.Term> x) {
        long g = n;
        for (SymbolicOffset.Term t : x) {
            g = Checks.gcd(g, t.coefficient());
        }
        return g;
    }

    private static List<SymbolicOffset.Term> divided(List<SymbolicOffset.Term> x, long h) {
        List<SymbolicOffset.Term> out = new ArrayList<>();
        for (SymbolicOffset.Term t : x) {
            out.add(new SymbolicOffset.Term(t.coefficient() / h, t.name(), t.var()));
        }
        return out;
    }

    private static SymbolicOffset.Term opaque(TvmObject e) {
        return new SymbolicOffset.Term(1, "(" + e.repr() + ")", e);
    }

    /** Adds {@code coefficient * t.var} to {@code terms}, merged with a term of the same quantity. */
    private static void add(List<SymbolicOffset.Term> terms, long coefficient, SymbolicOffset.Term t) {
        for (int j = 0; j < terms.size(); j++) {
            SymbolicOffset.Term u = terms.get(j);
            if (u.sameQuantity(t)) {
                terms.set(j, new SymbolicOffset.Term(Checks.add("the offset of the slice", u.coefficient(), coefficient),
                        u.name(), u.var()));
                return;
            }
        }
        terms.add(new SymbolicOffset.Term(coefficient, t.name(), t.var()));
    }

    /** The one data type of the start's variables and expressions. */
    private static DataType dataType(List<SymbolicOffset.Term> terms, String region) {
        DataType type = null;
        for (SymbolicOffset.Term t : terms) {
            DataType own = (DataType) ((TvmObject) t.var().get("ty")).get("dtype");
            if (type != null && !type.equals(own)) {
                throw new IllegalArgumentException(region + ": the start mixes " + type + " and " + own + " (" + t.name()
                        + "); give every symbolic start one data type");
            }
            type = own;
        }
        return type == null ? DataType.INT32 : type;
    }

    /** An integer constant of the start's data type; one that does not fit is refused naming the region. */
    private static TvmObject constant(DataType type, long value, String region) {
        if (type.bits() < 64) {
            long max = (1L << (type.bits() - (type.code() == DataType.UINT ? 0 : 1))) - 1;
            if (value > max) {
                throw new IllegalArgumentException(region + ": the start is " + type + " and its offset needs the "
                        + "constant " + value + ", which does not fit it; give an int64 start");
            }
        }
        return (TvmObject) Tvm.call("ir.IntImm", type, value, IrLocation.none());
    }

    private static long flat(long[] b, long[] rowStride) {
        long x = 0;
        for (int i = 0; i < b.length; i++) {
            x += b[i] * rowStride[i]; // inside the shape
        }
        return x;
    }

    private static Region box(long[] b, long[] width) {
        long[][] pairs = new long[b.length][];
        for (int i = 0; i < b.length; i++) {
            pairs[i] = new long[] {b[i], b[i] + width[i]};
        }
        return Region.of(pairs);
    }

    /** The next start in row-major order; false past the last. */
    private static boolean next(long[] b, long[] first, long[] step, long[] last) {
        for (int i = b.length - 1; i >= 0; i--) {
            if (b[i] + step[i] <= last[i]) {
                b[i] += step[i];
                return true;
            }
            b[i] = first[i];
        }
        return false;
    }
}
