package org.axe4j.tvm;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;

/**
 * One function of a compiled module, callable from any number of threads at once.
 *
 * <p>{@link #call} is thread-safe: argument encoding uses per-thread native frames and the TVM
 * function itself keeps no state between calls. For tensor arguments, a {@link Workspace} holds
 * one set of 64-byte aligned direct buffers wrapped as TVM tensors ({@link TvmTensor#wrap}); give
 * each thread its own ({@link #workspaces}), fill the input buffers, {@link Workspace#call()}, read
 * the output buffers: no allocation and no copy per call.
 */
public final class Kernel implements AutoCloseable {
    /** Shape and element type of one tensor argument. */
    public record TensorSpec(long[] shape, DataType dtype) {
        public TensorSpec {
            if (shape == null || dtype == null) {
                throw new IllegalArgumentException("TensorSpec: shape and dtype must not be null");
            }
            shape = shape.clone();
            for (int i = 0; i < shape.length; i++) {
                if (shape[i] < 0) {
                    throw new IllegalArgumentException("TensorSpec: shape " + Arrays.toString(shape) + " has extent "
                            + shape[i] + " at dimension " + i);
                }
            }
        }

        @Override
        public long[] shape() {
            return shape.clone();
        }

        public long bytes() {
            long n = dtype.bytes();
            for (long d : shape) {
                n = Math.multiplyExact(n, d);
            }
            return n;
        }

        @Override
        public String toString() {
            return dtype + Arrays.toString(shape);
        }
    }

    private final TvmFunction function;
    private final String name;

    private Kernel(TvmFunction function, String name) {
        this.function = function;
        this.name = name;
    }

    /** The function {@code name} of {@code module}. */
    public static Kernel of(TvmModule module, String name) {
        return new Kernel(module.function(name), name);
    }

    public String name() {
        return name;
    }

    /** Calls the kernel (thread-safe); see {@link TvmFunction#call}. */
    public Object call(Object... args) {
        return function.call(args);
    }

    /** A fresh set of tensors, one per spec, in argument order. */
    public Workspace newWorkspace(List<TensorSpec> specs) {
        return new Workspace(this, specs);
    }

    /**
     * One workspace per calling thread, made on the thread's first {@code get()}. Workspaces are
     * released with their thread's {@link ThreadLocal} entry (the GC frees wrapped buffers once TVM
     * dropped the tensors).
     */
    public ThreadLocal<Workspace> workspaces(List<TensorSpec> specs) {
        List<TensorSpec> copy = List.copyOf(specs);
        return ThreadLocal.withInitial(() -> newWorkspace(copy));
    }

    @Override
    public void close() {
        function.close();
    }

    @Override
    public String toString() {
        return "Kernel(" + name + ")";
    }

    /** Tensors over direct buffers for one thread's calls of a kernel; not thread-safe itself. */
    public static final class Workspace implements AutoCloseable {
        private final Kernel kernel;
        private final List<TensorSpec> specs;
        private final ByteBuffer[] buffers;
        private final TvmTensor[] tensors;
        /** The call's arguments, encoded once (the tensors never change), then the result slot. */
        private final com.sun.jna.Memory frame;
        /** {@code frame} through a direct buffer: reads and writes without a JNI call each. */
        private final ByteBuffer frameView;
        private final int resultOffset;
        private final long argsAddress;
        private final long resultAddress;

        private Workspace(Kernel kernel, List<TensorSpec> specs) {
            if (specs == null || specs.isEmpty()) {
                throw new IllegalArgumentException("Kernel.Workspace: at least one tensor spec is needed");
            }
            this.kernel = kernel;
            this.specs = List.copyOf(specs);
            buffers = new ByteBuffer[specs.size()];
            tensors = new TvmTensor[specs.size()];
            for (int i = 0; i < buffers.length; i++) {
                TensorSpec spec = specs.get(i);
                buffers[i] = TvmTensor.allocateDirect(spec.bytes());
                tensors[i] = TvmTensor.wrap(buffers[i], spec.shape(), spec.dtype());
            }
            frame = new com.sun.jna.Memory(CallFrame.ANY_BYTES * (tensors.length + 1L));
            frame.clear();
            argsAddress = com.sun.jna.Pointer.nativeValue(frame);
            resultOffset = CallFrame.ANY_BYTES * tensors.length;
            resultAddress = argsAddress + resultOffset;
            frameView = frame.getByteBuffer(0, frame.size()).order(java.nio.ByteOrder.nativeOrder());
            for (int i = 0; i < tensors.length; i++) {
                frameView.putInt(CallFrame.ANY_BYTES * i, tensors[i].typeIndex());
                frameView.putLong(CallFrame.ANY_BYTES * i + 8, tensors[i].handle());
            }
        }

        /** The bytes of argument {@code index} (native order; position 0); write inputs, read outputs. */
        public ByteBuffer buffer(int index) {
            return buffers[checkIndex(index)].duplicate().order(java.nio.ByteOrder.nativeOrder());
        }

        public TvmTensor tensor(int index) {
            return tensors[checkIndex(index)];
        }

        public List<TensorSpec> specs() {
            return specs;
        }

        /**
         * Calls the kernel on this workspace's tensors, in order: one native call on arguments
         * encoded when the workspace was made. A result other than none is released.
         */
        public void call() {
            if (closed) {
                throw new IllegalStateException("Kernel.Workspace of " + kernel.name + " is closed");
            }
            frameView.putInt(resultOffset, TypeIndex.NONE);
            int rc = FastCall.functionCall(kernel.function.handle(), argsAddress, tensors.length, resultAddress);
            java.lang.ref.Reference.reachabilityFence(this);
            if (rc != 0) {
                throw TvmErrors.fromRaised();
            }
            if (frameView.getInt(resultOffset) >= TypeIndex.STATIC_OBJECT_BEGIN) {
                Ffi.TVMFFIObjectDecRef(frameView.getLong(resultOffset + 8));
            }
        }

        private int checkIndex(int index) {
            if (index < 0 || index >= buffers.length) {
                throw new IndexOutOfBoundsException("Kernel.Workspace: argument " + index + " of " + buffers.length
                        + " (" + specs + ")");
            }
            return index;
        }

        private boolean closed;

        @Override
        public void close() {
            closed = true;
            for (TvmTensor t : tensors) {
                t.close();
            }
        }
    }
}
