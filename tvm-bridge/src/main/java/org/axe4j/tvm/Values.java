package org.axe4j.tvm;

import com.sun.jna.Pointer;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Conversion between Java values and the 16-byte {@code TVMFFIAny}
 * ({@code int32 type_index @0, uint32 small_str_len @4, 8-byte union @8}).
 *
 * <pre>
 * Java                          TVM
 * null                      <-> None
 * Long/Integer/Short/Byte   ->  Int        (Int decodes to Long)
 * Boolean                   <-> Bool
 * Double/Float              ->  Float      (Float decodes to Double)
 * String                    <-> SmallStr (<= 7 UTF-8 bytes) or Str object
 * byte[]                    <-> SmallBytes (<= 7 bytes) or Bytes object
 * DataType / Device         <-> DataType / Device
 * List / Object[]           <-> Array (List and Array decode to java.util.List)
 * Map                       <-> Map   (Map and Dict decode to java.util.Map, insertion order kept)
 * long[] / int[]            ->  Shape  (Shape decodes to TvmShape)
 * PackedFunction            ->  Function
 * TvmObject and subclasses  <-> the object
 * Pointer                   <-> OpaquePtr
 * </pre>
 *
 * Arguments are written as views: objects created only to pass a value (a long string, an Array)
 * are owned by the call frame and released after the call. Results of Java functions are written
 * as owned values, handing one reference to the caller.
 */
final class Values {
    private static final int SMALL_MAX = 7;

    private Values() {}

    /** Writes a {@code TVMFFIByteArray} for {@code bytes} in the frame's byte-array slot. */
    static long byteArray(CallFrame frame, byte[] bytes) {
        long data = frame.copyBytes(bytes);
        frame.buffer.putLong(CallFrame.BYTE_ARRAY, data);
        frame.buffer.putLong(CallFrame.BYTE_ARRAY + 8, bytes.length);
        return frame.address + CallFrame.BYTE_ARRAY;
    }

    /**
     * Encodes {@code value} into the frame buffer at {@code offset}.
     *
     * @param owned true to hand a reference to the receiver (results); false for an argument view
     */
    static void encode(CallFrame frame, int offset, Object value, boolean owned) {
        ByteBuffer b = frame.buffer;
        b.putInt(offset + 4, 0);
        b.putLong(offset + 8, 0L);
        if (value instanceof TvmObject) { // first: tensors and functions are the hot arguments
            TvmObject o = (TvmObject) value;
            long h = o.handle();
            b.putInt(offset, o.typeIndex());
            b.putLong(offset + 8, h);
            if (owned) {
                Ffi.TVMFFIObjectIncRef(h);
            }
        } else if (value == null) {
            b.putInt(offset, TypeIndex.NONE);
        } else if (value instanceof Long || value instanceof Integer || value instanceof Short
                || value instanceof Byte) {
            b.putInt(offset, TypeIndex.INT);
            b.putLong(offset + 8, ((Number) value).longValue());
        } else if (value instanceof Boolean) {
            b.putInt(offset, TypeIndex.BOOL);
            b.putLong(offset + 8, ((Boolean) value) ? 1L : 0L);
        } else if (value instanceof Double || value instanceof Float) {
            b.putInt(offset, TypeIndex.FLOAT);
            b.putDouble(offset + 8, ((Number) value).doubleValue());
        } else if (value instanceof String || value instanceof Character) {
            encodeText(frame, offset, value.toString().getBytes(StandardCharsets.UTF_8), false, owned);
        } else if (value instanceof byte[]) {
            encodeText(frame, offset, (byte[]) value, true, owned);
        } else if (value instanceof DataType) {
            DataType t = (DataType) value;
            b.putInt(offset, TypeIndex.DATA_TYPE);
            b.put(offset + 8, (byte) t.code());
            b.put(offset + 9, (byte) t.bits());
            b.putShort(offset + 10, (short) t.lanes());
        } else if (value instanceof Device) {
            Device d = (Device) value;
            b.putInt(offset, TypeIndex.DEVICE);
            b.putInt(offset + 8, d.deviceType());
            b.putInt(offset + 12, d.deviceId());
        } else if (value instanceof Pointer) {
            b.putInt(offset, TypeIndex.OPAQUE_PTR);
            b.putLong(offset + 8, Pointer.nativeValue((Pointer) value));
        } else if (value instanceof Collection || value instanceof Object[]) {
            Object[] items = value instanceof Collection ? ((Collection<?>) value).toArray() : (Object[]) value;
            encodeCreated(frame, offset, Tvm.cached("ffi.Array").callRaw(items), owned);
        } else if (value instanceof Map) {
            Map<?, ?> map = (Map<?, ?>) value;
            Object[] kv = new Object[map.size() * 2];
            int i = 0;
            for (Map.Entry<?, ?> e : map.entrySet()) {
                kv[i++] = e.getKey();
                kv[i++] = e.getValue();
            }
            encodeCreated(frame, offset, Tvm.cached("ffi.Map").callRaw(kv), owned);
        } else if (value instanceof long[] || value instanceof int[]) {
            encodeCreated(frame, offset, TvmShape.of(value instanceof long[] ? (long[]) value
                    : java.util.Arrays.stream((int[]) value).asLongStream().toArray()), owned);
        } else if (value instanceof PackedFunction) {
            encodeCreated(frame, offset, Callbacks.create((PackedFunction) value), owned);
        } else {
            throw new IllegalArgumentException("cannot pass a " + value.getClass().getName()
                    + " to TVM: supported are null, numbers, Boolean, String, byte[], DataType, Device, List, Map,"
                    + " long[] shapes, PackedFunction, TvmObject and Pointer");
        }
    }

    /** Writes an object made for this value: its reference goes to the receiver or to the frame. */
    private static void encodeCreated(CallFrame frame, int offset, TvmObject created, boolean owned) {
        int type = created.typeIndex();
        long h = created.detach();
        frame.buffer.putInt(offset, type);
        frame.buffer.putLong(offset + 8, h);
        if (!owned) {
            frame.own(h);
        }
    }

    private static void encodeText(CallFrame frame, int offset, byte[] bytes, boolean isBytes, boolean owned) {
        ByteBuffer b = frame.buffer;
        if (bytes.length <= SMALL_MAX) {
            b.putInt(offset, isBytes ? TypeIndex.SMALL_BYTES : TypeIndex.SMALL_STR);
            b.putInt(offset + 4, bytes.length);
            b.put(offset + 8, bytes);
            return;
        }
        long input = byteArray(frame, bytes);
        long out = frame.address + offset;
        int rc = isBytes ? Ffi.TVMFFIBytesFromByteArray(input, out) : Ffi.TVMFFIStringFromByteArray(input, out);
        if (rc != 0) {
            throw TvmErrors.fromRaised();
        }
        int type = b.getInt(offset);
        if (!owned && type >= TypeIndex.STATIC_OBJECT_BEGIN) {
            frame.own(b.getLong(offset + 8));
        }
    }

    /**
     * Decodes the {@code TVMFFIAny} at {@code offset}.
     *
     * @param owned whether the Any holds a reference that now passes to Java (call results); for
     *              views (callback arguments, container elements) objects gain a reference
     */
    static Object decode(ByteBuffer b, int offset, boolean owned) {
        int type = b.getInt(offset);
        long bits = b.getLong(offset + 8);
        switch (type) {
            case TypeIndex.NONE: return null;
            case TypeIndex.INT: return bits;
            case TypeIndex.BOOL: return bits != 0;
            case TypeIndex.FLOAT: return Double.longBitsToDouble(bits);
            case TypeIndex.OPAQUE_PTR:
            case TypeIndex.DL_TENSOR_PTR:
                return bits == 0 ? null : new Pointer(bits);
            case TypeIndex.DATA_TYPE:
                return new DataType(b.get(offset + 8) & 0xff, b.get(offset + 9) & 0xff, b.getShort(offset + 10) & 0xffff);
            case TypeIndex.DEVICE:
                return new Device(b.getInt(offset + 8), b.getInt(offset + 12));
            case TypeIndex.RAW_STR:
                return TvmErrors.readCString(bits);
            case TypeIndex.BYTE_ARRAY_PTR:
                return TypeInfo.readByteArray(bits);
            case TypeIndex.SMALL_STR:
            case TypeIndex.SMALL_BYTES: {
                byte[] small = new byte[b.getInt(offset + 4)];
                b.get(offset + 8, small);
                return type == TypeIndex.SMALL_STR ? new String(small, StandardCharsets.UTF_8) : small;
            }
            case TypeIndex.OBJECT_RVALUE_REF: { // a pass's moved argument: borrow the object its slot holds
                long handle = new Pointer(bits).getLong(0);
                return handle == 0 ? null : decodeObject(handle, TvmObject.typeIndexOf(handle), owned);
            }
            default:
                if (type < TypeIndex.STATIC_OBJECT_BEGIN) {
                    throw new IllegalStateException("TVM returned a value of unsupported type index " + type);
                }
                return decodeObject(bits, type, owned);
        }
    }

    private static Object decodeObject(long handle, int type, boolean owned) {
        if (type == TypeIndex.STR || type == TypeIndex.BYTES) {
            byte[] content = TypeInfo.readByteArray(handle + TvmObject.HEADER_BYTES);
            if (owned) {
                Ffi.TVMFFIObjectDecRef(handle);
            }
            return type == TypeIndex.STR ? new String(content, StandardCharsets.UTF_8) : content;
        }
        if (!owned) {
            Ffi.TVMFFIObjectIncRef(handle);
        }
        TvmObject object = TvmObject.adopt(handle);
        if (type == TypeIndex.ARRAY || type == TypeIndex.LIST) {
            try (object) {
                return sequence(handle);
            }
        }
        if (type == TypeIndex.MAP || type == TypeIndex.DICT) {
            try (object) {
                return mapOf(object, type == TypeIndex.MAP ? "ffi.MapForwardIterFunctor" : "ffi.DictForwardIterFunctor",
                        type == TypeIndex.MAP ? "ffi.MapSize" : "ffi.DictSize");
            }
        }
        return object;
    }

    /** Elements of an Array or List: {@code TVMFFISeqCell {TVMFFIAny* data; int64 size; ...}} after the header. */
    private static List<Object> sequence(long handle) {
        Pointer cell = new Pointer(handle + TvmObject.HEADER_BYTES);
        long data = cell.getLong(0);
        int size = Math.toIntExact(cell.getLong(8));
        List<Object> items = new ArrayList<>(size);
        if (size == 0) {
            return items;
        }
        ByteBuffer elements = new Pointer(data).getByteBuffer(0, (long) size * CallFrame.ANY_BYTES)
                .order(ByteOrder.nativeOrder());
        for (int i = 0; i < size; i++) {
            items.add(decode(elements, i * CallFrame.ANY_BYTES, false));
        }
        return items;
    }

    /** Entries in TVM's iteration order: {@code f(0)} key, {@code f(1)} value, {@code f(2)} advance. */
    private static Map<Object, Object> mapOf(TvmObject map, String iteratorGlobal, String sizeGlobal) {
        long size = (Long) Tvm.cached(sizeGlobal).call(map);
        Map<Object, Object> entries = new LinkedHashMap<>();
        if (size == 0) {
            return entries;
        }
        try (TvmFunction iterator = (TvmFunction) Tvm.cached(iteratorGlobal).call(map)) {
            for (long i = 0; i < size; i++) {
                entries.put(iterator.call(0L), iterator.call(1L));
                Object more = iterator.call(2L);
                if (Boolean.FALSE.equals(more) || Long.valueOf(0L).equals(more)) {
                    break;
                }
            }
        }
        return entries;
    }

    /** Releases the reference held by an owned Any, if any. */
    static void releaseOwned(ByteBuffer b, int offset) {
        if (b.getInt(offset) >= TypeIndex.STATIC_OBJECT_BEGIN) {
            Ffi.TVMFFIObjectDecRef(b.getLong(offset + 8));
        }
    }
}
