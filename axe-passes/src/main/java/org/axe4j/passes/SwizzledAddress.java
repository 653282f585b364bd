package org.axe4j.passes;

import java.util.ArrayList;
import java.util.List;
import org.axe4j.layout.AxeException;
import org.axe4j.layout.Swizzle;
import org.axe4j.tvm.DataType;
import org.axe4j.tvm.Tvm;
import org.axe4j.tvm.TvmObject;

/**
 * A swizzle of an address that is a TIR expression: {@code swz(a)} with every offset inside, symbolic or not, as a
 * {@code ComposeLayout} means ({@code swz(L(x) + O)}). The swizzle reads and writes no bit at or above its period
 * {@code P}, so a part {@code o} of the address that is a multiple of {@code P} passes through:
 * {@code swz(a + o) = swz(a) + o}. The rest is swizzled as an expression of the whole remaining address:
 * <pre>
 *   S &gt; 0:  a ^ ((a &gt;&gt; S) &amp; mask)        S &lt; 0:  a ^ ((a &amp; mask) &lt;&lt; |S|)        mask = (2^B - 1) &lt;&lt; M
 * </pre>
 * (arithmetic shifts, so negative addresses swizzle as {@link Swizzle#apply} does).
 */
final class SwizzledAddress {
    private SwizzledAddress() {}

    /** One part of an address: a PrimExpr and whether it is a multiple of the swizzle's period. */
    record Part(Object expr, boolean periodic) {}

    /**
     * {@code swz(constant + sum terms)}: a Long when every term is a multiple of the period and there are none left
     * inside, else a PrimExpr in the terms' data type. {@code what} names the address in errors.
     */
    static Object of(Swizzle swz, long constant, List<SymbolicOffset.Term> terms, String what) {
        if (swz.isIdentity()) {
            return AffineExprs.write(constant, terms);
        }
        List<SymbolicOffset.Term> inside = new ArrayList<>();
        List<SymbolicOffset.Term> outside = new ArrayList<>();
        for (SymbolicOffset.Term t : terms) {
            (t.coefficient() % swz.period() == 0 ? outside : inside).add(t);
        }
        if (inside.isEmpty()) {
            return AffineExprs.write(swz.apply(constant), outside);
        }
        Object swizzled = expression(swz, (TvmObject) AffineExprs.write(constant, inside), what);
        Object rest = AffineExprs.write(0, outside);
        return rest instanceof Long ? swizzled : Tvm.call("prim.Add", swizzled, rest, null);
    }

    /**
     * {@code swz(sum parts)}: the periodic parts added after the swizzle, the others swizzled together. Every part is a
     * PrimExpr of one integer data type; null parts are skipped.
     */
    static Object of(Swizzle swz, List<Part> parts, String what) {
        Object inside = null;
        Object outside = null;
        for (Part p : parts) {
            if (p.expr() == null) {
                continue;
            }
            if (p.periodic() || swz.isIdentity()) {
                outside = outside == null ? p.expr() : Tvm.call("prim.Add", outside, p.expr(), null);
            } else {
                inside = inside == null ? p.expr() : Tvm.call("prim.Add", inside, p.expr(), null);
            }
        }
        Object swizzled = inside == null ? null : expression(swz, (TvmObject) inside, what);
        if (swizzled == null) {
            return outside;
        }
        return outside == null ? swizzled : Tvm.call("prim.Add", swizzled, outside, null);
    }

    /** {@code swz(a)} for an integer PrimExpr {@code a}, by the formula of the class comment. */
    static Object expression(Swizzle swz, TvmObject a, String what) {
        DataType type = (DataType) ((TvmObject) a.get("ty")).get("dtype");
        long mask = ((1L << swz.bits()) - 1) << swz.base();
        Object m = constant(type, mask, swz, what);
        Object moved = swz.shift() >= 0
                ? Tvm.call("prim.bitwise_and", Tvm.call("prim.right_shift", a, constant(type, swz.shift(), swz, what),
                        null), m, null)
                : Tvm.call("prim.left_shift", Tvm.call("prim.bitwise_and", a, m, null),
                        constant(type, -swz.shift(), swz, what), null);
        return Tvm.call("prim.bitwise_xor", a, moved, null);
    }

    private static Object constant(DataType type, long value, Swizzle swz, String what) {
        if (type.code() != DataType.INT && type.code() != DataType.UINT || type.bits() > 64) {
            throw new IllegalArgumentException(what + " has data type " + type + "; " + swz
                    + " swizzles integer addresses");
        }
        if (type.bits() < 64 && value >= 1L << (type.bits() - (type.code() == DataType.INT ? 1 : 0))) {
            throw new AxeException(AxeException.Kind.NOT_REPRESENTABLE, what + " is " + type + " and " + swz
                    + " needs the constant " + value + ", which does not fit it; give int64 indices or offsets");
        }
        return Tvm.call("ir.IntImm", type, value, null);
    }
}
