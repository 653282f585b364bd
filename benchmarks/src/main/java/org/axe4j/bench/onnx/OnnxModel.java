package org.axe4j.bench.onnx;

import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A float32 ONNX model of one graph, written as {@code onnx.proto}'s {@code ModelProto} (IR version 9) without the
 * onnx package: only the fields a graph of standard operators with float32 inputs and outputs needs. Immutable.
 *
 * <p>Field numbers (onnx.proto): ModelProto ir_version 1, opset_import 8, producer_name 2, graph 7;
 * OperatorSetIdProto domain 1, version 2; GraphProto node 1, name 2, initializer 5, input 11, output 12; TensorProto
 * dims 1, data_type 2, name 8, raw_data 9; NodeProto input 1, output 2,
 * name 3, op_type 4, attribute 5; AttributeProto name 1, f 2, i 3, s 4, type 20 (FLOAT 1, INT 2, STRING 3);
 * ValueInfoProto name 1, type 2; TypeProto tensor_type 1; TypeProto.Tensor elem_type 1 (FLOAT 1), shape 2;
 * TensorShapeProto dim 1; Dimension dim_value 1.
 */
public record OnnxModel(int opset, Graph graph) {
    public static final long IR_VERSION = 9;
    /** Gelu (with approximate = "tanh") is in the default domain from opset 20. */
    public static final int OPSET = 20;
    static final int FLOAT = 1;

    /** A float32 graph input or output of fixed shape. */
    public record Value(String name, long... dims) {
        public Value {
            dims = dims.clone();
            for (long d : dims) {
                if (d < 1) {
                    throw new IllegalArgumentException("ONNX value " + name + ": dimension " + d + " of "
                            + java.util.Arrays.toString(dims) + " must be positive");
                }
            }
        }

        @Override
        public long[] dims() {
            return dims.clone();
        }
    }

    /** One operator: attribute values are Float, Long or String. */
    public record Node(String opType, List<String> inputs, List<String> outputs, Map<String, Object> attributes) {
        public Node {
            inputs = List.copyOf(inputs);
            outputs = List.copyOf(outputs);
            attributes = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(attributes));
            for (Map.Entry<String, Object> a : attributes.entrySet()) {
                if (!(a.getValue() instanceof Float || a.getValue() instanceof Long || a.getValue() instanceof String)) {
                    throw new IllegalArgumentException("ONNX node " + opType + ": attribute " + a.getKey() + " = "
                            + a.getValue() + " is not a Float, Long or String");
                }
            }
        }

        public Node(String opType, List<String> inputs, String output) {
            this(opType, inputs, List.of(output), Map.of());
        }
    }

    /** A float32 constant of the graph (an ONNX initializer): its values row-major. */
    public record Constant(String name, long[] dims, float[] values) {
        public Constant {
            dims = new Value(name, dims).dims();
            values = values.clone();
            long count = 1;
            for (long d : dims) {
                count *= d;
            }
            if (values.length != count) {
                throw new IllegalArgumentException("ONNX constant " + name + ": " + values.length
                        + " values for dims " + java.util.Arrays.toString(dims) + " (" + count + ")");
            }
        }

        @Override
        public long[] dims() {
            return dims.clone();
        }

        @Override
        public float[] values() {
            return values.clone();
        }
    }

    /**
     * Nodes in execution order: each reads graph inputs, constants or outputs of nodes before it. Immutable.
     */
    public record Graph(String name, List<Node> nodes, List<Value> inputs, List<Value> outputs,
                        List<Constant> constants) {
        public Graph {
            nodes = List.copyOf(nodes);
            inputs = List.copyOf(inputs);
            outputs = List.copyOf(outputs);
            constants = List.copyOf(constants);
            Set<String> defined = new HashSet<>();
            for (String given : java.util.stream.Stream.concat(inputs.stream().map(Value::name),
                    constants.stream().map(Constant::name)).toList()) {
                if (!defined.add(given)) {
                    throw new IllegalArgumentException("ONNX graph " + name + ": " + given
                            + " is defined twice (inputs and constants)");
                }
            }
            for (Node n : nodes) {
                for (String in : n.inputs()) {
                    if (!defined.contains(in)) {
                        throw new IllegalArgumentException("ONNX graph " + name + ": node " + n.opType() + " reads "
                                + in + ", which no input, constant or earlier node defines");
                    }
                }
                defined.addAll(n.outputs());
            }
            for (Value v : outputs) {
                if (!defined.contains(v.name())) {
                    throw new IllegalArgumentException("ONNX graph " + name + ": output " + v.name()
                            + " is not computed by any node");
                }
            }
        }

        public Graph(String name, List<Node> nodes, List<Value> inputs, List<Value> outputs) {
            this(name, nodes, inputs, outputs, List.of());
        }
    }

    /**
     * This model with the inputs named in {@code values} turned into constants holding those values (a model's
     * weights, which a runtime may prepare once when it loads the model).
     *
     * @throws IllegalArgumentException naming an input the graph does not have, or a size that does not match
     */
    public OnnxModel withConstants(Map<String, float[]> values) {
        List<Value> inputs = new java.util.ArrayList<>();
        List<Constant> constants = new java.util.ArrayList<>(graph.constants());
        for (Value v : graph.inputs()) {
            float[] given = values.get(v.name());
            if (given == null) {
                inputs.add(v);
            } else {
                constants.add(new Constant(v.name(), v.dims(), given));
            }
        }
        for (String name : values.keySet()) {
            if (graph.inputs().stream().noneMatch(v -> v.name().equals(name))) {
                throw new IllegalArgumentException("ONNX graph " + graph.name() + " has no input " + name
                        + " to make a constant");
            }
        }
        return new OnnxModel(opset, new Graph(graph.name(), graph.nodes(), inputs, graph.outputs(), constants));
    }

    /** C = A @ B, n x n. */
    public static OnnxModel matMul(long n) {
        return new OnnxModel(OPSET, new Graph("gemm", List.of(new Node("MatMul", List.of("A", "B"), "C")),
                List.of(new Value("A", n, n), new Value("B", n, n)), List.of(new Value("C", n, n))));
    }

    /** Y = gelu_tanh(A @ B + bias), n x n. */
    public static OnnxModel matMulBiasGelu(long n) {
        return new OnnxModel(OPSET, new Graph("gemm_bias_gelu", List.of(
                new Node("MatMul", List.of("A", "B"), "AB"),
                new Node("Add", List.of("AB", "bias"), "Z"),
                new Node("Gelu", List.of("Z"), List.of("Y"), Map.of("approximate", "tanh"))),
                List.of(new Value("A", n, n), new Value("B", n, n), new Value("bias", n)),
                List.of(new Value("Y", n, n))));
    }

    /** Y = LayerNormalization over the last axis of X (rows x cols), scale gamma, bias beta. */
    public static OnnxModel layerNorm(long rows, long cols, float epsilon) {
        return new OnnxModel(OPSET, new Graph("layernorm", List.of(
                new Node("LayerNormalization", List.of("X", "gamma", "beta"), List.of("Y"),
                        Map.of("axis", -1L, "epsilon", epsilon))),
                List.of(new Value("X", rows, cols), new Value("gamma", cols), new Value("beta", cols)),
                List.of(new Value("Y", rows, cols))));
    }

    /** Y = Softmax over the last axis of X (rows x cols). */
    public static OnnxModel softmax(long rows, long cols) {
        return new OnnxModel(OPSET, new Graph("softmax", List.of(
                new Node("Softmax", List.of("X"), List.of("Y"), Map.of("axis", -1L))),
                List.of(new Value("X", rows, cols)), List.of(new Value("Y", rows, cols))));
    }

    /** The model's bytes, as {@code onnx.ModelProto.SerializeToString()} would give them. */
    public byte[] toBytes() {
        Protobuf graphMessage = new Protobuf();
        for (Node n : graph.nodes()) {
            graphMessage.message(1, node(n));
        }
        graphMessage.string(2, graph.name());
        graph.constants().forEach(c -> graphMessage.message(5, constant(c)));
        graph.inputs().forEach(v -> graphMessage.message(11, value(v)));
        graph.outputs().forEach(v -> graphMessage.message(12, value(v)));
        return new Protobuf()
                .varint(1, IR_VERSION)
                .string(2, "axe4j-bench")
                .message(7, graphMessage)
                .message(8, new Protobuf().string(1, "").varint(2, opset))
                .toBytes();
    }

    private static Protobuf node(Node n) {
        Protobuf p = new Protobuf();
        n.inputs().forEach(i -> p.string(1, i));
        n.outputs().forEach(o -> p.string(2, o));
        p.string(3, n.opType() + "_" + n.outputs().get(0));
        p.string(4, n.opType());
        for (Map.Entry<String, Object> a : n.attributes().entrySet()) {
            Protobuf attribute = new Protobuf().string(1, a.getKey());
            if (a.getValue() instanceof Float f) {
                attribute.float32(2, f).varint(20, 1);
            } else if (a.getValue() instanceof Long i) {
                attribute.varint(3, i).varint(20, 2);
            } else {
                attribute.string(4, (String) a.getValue()).varint(20, 3);
            }
            p.message(5, attribute);
        }
        return p;
    }

    /** TensorProto: dims, data_type FLOAT, name, raw_data (the floats little-endian). */
    private static Protobuf constant(Constant c) {
        Protobuf p = new Protobuf();
        for (long d : c.dims()) {
            p.varint(1, d);
        }
        float[] values = c.values();
        java.nio.ByteBuffer raw = java.nio.ByteBuffer.allocate(values.length * Float.BYTES)
                .order(java.nio.ByteOrder.LITTLE_ENDIAN);
        raw.asFloatBuffer().put(values);
        return p.varint(2, FLOAT).string(8, c.name()).bytes(9, raw.array());
    }

    private static Protobuf value(Value v) {
        Protobuf shape = new Protobuf();
        for (long d : v.dims()) {
            shape.message(1, new Protobuf().varint(1, d));
        }
        Protobuf tensorType = new Protobuf().varint(1, FLOAT).message(2, shape);
        return new Protobuf().string(1, v.name()).message(2, new Protobuf().message(1, tensorType));
    }
}
