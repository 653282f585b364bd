package org.axe4j.passes;

import java.util.ArrayList;
import java.util.List;
import org.axe4j.layout.AxeException;
import org.axe4j.layout.Checks;
import org.axe4j.tvm.DataType;
import org.axe4j.tvm.Tvm;
import org.axe4j.tvm.TvmObject;

/**
 * TIR expressions {@code c + a1*v1 + ... + ak*vk} (integer constants, variables, +, -, and * by a constant), read
 * from and written to TVM's {@code PrimExpr} nodes. An integer sub-expression that is not affine (division, mod,
 * min, a product of two variables, ...) is kept whole as one term, {@code a * (v % 4)}: its value is an integer at
 * every value of the variables, which is all the offset algebra needs. Anything that is not an integer expression
 * is refused.
 */
final class AffineExprs {
    /** {@code constant + sum(terms)}, one term per variable, none with coefficient 0. */
    record Affine(long constant, List<SymbolicOffset.Term> terms) {}

    private AffineExprs() {}

    /** Reads an {@code int}/{@code ir.IntImm}/affine {@code PrimExpr}; {@code what} names it in errors. */
    static Affine read(Object expr, String what) {
        List<SymbolicOffset.Term> terms = new ArrayList<>();
        long constant = collect(expr, 1, terms, what);
        // n*2 - n: one term per variable, zero coefficients dropped.
        List<SymbolicOffset.Term> merged = new ArrayList<>();
        for (SymbolicOffset.Term t : terms) {
            int at = -1;
            for (int i = 0; i < merged.size(); i++) {
                if (merged.get(i).sameQuantity(t)) {
                    at = i;
                }
            }
            if (at < 0) {
                merged.add(t);
            } else {
                SymbolicOffset.Term m = merged.get(at);
                merged.set(at, new SymbolicOffset.Term(Checks.add(what, m.coefficient(), t.coefficient()), m.name(), m.var()));
            }
        }
        merged.removeIf(t -> t.coefficient() == 0);
        return new Affine(constant, List.copyOf(merged));
    }

    /** Adds {@code scale * expr}'s terms to {@code terms} and returns its constant part times {@code scale}. */
    private static long collect(Object expr, long scale, List<SymbolicOffset.Term> terms, String what) {
        if (expr instanceof Long v) {
            return Checks.mul(what, scale, v);
        }
        if (!(expr instanceof TvmObject o)) {
            throw notAffine(expr, what);
        }
        switch (o.typeKey()) {
            case "ir.IntImm":
                return Checks.mul(what, scale, (Long) o.get("value"));
            case "ir.Var":
            case "ir.SizeVar":
                terms.add(new SymbolicOffset.Term(scale, (String) o.get("name"), o.share()));
                return 0;
            case "prim.Add":
                return Checks.add(what, collect(o.get("a"), scale, terms, what), collect(o.get("b"), scale, terms, what));
            case "prim.Sub":
                return Checks.add(what, collect(o.get("a"), scale, terms, what),
                        collect(o.get("b"), Checks.mul(what, scale, -1), terms, what));
            case "prim.Mul": {
                Object a = o.get("a");
                Object b = o.get("b");
                Long ca = constantOf(a);
                Long cb = constantOf(b);
                if (cb != null) {
                    return collect(a, Checks.mul(what, scale, cb), terms, what);
                }
                if (ca != null) {
                    return collect(b, Checks.mul(what, scale, ca), terms, what);
                }
                throw notAffine(expr, what);
            }
            default:
                if (isIntegerExpr(o)) { // floordiv(v, 4), v % 4, min(a, b): one opaque term
                    terms.add(new SymbolicOffset.Term(scale, "(" + o.repr() + ")", o.share()));
                    return 0;
                }
                throw notAffine(expr, what);
        }
    }

    /** A PrimExpr of an integer data type. */
    private static boolean isIntegerExpr(TvmObject o) {
        if (!o.fieldNames().contains("ty") || !(o.get("ty") instanceof TvmObject t) || !"ir.PrimType".equals(t.typeKey())) {
            return false;
        }
        DataType type = (DataType) t.get("dtype");
        return (type.code() == DataType.INT || type.code() == DataType.UINT) && type.lanes() == 1;
    }

    private static Long constantOf(Object e) {
        if (e instanceof Long v) {
            return v;
        }
        if (e instanceof TvmObject o && "ir.IntImm".equals(o.typeKey())) {
            return (Long) o.get("value");
        }
        return null;
    }

    private static AxeException notAffine(Object expr, String what) {
        String shown = expr instanceof TvmObject o ? o.repr() + " (" + o.typeKey() + ")" : String.valueOf(expr);
        return new AxeException(AxeException.Kind.NOT_REPRESENTABLE, "the " + what + " is " + shown
                + ", not an integer expression");
    }

    /**
     * {@code constant + sum(terms)} as a TVM {@code PrimExpr} in the variables' data type (int32 when there
     * are none): a plain Long when there are no terms.
     */
    static Object write(long constant, List<SymbolicOffset.Term> terms) {
        if (terms.isEmpty()) {
            return constant;
        }
        // An ir.Var's type is its `ty` field, an ir.PrimType holding the dtype.
        DataType type = (DataType) ((TvmObject) terms.get(0).var().get("ty")).get("dtype");
        Object sum = null;
        for (SymbolicOffset.Term t : terms) {
            Object term = t.coefficient() == 1 ? t.var() : Tvm.call("prim.Mul", t.var(),
                    Tvm.call("ir.IntImm", type, t.coefficient(), IrLocation.none()), IrLocation.none());
            sum = sum == null ? term : Tvm.call("prim.Add", sum, term, IrLocation.none());
        }
        return constant == 0 ? sum : Tvm.call("prim.Add", sum,
                Tvm.call("ir.IntImm", type, constant, IrLocation.none()), IrLocation.none());
    }
}
