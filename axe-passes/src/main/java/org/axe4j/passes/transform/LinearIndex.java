package org.axe4j.passes.transform;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.axe4j.tvm.TvmObject;

/**
 * An index expression of a TIR region or shape as {@code constant + sum(coefficient * variable)}, read from the TIR
 * (integer constants, variables, +, -, multiplication by a constant, casts), so that a bound against a symbolic
 * extent can be decided when the variables cancel: {@code n + 1} reaches past an extent {@code n} by 1 whatever n is.
 * Anything else (division, min, loads) is not linear: {@link #of} returns null and the bound is not decided.
 */
record LinearIndex(long constant, Map<String, Long> terms) {

    LinearIndex {
        terms = Map.copyOf(terms);
    }

    static LinearIndex constant(long c) {
        return new LinearIndex(c, Map.of());
    }

    /** The expression as a linear index, or null when it is not one. */
    static LinearIndex of(Object e) {
        Long c = TirFunction.constant(e);
        if (c != null) {
            return constant(c);
        }
        if (!(e instanceof TvmObject o)) {
            return null;
        }
        String key = o.typeKey();   // TVM 0.27: ir.Var / ir.SizeVar, prim.Add, prim.Sub, prim.Mul, prim.Cast
        if (key.equals("ir.Var") || key.equals("ir.SizeVar") || o.typeAncestors().contains("ir.Var")) {
            // keyed by the object (a name may be empty or shared): "name#handle"
            return new LinearIndex(0, Map.of(o.get("name") + "#" + Long.toHexString(o.handle()), 1L));
        }
        if (key.endsWith(".Cast")) {
            return of(o.get("value"));
        }
        boolean add = key.endsWith(".Add");
        boolean sub = key.endsWith(".Sub");
        boolean mul = key.endsWith(".Mul");
        if (!add && !sub && !mul) {
            return null;
        }
        LinearIndex a = of(o.get("a"));
        LinearIndex b = of(o.get("b"));
        if (a == null || b == null) {
            return null;
        }
        if (add) {
            return a.plus(b, 1);
        }
        if (sub) {
            return a.plus(b, -1);
        }
        if (a.terms.isEmpty()) {
            return b.times(a.constant);
        }
        return b.terms.isEmpty() ? a.times(b.constant) : null;
    }

    LinearIndex plus(LinearIndex other, long sign) {
        Map<String, Long> sum = new TreeMap<>(terms);
        other.terms.forEach((v, k) -> sum.merge(v, sign * k, Long::sum));
        sum.values().removeIf(k -> k == 0);
        return new LinearIndex(Math.addExact(constant, Math.multiplyExact(sign, other.constant)), sum);
    }

    LinearIndex times(long k) {
        Map<String, Long> scaled = new TreeMap<>();
        terms.forEach((v, c) -> scaled.put(v, Math.multiplyExact(c, k)));
        scaled.values().removeIf(c -> c == 0);
        return new LinearIndex(Math.multiplyExact(constant, k), scaled);
    }

    /** A variable's name for messages ("n"), or "var" for an unnamed one. */
    private static String display(String key) {
        String name = key.substring(0, key.lastIndexOf('#'));
        return name.isEmpty() ? "var" : name;
    }

    boolean isConstant() {
        return terms.isEmpty();
    }

    @Override
    public String toString() {
        StringBuilder s = new StringBuilder();
        terms.forEach((v, k) -> s.append(s.length() == 0 ? "" : " + ").append(k == 1 ? "" : k + "*")
                .append(display(v)));
        if (constant != 0 || s.length() == 0) {
            s.append(s.length() == 0 ? "" : constant < 0 ? " - " : " + ").append(s.length() == 0 ? constant
                    : Math.abs(constant));
        }
        return s.toString();
    }

    static List<LinearIndex> all(List<?> exprs) {
        return exprs.stream().map(LinearIndex::of).toList();
    }
}
