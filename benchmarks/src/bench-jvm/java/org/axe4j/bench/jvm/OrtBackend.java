package org.axe4j.bench.jvm;

import ai.onnxruntime.OrtException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.function.Supplier;
import org.axe4j.bench.onnx.OnnxModel;
import org.axe4j.serve.Backend;
import org.axe4j.serve.Runner;
import org.axe4j.tvm.Kernel;

/**
 * ONNX Runtime behind {@code axe serve}'s own server code: each runner is an {@link OrtSide} (a session with its
 * tensors made once, the output pinned), whose buffers are the request's arguments in manifest order (the model's
 * inputs, then its one output).
 */
final class OrtBackend implements Backend {
    private final OnnxModel model;
    private final int threads;

    OrtBackend(OnnxModel model, int threads) {
        this.model = model;
        this.threads = threads;
    }

    @Override
    public Supplier<Runner> runners(String function, List<Kernel.TensorSpec> args) {
        int inputs = model.graph().inputs().size();
        if (args.size() != inputs + 1) {
            throw new IllegalArgumentException(function + " has " + args.size() + " arguments; the ONNX model has "
                    + inputs + " inputs and one output");
        }
        return () -> {
            OrtSide side;
            try {
                side = new OrtSide(model, threads);
            } catch (OrtException e) {
                throw new IllegalStateException("ONNX Runtime session for " + function + ": " + e.getMessage(), e);
            }
            for (int i = 0; i < args.size(); i++) {
                if (side.bytes(i).capacity() != args.get(i).bytes()) {
                    side.closeQuietly();
                    throw new IllegalArgumentException(function + " argument " + i + ": " + args.get(i).bytes()
                            + " bytes in the manifest, " + side.bytes(i).capacity() + " in the ONNX model");
                }
            }
            return new Runner() {
                @Override
                public ByteBuffer buffer(int index) {   // position 0 each time, as the service fills it by put
                    return side.bytes(index).duplicate().order(ByteOrder.nativeOrder());
                }

                @Override
                public void run() {
                    try {
                        side.run();
                    } catch (OrtException e) {
                        throw new IllegalStateException("ONNX Runtime: " + e.getMessage(), e);
                    }
                }

                @Override
                public void close() {
                    side.closeQuietly();
                }
            };
        };
    }
}
