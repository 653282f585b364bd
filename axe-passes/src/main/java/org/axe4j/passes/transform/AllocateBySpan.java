package org.axe4j.passes.transform;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Iter;
import org.axe4j.layout.Layout;
import org.axe4j.passes.TirxLayout;
import org.axe4j.passes.TirxLayouts;
import org.axe4j.passes.transform.TirFunction.Buffer;
import org.axe4j.tvm.Tvm;
import org.axe4j.tvm.TvmFunction;
import org.axe4j.tvm.TvmObject;

/**
 * Sizes on-chip allocations by their layout's span. An Axe layout decides the footprint of the memory it describes:
 * a shared tile {@code (16, 48)} with rows 56 apart ({@code S[(16,48):(56,1)]}, bank-conflict padding) touches
 * elements 0 to 887, but TVM allocates {@code alloc_buffer} by its shape's 768 elements. For every
 * {@code alloc_buffer} in on-chip memory ({@link #onChip}: {@code shared}, {@code shared.dyn}, {@code local}, and the
 * Trainium scopes) whose layout reaches past its shape's elements on the memory axis {@code m}, the allocation
 * becomes
 * <pre>
 *   X = alloc_buffer((888,), scope, layout=S[888])                    -- the storage, sized by the span
 *   X = decl_buffer((16, 48), data=X.data, layout=S[(16,48):(56,1)])  -- the buffer as written, a view of it
 * </pre>
 * The buffer variable itself is kept (every use of it is unchanged); only its defining statement moves from an
 * allocation to a declaration over the new storage, which has the same name, scope, dtype, alignment and
 * annotations. Parameters are the caller's memory and are never resized ({@link VerifyLayouts} says which shape to
 * pass). Layouts whose span on {@code m} fits the shape, layouts without {@code m} (Trainium's {@code P}/{@code F},
 * sized by axe4j's SBUF/PSUM allocation), symbolic shapes or offsets are left alone.
 */
public final class AllocateBySpan {
    private AllocateBySpan() {}

    /** Whether {@code scope} is memory the kernel allocates for itself on the chip. */
    public static boolean onChip(String scope) {
        return scope.startsWith("shared") || scope.startsWith("local") || scope.startsWith("trn.");
    }

    /**
     * The elements an allocation of {@code b} needs: its layout's highest element on {@code m} plus one, when that is
     * more than its shape's elements and it is resized here; else null (left as written).
     */
    public static Long storageElements(Buffer b) {
        if (b.origin() != TirFunction.Origin.ALLOC || !onChip(b.scope()) || !b.constantShape()) {
            return null;
        }
        TirxLayout tl = VerifyLayouts.layoutOf(b);
        if (tl == null || !tl.layout().axes().contains(Axis.M)) {
            return null;
        }
        VerifyLayouts.Reach r = VerifyLayouts.reach(tl.layout(), Axis.M, tl.symbolic().isEmpty());
        if (r == null || r.lowest() < 0 || r.highest() < b.elements()) {
            return null;
        }
        return r.highest() + 1;
    }

    /** {@code func} with each under-sized on-chip allocation replaced as above; {@code func} itself when none is. */
    public static TvmObject run(TvmObject func) {
        TirFunction f = TirFunction.read("func", func);
        Map<TvmObject, Long> resized = new LinkedHashMap<>();
        for (Buffer b : f.buffers()) {
            Long n = storageElements(b);
            if (n != null) {
                resized.put(b.var(), n);
            }
        }
        if (resized.isEmpty()) {
            return func;
        }
        TvmObject seq = firstSeq(func.get("body"));
        if (seq == null) {
            return func;   // an allocation that is not part of a statement sequence has nothing after it to use it
        }
        TvmFunction rewrite = TvmFunction.of(args -> expand((TvmObject) args[0], resized));
        try (rewrite) {
            List<Object> entry = List.of((long) seq.typeIndex(), rewrite);
            return (TvmObject) Tvm.call("ffi.StructuralMap", func, List.of(entry), List.of(), 1L);
        }
    }

    /** A sequence with each resized allocation replaced by the storage's allocation and the buffer's declaration. */
    private static TvmObject expand(TvmObject seq, Map<TvmObject, Long> resized) {
        List<Object> out = new ArrayList<>();
        boolean changed = false;
        for (Object s : (List<?>) seq.get("seq")) {
            TvmObject var = s instanceof TvmObject stmt && stmt.typeKey().equals("tirx.AllocBuffer")
                    ? (TvmObject) stmt.get("buffer") : null;
            Long n = null;
            if (var != null) {
                for (Map.Entry<TvmObject, Long> e : resized.entrySet()) {
                    if (e.getKey().sameObject(var)) {
                        n = e.getValue();
                    }
                }
            }
            if (n == null) {
                out.add(s);
                continue;
            }
            TvmObject storage = storage(var, n);
            out.add(Tvm.call("tirx.AllocBuffer", storage, ((TvmObject) s).get("annotations"), null));
            out.add(Tvm.call("tirx.DeclBuffer", var, Tvm.call("tirx.BufferData", storage), null));
            changed = true;
        }
        return changed ? (TvmObject) Tvm.call("tirx.SeqStmt", out, null) : seq;
    }

    /** A one-dimensional buffer of {@code n} elements with {@code var}'s name, scope, dtype and alignment. */
    private static TvmObject storage(TvmObject var, long n) {
        TvmObject type = (TvmObject) var.get("ty");
        Object layout = TirxLayouts.toTvm(Layout.shard(Iter.of(n, 1)));
        Object storageType = Tvm.call("tirx.BufferType", type.get("storage_scope"), type.get("dtype"), List.of(n),
                List.of(), type.get("elem_offset"), type.get("data_alignment"), type.get("offset_factor"), layout,
                type.get("allocated_addr"), null);
        return (TvmObject) Tvm.call("tirx.BufferVar", var.get("name"), storageType, null);
    }

    /** The first {@code tirx.SeqStmt} in the body (for its type index), or null when there is none. */
    private static TvmObject firstSeq(Object node) {
        if (!(node instanceof TvmObject o)) {
            return null;
        }
        if (o.typeKey().equals("tirx.SeqStmt")) {
            return o;
        }
        List<String> fields = o.fieldNames();
        for (String f : List.of("body", "then_case", "else_case", "block")) {
            if (fields.contains(f)) {
                TvmObject found = firstSeq(o.get(f));
                if (found != null) {
                    return found;
                }
            }
        }
        return null;
    }
}
