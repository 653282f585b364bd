package org.axe4j.serve;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.axe4j.tvm.DataType;
import org.axe4j.tvm.Kernel;

/**
 * What {@code axe4j.export_library} writes beside a library, {@code <lib>.manifest.json}: the device and each
 * function's tensor arguments in call order, with shape, dtype and role ({@code input}, {@code output} or
 * {@code inout}). Immutable.
 */
record Manifest(Path library, String device, String arch, Map<String, Function> functions) {
    static final String SUFFIX = ".manifest.json";

    /** One tensor argument. */
    record Argument(int index, String name, long[] shape, DataType dtype, String role) {
        boolean isInput() {
            return !role.equals("output");
        }

        boolean isOutput() {
            return !role.equals("input");
        }

        Kernel.TensorSpec spec() {
            return new Kernel.TensorSpec(shape, dtype);
        }

        long bytes() {
            return spec().bytes();
        }

        /** e.g. {@code A float32[33, 47]}. */
        String describe() {
            return name + " " + dtype + Arrays.toString(shape);
        }
    }

    /** One function: its arguments in call order; inputs and outputs in that order too. */
    record Function(String name, List<Argument> args) {
        List<Argument> inputs() {
            return args.stream().filter(Argument::isInput).toList();
        }

        List<Argument> outputs() {
            return args.stream().filter(Argument::isOutput).toList();
        }

        List<Kernel.TensorSpec> specs() {
            return args.stream().map(Argument::spec).toList();
        }

        long inputBytes() {
            return inputs().stream().mapToLong(Argument::bytes).sum();
        }

        long outputBytes() {
            return outputs().stream().mapToLong(Argument::bytes).sum();
        }
    }

    Manifest {
        functions = Map.copyOf(functions);
    }

    boolean onCuda() {
        return device.equals("cuda");
    }

    static Path of(Path library) {
        return library.resolveSibling(library.getFileName() + SUFFIX);
    }

    /**
     * Reads the manifest beside {@code library}.
     *
     * @throws IllegalArgumentException naming the file and the field when it is missing or malformed
     */
    static Manifest read(Path library) {
        Path file = of(library);
        String text;
        try {
            text = Files.readString(file);
        } catch (NoSuchFileException e) {
            throw new IllegalArgumentException("no manifest " + file + " beside the module: export it with "
                    + "axe4j.export_library (from axe4j.compile, or with functions=)");
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read the manifest " + file + ": " + e.getMessage());
        }
        try {
            return parse(library, JsonParser.parseString(text).getAsJsonObject());
        } catch (JsonParseException | IllegalStateException | UnsupportedOperationException | NullPointerException
                | ClassCastException e) {
            throw new IllegalArgumentException("the manifest " + file + " is malformed: " + e.getMessage());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("the manifest " + file + ": " + e.getMessage(), e);
        }
    }

    static Manifest parse(Path library, JsonObject json) {
        JsonObject device = required(json, "device").getAsJsonObject();
        String kind = required(device, "kind").getAsString();
        if (!kind.equals("cpu") && !kind.equals("cuda")) {
            throw new IllegalArgumentException("device kind '" + kind + "' is not cpu or cuda");
        }
        String arch = kind.equals("cuda") ? required(device, "arch").getAsString() : "";
        Map<String, Function> functions = new LinkedHashMap<>();
        for (JsonElement f : required(json, "functions").getAsJsonArray()) {
            JsonObject function = f.getAsJsonObject();
            String name = required(function, "name").getAsString();
            List<Argument> args = new ArrayList<>();
            JsonArray list = required(function, "args").getAsJsonArray();
            for (int i = 0; i < list.size(); i++) {
                JsonObject a = list.get(i).getAsJsonObject();
                JsonArray dims = required(a, "shape").getAsJsonArray();
                long[] shape = new long[dims.size()];
                for (int d = 0; d < shape.length; d++) {
                    shape[d] = dims.get(d).getAsLong();
                    if (shape[d] < 0) {
                        throw new IllegalArgumentException("function " + name + " argument " + i + " has extent "
                                + shape[d]);
                    }
                }
                String role = required(a, "role").getAsString();
                if (!List.of("input", "output", "inout").contains(role)) {
                    throw new IllegalArgumentException("function " + name + " argument " + i + " has role '" + role
                            + "' (input, output or inout)");
                }
                args.add(new Argument(i, required(a, "name").getAsString(), shape,
                        DataType.parse(required(a, "dtype").getAsString()), role));
            }
            if (args.isEmpty()) {
                throw new IllegalArgumentException("function " + name + " has no tensor arguments");
            }
            functions.put(name, new Function(name, List.copyOf(args)));
        }
        if (functions.isEmpty()) {
            throw new IllegalArgumentException("no functions");
        }
        return new Manifest(library, kind, arch, functions);
    }

    private static JsonElement required(JsonObject o, String field) {
        JsonElement e = o.get(field);
        if (e == null || e.isJsonNull()) {
            throw new IllegalArgumentException("field '" + field + "' is missing");
        }
        return e;
    }
}
