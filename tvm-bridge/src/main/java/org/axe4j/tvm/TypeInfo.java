package org.axe4j.tvm;

import com.sun.jna.Function;
import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A view of {@code TVMFFITypeInfo} (c_api.h): {@code int32 type_index @0, int32 type_depth @4,
 * TVMFFIByteArray type_key @8, const TVMFFITypeInfo** type_ancestors @24, uint64 hash @32,
 * int32 num_fields @40, int32 num_methods @44, const TVMFFIFieldInfo* fields @48, ...}.
 * {@code TVMFFIFieldInfo} is 120 bytes: {@code name @0, doc @16, metadata @32, flags @48, size @56,
 * alignment @64, offset @72, getter @80, setter @88, default @96, static type index @112}.
 * A field is read by calling {@code getter(obj + offset, &result)}.
 */
final class TypeInfo {
    private static final int FIELD_INFO_BYTES = 120;
    private static final Map<Integer, TypeInfo> CACHE = new ConcurrentHashMap<>();

    /** {@code function} is the getter as a JNA function, built once: building one per read costs more than the call. */
    record Field(String name, long offset, long getter, int staticTypeIndex, Function function) {}

    /** One result slot per thread for field reads (a TVMFFIAny), instead of a fresh native allocation per read. */
    private static final ThreadLocal<Memory> RESULT = ThreadLocal.withInitial(() -> new Memory(CallFrame.ANY_BYTES));

    private final int index;
    private final String typeKey;
    private final int[] ancestors;
    private final Map<String, Field> fields;

    private TypeInfo(int index) {
        long info = Pointer.nativeValue(pointerOf(index));
        Pointer p = new Pointer(info);
        this.index = index;
        this.typeKey = readByteArrayString(info + 8);
        int depth = p.getInt(4);
        long ancestorTable = p.getLong(24);
        ancestors = new int[depth];
        Map<String, Field> collected = new LinkedHashMap<>();
        for (int d = 0; d < depth; d++) {
            long ancestor = new Pointer(ancestorTable).getLong(8L * d);
            ancestors[d] = new Pointer(ancestor).getInt(0);
            collectFields(ancestor, collected);
        }
        collectFields(info, collected);
        fields = Collections.unmodifiableMap(collected);
    }

    private static Pointer pointerOf(int index) {
        long info = Ffi.TVMFFIGetTypeInfo(index);
        if (info == 0) {
            throw new IllegalArgumentException("no TVM type with index " + index);
        }
        return new Pointer(info);
    }

    private static void collectFields(long info, Map<String, Field> into) {
        Pointer p = new Pointer(info);
        int count = p.getInt(40);
        long table = p.getLong(48);
        for (int i = 0; i < count; i++) {
            long f = table + (long) i * FIELD_INFO_BYTES;
            Pointer fp = new Pointer(f);
            String name = readByteArrayString(f);
            long getter = fp.getLong(80);
            into.put(name, new Field(name, fp.getLong(72), getter, fp.getInt(112),
                    getter == 0 ? null : Function.getFunction(new Pointer(getter))));
        }
    }

    static TypeInfo of(int index) {
        return CACHE.computeIfAbsent(index, TypeInfo::new);
    }

    /** The index registered for {@code typeKey}; loads the compiler first when the runtime lacks it. */
    static int indexOf(String typeKey) {
        try {
            return lookUpIndex(typeKey);
        } catch (TvmException e) {
            if (TvmLibraries.loadCompilerIfAvailable()) {
                return lookUpIndex(typeKey);
            }
            throw e;
        }
    }

    private static int lookUpIndex(String typeKey) {
        try (CallFrame frame = CallFrame.acquire(0)) {
            long key = Values.byteArray(frame, typeKey.getBytes(StandardCharsets.UTF_8));
            TvmErrors.check(Ffi.TVMFFITypeKeyToIndex(key, frame.address + CallFrame.OUT_HANDLE));
            return frame.buffer.getInt(CallFrame.OUT_HANDLE);
        }
    }

    /** Reads the {@code TVMFFIByteArray} at {@code address} as UTF-8. */
    static String readByteArrayString(long address) {
        return new String(readByteArray(address), StandardCharsets.UTF_8);
    }

    static byte[] readByteArray(long address) {
        Pointer p = new Pointer(address);
        long data = p.getLong(0);
        long size = p.getLong(8);
        if (size == 0) {
            return new byte[0];
        }
        return new Pointer(data).getByteArray(0, Math.toIntExact(size));
    }

    String typeKey() {
        return typeKey;
    }

    int index() {
        return index;
    }

    boolean isA(int ancestorIndex) {
        if (index == ancestorIndex) {
            return true;
        }
        for (int a : ancestors) {
            if (a == ancestorIndex) {
                return true;
            }
        }
        return false;
    }

    /** Type keys of the ancestors, root ({@code ffi.Object}) first. */
    List<String> ancestorKeys() {
        List<String> keys = new ArrayList<>(ancestors.length);
        for (int a : ancestors) {
            keys.add(of(a).typeKey());
        }
        return keys;
    }

    List<String> fieldNames() {
        return new ArrayList<>(fields.keySet());
    }

    Object readField(long handle, String name) {
        Field field = fields.get(name);
        if (field == null) {
            throw new IllegalArgumentException("TVM type " + typeKey + " has no field '" + name + "'; fields: "
                    + fields.keySet());
        }
        if (field.function() == null) {
            throw new IllegalArgumentException("TVM type " + typeKey + " field '" + name + "' has no getter");
        }
        Memory result = RESULT.get();
        result.clear();
        int rc = field.function().invokeInt(new Object[] {new Pointer(handle + field.offset()), result});
        if (rc != 0) {
            throw TvmErrors.fromRaised();
        }
        return Values.decode(result.getByteBuffer(0, CallFrame.ANY_BYTES).order(java.nio.ByteOrder.nativeOrder()),
                0, true);
    }
}
