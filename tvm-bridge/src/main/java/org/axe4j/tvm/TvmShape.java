package org.axe4j.tvm;

import com.sun.jna.Pointer;

/** A TVM {@code ffi.Shape}: its cell is {@code TVMFFIShapeCell {const int64_t* data; size_t size}}. */
public final class TvmShape extends TvmObject {
    TvmShape(long handle) {
        super(handle);
    }

    public static TvmShape of(long... dims) {
        Object[] args = new Object[dims.length];
        for (int i = 0; i < dims.length; i++) {
            args[i] = dims[i];
        }
        return (TvmShape) Tvm.cached("ffi.Shape").callRaw(args);
    }

    public long[] dims() {
        Pointer cell = new Pointer(handle() + HEADER_BYTES);
        int n = Math.toIntExact(cell.getLong(8));
        return n == 0 ? new long[0] : new Pointer(cell.getLong(0)).getLongArray(0, n);
    }

    @Override
    public String toString() {
        return "Shape" + java.util.Arrays.toString(dims());
    }
}
