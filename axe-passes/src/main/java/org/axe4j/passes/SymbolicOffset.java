package org.axe4j.passes;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import org.axe4j.layout.Axis;
import org.axe4j.tvm.TvmObject;

/**
 * The symbolic part of a TVM layout's offset: per axis, a sum {@code c1*v1 + c2*v2 + ...} of integer
 * multiples of TIR variables or of integer TIR expressions that are not affine ({@code floormod(v, 4)}, as a
 * slice at a start the layout does not translate has); the integer part lives in the
 * {@link org.axe4j.layout.Layout}'s offset. A layout with a symbolic offset is a family of layouts, one per value
 * of the variables; every point of it is the integer layout's point plus {@link #on(Axis)}.
 *
 * <p>Terms keep the TVM expression they came from, so writing the layout back to TVM yields an offset over the
 * very same variables. Two terms are the same quantity when they hold the same TVM object or structurally equal
 * expressions (variables compared by identity).
 */
public record SymbolicOffset(SortedMap<Axis, List<Term>> terms) {
    /**
     * {@code coefficient * var}; {@code var} is a TIR variable or an integer expression that is not affine, and
     * {@code name} the variable's name or the expression's text in parentheses, for printing.
     */
    public record Term(long coefficient, String name, TvmObject var) {
        /** True for a bare variable ({@code ir.Var}, {@code ir.SizeVar}) rather than an expression. */
        public boolean isVariable() {
            return "ir.Var".equals(var.typeKey()) || "ir.SizeVar".equals(var.typeKey());
        }

        /** Same variable or structurally equal expression (free variables compared by identity). */
        public boolean sameQuantity(Term other) {
            if (var.sameObject(other.var)) {
                return true;
            }
            if (isVariable() || other.isVariable() || !name.equals(other.name)) {
                return false; // equal expressions print alike
            }
            return Boolean.TRUE.equals(org.axe4j.tvm.Tvm.call("ffi.StructuralEqual", var, other.var, false, false));
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Term t && t.coefficient == coefficient && t.sameQuantity(this);
        }

        @Override
        public int hashCode() {
            return Long.hashCode(coefficient) * 31 + name.hashCode();
        }

        @Override
        public String toString() {
            return coefficient == 1 ? name : coefficient == -1 ? "-" + name : coefficient + "*" + name;
        }
    }

    public static final SymbolicOffset NONE = new SymbolicOffset(new TreeMap<>());

    public SymbolicOffset {
        TreeMap<Axis, List<Term>> copy = new TreeMap<>();
        for (Map.Entry<Axis, List<Term>> e : terms.entrySet()) {
            List<Term> nonzero = new ArrayList<>();
            for (Term t : e.getValue()) {
                if (t.coefficient() != 0) {
                    nonzero.add(t);
                }
            }
            if (!nonzero.isEmpty()) {
                copy.put(e.getKey(), List.copyOf(nonzero));
            }
        }
        terms = Collections.unmodifiableSortedMap(copy);
    }

    public boolean isEmpty() {
        return terms.isEmpty();
    }

    /** The terms on {@code axis} (empty when the axis has none). */
    public List<Term> on(Axis axis) {
        return terms.getOrDefault(axis, List.of());
    }

    /** {@code " + (2*n + k)@laneid"} per axis, in the layout text's offset style. */
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        for (Map.Entry<Axis, List<Term>> e : terms.entrySet()) {
            sb.append(" + (");
            for (int i = 0; i < e.getValue().size(); i++) {
                String t = e.getValue().get(i).toString();
                sb.append(i == 0 ? t : t.startsWith("-") ? " - " + t.substring(1) : " + " + t);
            }
            sb.append(')');
            if (!e.getKey().equals(Axis.M)) {
                sb.append('@').append(e.getKey());
            }
        }
        return sb.toString();
    }
}
