package org.axe4j.bench.jvm;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.axe4j.bench.onnx.OnnxModel;

/**
 * The same workload as an ONNX model in ONNX Runtime's Java API: {@code threads} intra-op threads with spinning off
 * ({@code session.intra_op.allow_spinning = 0}), one inter-op thread, sequential execution, all graph optimizations.
 * Inputs and the output are tensors over direct buffers made once; {@code run} writes into the pinned output.
 */
final class OrtSide implements Side {
    private final OrtSession session;
    private final List<ByteBuffer> inputs = new ArrayList<>();
    private final Map<String, OnnxTensor> inputTensors = new LinkedHashMap<>();
    private final Map<String, OnnxTensor> pinned;
    private final ByteBuffer output;

    OrtSide(OnnxModel model, int threads) throws OrtException {
        OrtEnvironment env = OrtEnvironment.getEnvironment();
        try (OrtSession.SessionOptions options = new OrtSession.SessionOptions()) {
            options.setIntraOpNumThreads(threads);
            options.setInterOpNumThreads(1);
            options.setExecutionMode(OrtSession.SessionOptions.ExecutionMode.SEQUENTIAL);
            options.setOptimizationLevel(OrtSession.SessionOptions.OptLevel.ALL_OPT);
            options.addConfigEntry("session.intra_op.allow_spinning", "0");
            session = env.createSession(model.toBytes(), options);
        }
        for (OnnxModel.Value v : model.graph().inputs()) {
            ByteBuffer b = floats(v.dims());
            inputs.add(b);
            inputTensors.put(v.name(), OnnxTensor.createTensor(env, b.asFloatBuffer(), v.dims()));
        }
        OnnxModel.Value out = model.graph().outputs().get(0);
        output = floats(out.dims());
        pinned = Map.of(out.name(), OnnxTensor.createTensor(env, output.asFloatBuffer(), out.dims()));
    }

    private static ByteBuffer floats(long[] dims) {
        long n = 1;
        for (long d : dims) {
            n *= d;
        }
        return ByteBuffer.allocateDirect(Math.toIntExact(n * Float.BYTES)).order(ByteOrder.nativeOrder());
    }

    /** The inputs' count; their bytes ({@link #bytes}) come first, the output's last. */
    int inputs() {
        return inputs.size();
    }

    /** Input {@code index}'s bytes, or the output's at {@code index == inputs()} (native order, shared). */
    ByteBuffer bytes(int index) {
        return index < inputs.size() ? inputs.get(index) : output;
    }

    @Override
    public String name() {
        return "ort";
    }

    @Override
    public FloatBuffer input(int index) {
        return inputs.get(index).asFloatBuffer();
    }

    @Override
    public void run() throws OrtException {
        session.run(inputTensors, pinned).close();   // the Result does not own pinned outputs
    }

    @Override
    public FloatBuffer output() {
        return output.asFloatBuffer();
    }

    void closeQuietly() {
        try {
            close();
        } catch (OrtException ignored) {
            // closing native handles; nothing to recover
        }
    }

    @Override
    public void close() throws OrtException {
        inputTensors.values().forEach(OnnxTensor::close);
        pinned.values().forEach(OnnxTensor::close);
        session.close();
    }
}
