package org.axe4j.tvm;

import com.sun.jna.Pointer;
import java.lang.ref.Cleaner;
import java.util.List;

/**
 * A counted reference to a TVM object ({@code TVMFFIObject*}). The wrapper owns one reference:
 * {@link #close()} releases it, and a {@link Cleaner} releases it if the wrapper is forgotten.
 * Fields registered through TVM's reflection are readable by name ({@link #get(String)}), which is
 * how Java reads IR nodes.
 */
public class TvmObject implements AutoCloseable {
    /** Size of the {@code TVMFFIObject} header; an object's cell (payload) starts here. */
    static final int HEADER_BYTES = 24;
    private static final Cleaner CLEANER = Cleaner.create();

    private final Release release;
    private final Cleaner.Cleanable cleanable;
    private final long handle;
    /** The object's type index, read once: it never changes, and a read of native memory is a JNI call. */
    private final int typeIndex;

    /** Releases the reference unless ownership was handed on ({@link #detach()}). */
    private static final class Release implements Runnable {
        private volatile long handle;

        Release(long handle) {
            this.handle = handle;
        }

        @Override
        public void run() {
            long h = handle;
            handle = 0;
            if (h != 0) {
                Ffi.TVMFFIObjectDecRef(h);
            }
        }
    }

    /** Adopts one reference to {@code handle}. */
    TvmObject(long handle) {
        if (handle == 0) {
            throw new IllegalArgumentException("TvmObject: null handle");
        }
        this.handle = handle;
        this.typeIndex = typeIndexOf(handle);
        this.release = new Release(handle);
        this.cleanable = CLEANER.register(this, release);
    }

    /** Wraps an owned reference in the most specific Java class for its type. */
    static TvmObject adopt(long handle) {
        int index = typeIndexOf(handle);
        TypeInfo info = TypeInfo.of(index);
        if (info.isA(TypeIndex.FUNCTION)) {
            return new TvmFunction(handle);
        }
        if (info.isA(TypeIndex.TENSOR)) {
            return new TvmTensor(handle);
        }
        if (info.isA(TypeIndex.SHAPE)) {
            return new TvmShape(handle);
        }
        if (info.isA(TypeIndex.MODULE)) {
            return new TvmModule(handle);
        }
        return new TvmObject(handle);
    }

    static int typeIndexOf(long handle) {
        return new Pointer(handle).getInt(8);
    }

    /** The raw {@code TVMFFIObject*}; valid while this wrapper is open. */
    public final long handle() {
        if (release.handle == 0) {
            throw new IllegalStateException("TVM object " + Long.toHexString(handle) + " was already released");
        }
        return handle;
    }

    public final boolean isClosed() {
        return release.handle == 0;
    }

    public final int typeIndex() {
        handle();
        return typeIndex;
    }

    /** TVM's type key, e.g. {@code ir.IntImm} or {@code ffi.Array}. */
    public final String typeKey() {
        return TypeInfo.of(typeIndex()).typeKey();
    }

    /** Type keys of this object's ancestors, root first (e.g. {@code [ffi.Object, ir.Node, ...]}). */
    public final List<String> typeAncestors() {
        return TypeInfo.of(typeIndex()).ancestorKeys();
    }

    /**
     * Whether this object's type is {@code typeKey} or derives from it.
     *
     * @throws TvmException when no type {@code typeKey} is registered
     */
    public final boolean isInstance(String typeKey) {
        return TypeInfo.of(typeIndex()).isA(TypeInfo.indexOf(typeKey));
    }

    /** Names of the reflected fields, ancestors' fields first. */
    public final List<String> fieldNames() {
        return TypeInfo.of(typeIndex()).fieldNames();
    }

    /** Reads a reflected field through its getter, decoded as a call result. */
    public final Object get(String fieldName) {
        TypeInfo info = TypeInfo.of(typeIndex());
        Object value = info.readField(handle(), fieldName);
        java.lang.ref.Reference.reachabilityFence(this);
        return value;
    }

    /** A new wrapper sharing this object (one more reference). */
    public TvmObject share() {
        Ffi.TVMFFIObjectIncRef(handle());
        return adopt(handle);
    }

    /** Whether both wrappers reference the same TVM object. */
    public final boolean sameObject(TvmObject other) {
        return other != null && other.handle == handle;
    }

    /** Hands this wrapper's reference to the caller, disarming the cleaner. */
    final long detach() {
        long h = handle();
        release.handle = 0;
        cleanable.clean();
        return h;
    }

    @Override
    public final void close() {
        cleanable.clean();
    }

    /** TVM's own printed form ({@code ffi.ReprPrint}). */
    public String repr() {
        return String.valueOf(Tvm.cached("ffi.ReprPrint").call(this));
    }

    @Override
    public String toString() {
        return isClosed() ? "TvmObject(released)" : typeKey() + "@" + Long.toHexString(handle);
    }
}
