package org.axe4j.passes.transform;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.axe4j.tvm.GlobalsProvider;
import org.axe4j.tvm.PackedFunction;
import org.axe4j.tvm.Tvm;
import org.axe4j.tvm.TvmException;
import org.axe4j.tvm.TvmFunction;
import org.axe4j.tvm.TvmObject;

/**
 * The layout passes as TVM globals ({@code axe4j.passes.*}). Pass constructors return TVM
 * {@code tirx.PrimFuncPass} objects built by {@code tirx.transform.CreatePrimFuncPass} around a Java packed
 * function {@code (func, mod, ctx) -> func}, so they run in any TVM pipeline ({@code tvm.transform.Sequential},
 * a module called from Java or Python):
 * <ul>
 *   <li>{@code VerifyLayouts(target)}: raises a ValueError listing every violation, else returns the function</li>
 *   <li>{@code CanonicalizeLayouts()}: every layout in canonical form</li>
 *   <li>{@code InferLayouts(target)}: layouts for buffers allocated without one; the explanations are stored in
 *       the function attribute {@code axe4j.layout_choices}</li>
 *   <li>{@code AllocateBySpan()}: on-chip allocations sized by their layout's span ({@link AllocateBySpan})</li>
 * </ul>
 * {@code target} is a TVM Target, a kind name, or None; None uses the function's {@code target} attribute when
 * present. Without passes: {@code verify(func, target)} returns the diagnostic texts, {@code infer(func, target)}
 * returns {@code [func, notes]}, {@code canonicalize(func)} and {@code allocate_by_span(func)} return the function.
 */
public final class PassGlobals implements GlobalsProvider {
    public static final String PREFIX = "axe4j.passes.";
    public static final String CHOICES_ATTR = "axe4j.layout_choices";

    @Override
    public String name() {
        return "axe4j.passes";
    }

    @Override
    public void register() {
        def("VerifyLayouts", a -> verifyModulePass(arg(a, 0)));
        def("CanonicalizeLayouts", a -> pass("axe4j.CanonicalizeLayouts", null,
                (func, name) -> CanonicalizeLayouts.run(func)));
        def("InferLayouts", a -> pass("axe4j.InferLayouts", arg(a, 0), (func, name) -> infer(func, name, arg(a, 0)).func()));
        def("verify", a -> texts(VerifyLayouts.check(TirFunction.read(symbol((TvmObject) a[0]), (TvmObject) a[0]),
                limits(arg(a, 1), (TvmObject) a[0]))));
        def("not_checked", a -> VerifyLayouts.notChecked(TirFunction.read(symbol((TvmObject) a[0]), (TvmObject) a[0]),
                limits(arg(a, 1), (TvmObject) a[0])));
        def("infer", a -> {
            InferLayouts.Result r = infer((TvmObject) a[0], symbol((TvmObject) a[0]), arg(a, 1));
            return List.of(r.func(), texts(r.notes()));
        });
        def("canonicalize", a -> CanonicalizeLayouts.run((TvmObject) a[0]));
        def("AllocateBySpan", a -> pass("axe4j.AllocateBySpan", null, (func, name) -> AllocateBySpan.run(func)));
        def("allocate_by_span", a -> AllocateBySpan.run((TvmObject) a[0]));
    }

    /** The text VerifyLayouts raises: a count, then one diagnostic per line. */
    public static String report(String name, List<Diagnostic> found) {
        StringBuilder s = new StringBuilder("VerifyLayouts: " + found.size() + " layout violation"
                + (found.size() == 1 ? "" : "s") + " in " + name + ":");
        found.forEach(d -> s.append("\n  ").append(d));
        return s.toString();
    }

    private static InferLayouts.Result infer(TvmObject func, String name, Object target) {
        InferLayouts.Result r = InferLayouts.run(TirFunction.read(name, func), limits(target, func));
        if (r.notes().isEmpty()) {
            return r;
        }
        TvmObject annotated = (TvmObject) Tvm.call("ir.BaseFuncWithAttr", r.func(), CHOICES_ATTR, texts(r.notes()));
        return new InferLayouts.Result(annotated, r.notes());
    }

    interface FuncRewrite {
        TvmObject apply(TvmObject func, String name);
    }

    /**
     * Pass bodies by pass and target text. Java keeps each one referenced for the life of the process: a pass object
     * dropped by Python at interpreter exit, after the JVM stopped, then never calls back into Java to free it.
     */
    private static final Map<String, TvmFunction> BODIES = new java.util.concurrent.ConcurrentHashMap<>();

    /** A {@code tirx.PrimFuncPass} whose body is {@code rewrite}, at opt level 0. */
    private static TvmObject pass(String passName, Object target, FuncRewrite rewrite) {
        String key = passName + "|" + (target instanceof TvmObject t ? t.repr() : String.valueOf(target));
        TvmFunction body = BODIES.computeIfAbsent(key, k -> TvmFunction.of(args -> {
            TvmObject func = (TvmObject) args[0];
            return rewrite.apply(func, symbol(func));
        }));
        Object info = Tvm.call("transform.PassInfo", 0L, passName, List.of(), false);
        return (TvmObject) Tvm.call("tirx.transform.CreatePrimFuncPass", body, info);
    }

    /**
     * VerifyLayouts as a module pass: every PrimFunc of the module is checked and one ValueError lists the violations
     * of all of them (a function pass would stop at the first function that fails).
     */
    private static TvmObject verifyModulePass(Object target) {
        String key = "axe4j.VerifyLayouts|module|" + (target instanceof TvmObject t ? t.repr() : String.valueOf(target));
        TvmFunction body = BODIES.computeIfAbsent(key, k -> TvmFunction.of(args -> {
            TvmObject mod = (TvmObject) args[0];
            List<String> reports = new ArrayList<>();
            if (mod.get("functions") instanceof Map<?, ?> functions) {
                for (Map.Entry<?, ?> e : functions.entrySet()) {
                    if (e.getValue() instanceof TvmObject func && func.isInstance("tirx.PrimFunc")) {
                        String name = e.getKey() instanceof TvmObject gv && gv.fieldNames().contains("name_hint")
                                ? String.valueOf(gv.get("name_hint")) : symbol(func);
                        List<Diagnostic> found = VerifyLayouts.check(TirFunction.read(name, func), limits(target, func));
                        if (!found.isEmpty()) {
                            reports.add(report(name, found));
                        }
                    }
                }
            }
            if (!reports.isEmpty()) {
                throw new TvmException("ValueError", String.join("\n", reports), "");
            }
            return mod;
        }));
        Object info = Tvm.call("transform.PassInfo", 0L, "axe4j.VerifyLayouts", List.of(), false);
        return (TvmObject) Tvm.call("transform.MakeModulePass", body, info);
    }

    private static Object arg(Object[] a, int k) {
        return a.length > k ? a[k] : null;
    }

    private static TargetLimits limits(Object target, TvmObject func) {
        if (target == null) {
            Object attr = attr(func, "target");
            return attr == null ? TargetLimits.NONE : TargetLimits.of(attr);
        }
        return TargetLimits.of(target);
    }

    static Object attr(TvmObject func, String key) {
        Object attrs = func.get("attrs");
        if (!(attrs instanceof TvmObject a)) {
            return null;
        }
        Object dict = Tvm.call("ir.DictAttrsGetDict", a);
        return dict instanceof Map<?, ?> m ? m.get(key) : null;
    }

    /** The function's {@code global_symbol}, else {@code main}. */
    static String symbol(TvmObject func) {
        Object s = attr(func, "global_symbol");
        return s instanceof String text ? text : "main";
    }

    private static List<String> texts(List<Diagnostic> ds) {
        List<String> out = new ArrayList<>();
        ds.forEach(d -> out.add(d.toString()));
        return out;
    }

    private static void def(String name, PackedFunction body) {
        String full = PREFIX + name;
        Tvm.register(full, args -> {
            try {
                return body.apply(args);
            } catch (ClassCastException e) {
                throw new IllegalArgumentException(full + ": bad argument: " + e.getMessage(), e);
            }
        }, true);
    }
}
