package org.axe4j.tvm;

import com.sun.jna.Memory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * Reusable native scratch memory for one call: the result {@code TVMFFIAny}, an out-handle slot,
 * a {@code TVMFFIByteArray} slot, the argument array (16 bytes per argument) and a bump area for
 * string bytes. Frames are pooled per thread as a stack, so a call made from inside a Java
 * callback (re-entrancy) takes a fresh frame and never overwrites the arguments of the outer call.
 */
final class CallFrame implements AutoCloseable {
    static final int ANY_BYTES = 16;
    static final int RESULT = 0;
    static final int OUT_HANDLE = 16;
    static final int BYTE_ARRAY = 32;
    static final int ARGS = 48;
    private static final int SCRATCH_BYTES = 1024;

    private static final ThreadLocal<ArrayDeque<CallFrame>> POOL = ThreadLocal.withInitial(ArrayDeque::new);

    private Memory memory;
    long address;
    ByteBuffer buffer;
    private int argCapacity;
    private int scratchStart;
    private int scratchUsed;
    /** Objects created to pass as arguments (strings, arrays, ...), released when the frame closes. */
    private long[] ownedHandles = new long[8];
    private int ownedCount;
    private final List<AutoCloseable> keepAlive = new ArrayList<>();
    private final List<Memory> overflow = new ArrayList<>();

    private CallFrame(int args) {
        allocate(Math.max(args, 8));
    }

    private void allocate(int args) {
        argCapacity = args;
        scratchStart = ARGS + args * ANY_BYTES;
        memory = new Memory(scratchStart + SCRATCH_BYTES);
        address = com.sun.jna.Pointer.nativeValue(memory);
        buffer = memory.getByteBuffer(0, memory.size()).order(ByteOrder.nativeOrder());
    }

    static CallFrame acquire(int numArgs) {
        ArrayDeque<CallFrame> pool = POOL.get();
        CallFrame frame = pool.poll();
        if (frame == null) {
            frame = new CallFrame(numArgs);
        } else if (frame.argCapacity < numArgs) {
            frame.allocate(Math.max(numArgs, frame.argCapacity * 2));
        }
        frame.scratchUsed = 0;
        frame.buffer.putInt(RESULT, TypeIndex.NONE);
        frame.buffer.putInt(RESULT + 4, 0);
        frame.buffer.putLong(RESULT + 8, 0L);
        return frame;
    }

    long argAddress(int index) {
        return address + ARGS + (long) index * ANY_BYTES;
    }

    int argOffset(int index) {
        return ARGS + index * ANY_BYTES;
    }

    /** Copies {@code bytes} into native memory owned by this frame and returns their address. */
    long copyBytes(byte[] bytes) {
        if (scratchUsed + bytes.length <= SCRATCH_BYTES) {
            int offset = scratchStart + scratchUsed;
            buffer.put(offset, bytes);
            scratchUsed += (bytes.length + 7) & ~7;
            return address + offset;
        }
        Memory big = new Memory(Math.max(1, bytes.length));
        big.write(0, bytes, 0, bytes.length);
        overflow.add(big);
        return com.sun.jna.Pointer.nativeValue(big);
    }

    void own(long handle) {
        if (ownedCount == ownedHandles.length) {
            ownedHandles = java.util.Arrays.copyOf(ownedHandles, ownedCount * 2);
        }
        ownedHandles[ownedCount++] = handle;
    }

    void keepAlive(AutoCloseable resource) {
        keepAlive.add(resource);
    }

    @Override
    public void close() {
        for (int i = 0; i < ownedCount; i++) {
            Ffi.TVMFFIObjectDecRef(ownedHandles[i]);
        }
        ownedCount = 0;
        for (AutoCloseable resource : keepAlive) {
            try {
                resource.close();
            } catch (Exception e) {
                throw new IllegalStateException("releasing a temporary TVM argument failed", e);
            }
        }
        keepAlive.clear();
        overflow.clear();
        POOL.get().push(this);
    }
}
