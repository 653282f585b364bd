package org.axe4j.schedules;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import org.axe4j.tvm.Device;
import org.axe4j.tvm.Tvm;
import org.axe4j.tvm.TvmModule;
import org.axe4j.tvm.TvmTensor;

/**
 * The JVM-hosted path: loads a module exported with {@code export_library}, calls one function on 1-D float32
 * tensors read from raw little-endian files, and writes every tensor back after the call. No Python in the process.
 *
 * <pre>usage: RunExported LIBRARY.so FUNCTION IN_OUT_0.f32 [IN_OUT_1.f32 ...]</pre>
 * Each file is read into a CPU tensor before the call and overwritten with the tensor's contents after it.
 */
public final class RunExported {
    private RunExported() {}

    public static void main(String[] args) throws IOException {
        if (args.length < 3) {
            System.err.println("usage: RunExported LIBRARY.so FUNCTION IN_OUT_0.f32 [IN_OUT_1.f32 ...]");
            System.exit(2);
        }
        Tvm.load();
        TvmModule module = TvmModule.load(Path.of(args[0]));
        TvmTensor[] tensors = new TvmTensor[args.length - 2];
        for (int i = 0; i < tensors.length; i++) {
            float[] values = read(Path.of(args[i + 2]));
            tensors[i] = TvmTensor.empty(new long[] {values.length}, Tvm.parseDataType("float32"), Device.cpu())
                    .copyFrom(values);
        }
        module.function(args[1]).call((Object[]) tensors);
        for (int i = 0; i < tensors.length; i++) {
            write(Path.of(args[i + 2]), tensors[i].toFloatArray());
        }
        System.out.println("ran " + args[1] + " of " + args[0] + " on " + tensors.length + " tensors");
    }

    private static float[] read(Path file) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.LITTLE_ENDIAN);
        float[] out = new float[b.remaining() / 4];
        b.asFloatBuffer().get(out);
        return out;
    }

    private static void write(Path file, float[] values) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(values.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        b.asFloatBuffer().put(values);
        Files.write(file, b.array());
    }
}
