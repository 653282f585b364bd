package org.axe4j.passes.transform;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.axe4j.passes.transform.TirFunction.Buffer;
import org.axe4j.tvm.Tvm;
import org.axe4j.tvm.TvmFunction;
import org.axe4j.tvm.TvmObject;

/**
 * Gives buffers new layouts: one {@code ffi.StructuralMap} over the function replaces each chosen buffer's
 * {@code tirx.BufferType} by a copy with the new layout. TVM's map rebuilds the buffer variable at its definition
 * and remaps every use (tile-call regions, decls), so the function stays well formed.
 */
final class LayoutRewrite {
    private static final long POST_ORDER = 1;

    private LayoutRewrite() {}

    /** {@code func} with each buffer of {@code layouts} given its new layout; {@code func} itself when empty. */
    static TvmObject apply(TvmObject func, Map<Buffer, TvmObject> layouts) {
        return apply(func, layouts, Map.of());
    }

    /** As {@link #apply(TvmObject, Map)}, raising each buffer of {@code alignBytes} to at least that alignment. */
    static TvmObject apply(TvmObject func, Map<Buffer, TvmObject> layouts, Map<Buffer, Long> alignBytes) {
        if (layouts.isEmpty()) {
            return func;
        }
        List<Buffer> keys = new ArrayList<>(layouts.keySet());
        int typeIndex = keys.get(0).type().typeIndex();
        TvmFunction replace = TvmFunction.of(args -> {
            TvmObject type = (TvmObject) args[0];
            for (Buffer b : keys) {
                if (b.type().sameObject(type)) {
                    return withLayout(type, layouts.get(b), alignBytes.get(b));
                }
            }
            return type;
        });
        try (replace) {
            List<Object> entry = List.of((long) typeIndex, replace);
            return (TvmObject) Tvm.call("ffi.StructuralMap", func, List.of(entry), List.of(), POST_ORDER);
        }
    }

    /** A copy of a {@code tirx.BufferType} with another layout (every other field kept). */
    static TvmObject withLayout(TvmObject type, TvmObject layout) {
        return withLayout(type, layout, null);
    }

    /** As {@link #withLayout(TvmObject, TvmObject)}, with {@code data_alignment} raised to {@code minAlign} bytes. */
    static TvmObject withLayout(TvmObject type, TvmObject layout, Long minAlign) {
        Object align = type.get("data_alignment");
        if (minAlign != null && align instanceof Long a && a < minAlign) {
            align = minAlign;
        }
        return (TvmObject) Tvm.call("tirx.BufferType", type.get("storage_scope"), type.get("dtype"), type.get("shape"),
                type.get("strides"), type.get("elem_offset"), align, type.get("offset_factor"),
                layout, type.get("allocated_addr"), null);
    }
}
