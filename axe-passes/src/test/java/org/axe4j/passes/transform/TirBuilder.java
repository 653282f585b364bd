package org.axe4j.passes.transform;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.axe4j.tvm.DataType;
import org.axe4j.tvm.Tvm;
import org.axe4j.tvm.TvmObject;

/** Builds TIRx functions from Java with TVM's own constructors (no TVMScript), for JVM-hosted pass tests. */
final class TirBuilder {
    private final List<Object> params = new ArrayList<>();
    private final List<Object> body = new ArrayList<>();

    /** A buffer variable; {@code layout} is axe4j text, or null for none. */
    static TvmObject buffer(String name, long[] shape, String layout, String scope) {
        List<Object> dims = new ArrayList<>();
        for (long d : shape) {
            dims.add(d);
        }
        Object l = layout == null ? null : Tvm.call("axe4j.layout.parse", layout);
        Object type = Tvm.call("tirx.BufferType", scope, DataType.FLOAT32, dims, List.of(), null, -1L, 0L, l,
                List.of(), null);
        return (TvmObject) Tvm.call("tirx.BufferVar", name, type, null);
    }

    /** A row-major parameter buffer. */
    TvmObject param(String name, long... shape) {
        long n = 1;
        for (long d : shape) {
            n *= d;
        }
        TvmObject b = buffer(name, shape, shape.length == 1 ? "S[" + n + ":1]" : rowMajor(shape), "global");
        params.add(b);
        return b;
    }

    /** A parameter buffer with {@code layout} (axe4j text). */
    TvmObject param(String name, long[] shape, String layout) {
        TvmObject b = buffer(name, shape, layout, "global");
        params.add(b);
        return b;
    }

    private static String rowMajor(long[] shape) {
        List<String> e = new ArrayList<>();
        List<String> s = new ArrayList<>();
        long stride = 1;
        for (int k = shape.length - 1; k >= 0; k--) {
            e.add(0, Long.toString(shape[k]));
            s.add(0, Long.toString(stride));
            stride *= shape[k];
        }
        return "S[(" + String.join(",", e) + "):(" + String.join(",", s) + ")]";
    }

    TvmObject alloc(String name, long[] shape, String layout, String scope) {
        TvmObject b = buffer(name, shape, layout, scope);
        body.add(Tvm.call("tirx.AllocBuffer", b, Map.of(), null));
        return b;
    }

    TvmObject decl(String name, long[] shape, String layout, TvmObject dataOf) {
        TvmObject b = buffer(name, shape, layout, "global");
        body.add(Tvm.call("tirx.DeclBuffer", b, Tvm.call("tirx.BufferData", dataOf), null));
        return b;
    }

    /** {@code buffer[b0:e0, b1:e1, ...]} from pairs of bounds. */
    static Object region(TvmObject buffer, long... bounds) {
        List<Object> ranges = new ArrayList<>();
        for (int k = 0; k < bounds.length; k += 2) {
            ranges.add(Tvm.call("ir.Range", bounds[k], bounds[k + 1], null));
        }
        return Tvm.call("tirx.BufferRegion", buffer, ranges);
    }

    /** A tile call {@code op(args)} at {@code scope} ("thread", "warp", ...). */
    void call(String op, String scope, Object... args) {
        body.add(Tvm.call("tirx.TilePrimitiveCall", Tvm.call("ir.GetOp", "tirx.tile." + op), List.of(args), Map.of(),
                Map.of(), null, Tvm.call("tirx.ExecScope", scope)));
    }

    /** An IRModule holding this function as {@code name}. */
    TvmObject module(String name) {
        Object attrs = Tvm.call("ffi.MakeObjectFromPackedArgs", "ir.DictAttrs", "__dict__", Map.of("global_symbol", name));
        Object func = Tvm.call("tirx.PrimFunc", params, Tvm.call("tirx.SeqStmt", body, null), Tvm.call("ir.TypeMissing"),
                attrs, null);
        return (TvmObject) Tvm.call("ir.IRModule", Map.of(Tvm.call("ir.GlobalVar", name), func), null, Map.of());
    }
}
