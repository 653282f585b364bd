package org.axe4j.bench.jvm;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.IOException;
import java.nio.FloatBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.axe4j.tvm.DataType;
import org.axe4j.tvm.Kernel;
import org.axe4j.tvm.TvmModule;

/**
 * A kernel axe4j compiled and {@code export_library} wrote, loaded by its manifest as {@code axe serve} does: one
 * {@link Kernel.Workspace} (a tensor per argument over a direct buffer, the call frame encoded once), its inputs
 * first and its one output last.
 */
final class AxeSide implements Side {
    private final TvmModule module;
    private final Kernel kernel;
    private final Kernel.Workspace workspace;
    private final int outputIndex;

    AxeSide(Path library, String function) throws IOException {
        JsonObject manifest = JsonParser.parseString(
                Files.readString(library.resolveSibling(library.getFileName() + ".manifest.json"))).getAsJsonObject();
        JsonObject described = null;
        for (JsonElement f : manifest.getAsJsonArray("functions")) {
            if (f.getAsJsonObject().get("name").getAsString().equals(function)) {
                described = f.getAsJsonObject();
            }
        }
        if (described == null) {
            throw new IllegalArgumentException(library + ": the manifest has no function " + function);
        }
        List<Kernel.TensorSpec> specs = new ArrayList<>();
        JsonArray args = described.getAsJsonArray("args");
        for (int i = 0; i < args.size(); i++) {
            JsonObject a = args.get(i).getAsJsonObject();
            boolean last = i == args.size() - 1;
            if (!a.get("dtype").getAsString().equals("float32") || a.get("role").getAsString().equals("output") != last) {
                throw new IllegalArgumentException(library + ": " + function + " must take float32 inputs and one "
                        + "float32 output last; argument " + i + " is " + a);
            }
            long[] shape = new long[a.getAsJsonArray("shape").size()];
            for (int d = 0; d < shape.length; d++) {
                shape[d] = a.getAsJsonArray("shape").get(d).getAsLong();
            }
            specs.add(new Kernel.TensorSpec(shape, DataType.FLOAT32));
        }
        module = TvmModule.load(library);
        kernel = Kernel.of(module, function);
        workspace = kernel.newWorkspace(specs);
        outputIndex = specs.size() - 1;
    }

    @Override
    public String name() {
        return "axe4j";
    }

    @Override
    public FloatBuffer input(int index) {
        if (index >= outputIndex) {
            throw new IndexOutOfBoundsException("input " + index + " of " + outputIndex + " of " + kernel.name());
        }
        return workspace.buffer(index).asFloatBuffer();
    }

    @Override
    public void run() {
        workspace.call();
    }

    @Override
    public FloatBuffer output() {
        return workspace.buffer(outputIndex).asFloatBuffer();
    }

    @Override
    public void close() {
        workspace.close();
        kernel.close();
        module.close();
    }
}
