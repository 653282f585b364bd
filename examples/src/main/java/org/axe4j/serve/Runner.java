package org.axe4j.serve;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.function.Supplier;
import org.axe4j.tvm.Kernel;
import org.axe4j.tvm.cuda.DeviceMemory;
import org.axe4j.tvm.cuda.DeviceWorkspace;

/**
 * One worker's tensors for one function, made once and reused: a request writes the inputs into {@link #buffer},
 * runs, and reads the outputs from {@link #buffer}; nothing is allocated per request. Not thread-safe. A
 * {@link Backend} makes its own.
 */
public interface Runner extends AutoCloseable {
    /**
     * Argument {@code index}'s host bytes: a buffer at position 0 on each call (the service fills and reads it by
     * relative puts and gets), native order.
     */
    ByteBuffer buffer(int index);

    /** Runs the function on the arguments; the outputs are in their buffers when it returns. */
    void run();

    @Override
    void close();

    /** On the CPU: the kernel runs on the workspace's own buffers ({@link Kernel.Workspace}). */
    static Runner onCpu(Kernel kernel, List<Kernel.TensorSpec> specs) {
        Kernel.Workspace w = kernel.newWorkspace(specs);
        return new Runner() {
            @Override
            public ByteBuffer buffer(int index) {
                return w.buffer(index);
            }

            @Override
            public void run() {
                w.call();
            }

            @Override
            public void close() {
                w.close();
            }
        };
    }

    /**
     * On a device ({@link DeviceWorkspace}): inputs are staged on the host, copied over, the kernel launched on the
     * memory's stream, the outputs copied back (pinned staging and a stream per thread under CUDA).
     */
    static Runner onDevice(Kernel kernel, Manifest.Function function, Supplier<DeviceMemory> memories) {
        DeviceWorkspace w = DeviceWorkspace.create(kernel, function.specs(), memories.get());
        int[] inputs = function.inputs().stream().mapToInt(Manifest.Argument::index).toArray();
        int[] outputs = function.outputs().stream().mapToInt(Manifest.Argument::index).toArray();
        return new Runner() {
            @Override
            public ByteBuffer buffer(int index) {
                return w.host(index);
            }

            @Override
            public void run() {
                w.upload(inputs);
                w.call();
                w.download(outputs);
            }

            @Override
            public void close() {
                w.close();
            }
        };
    }
}
