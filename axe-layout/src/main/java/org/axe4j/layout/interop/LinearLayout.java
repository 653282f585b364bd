package org.axe4j.layout.interop;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;
import org.axe4j.layout.AxeException;

/**
 * A Triton linear layout: a map over GF(2) from named input dimensions (hardware: {@code register},
 * {@code lane}, {@code warp}, or any axis) to named output dimensions (logical: {@code dim0}, {@code dim1}, ...).
 *
 * <pre>
 *   input dim i has b_i bits: values in [0, 2^b_i);  output dim k has c_k bits: values in [0, 2^c_k)
 *   basis(i, j) = the output vector of input i = 2^j (all other inputs 0)
 *   apply(x_0, ..., x_{n-1}) = XOR over every set bit j of every x_i of basis(i, j)
 * </pre>
 *
 * Example (from Triton's documentation): inputs t and w of 2 bits each, outputs of 2 bits, with
 * {@code basis(w,0) = (0,1)}, {@code basis(w,1) = (0,2)}, {@code basis(t,0) = (1,1)}, {@code basis(t,1) = (2,2)};
 * then {@code apply(t=1, w=3) = (1,1) xor (0,1) xor (0,2) = (1,2)}.
 *
 * <p>Immutable; {@link #checkInvariants} is the one validator: the constructor throws its message and
 * {@link #tryCreate} returns empty.
 */
public final class LinearLayout {
    private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_.]*");

    /** A named dimension with a bit count in [0, 62]. */
    public record Dim(String name, int bits) {
        public Dim {
            if (name == null || !NAME.matcher(name).matches()) {
                throw new AxeException(AxeException.Kind.INVALID,
                        "linear layout dimension name (" + name + ") must be an identifier");
            }
            if (bits < 0 || bits > 62) {
                throw new AxeException(AxeException.Kind.INVALID,
                        "linear layout dimension " + name + " bit count (" + bits + ") must be in [0, 62]");
            }
        }

        /** {@code 2^bits}: the number of values of this dimension. */
        public long size() {
            return 1L << bits;
        }
    }

    private final List<Dim> inputs;
    private final List<Dim> outputs;
    /** {@code bases[i][j][k]}: component k of the image of input i = 2^j. */
    private final long[][][] bases;

    /**
     * A linear layout; {@code bases.get(i).get(j)} is the image of input {@code i} = {@code 2^j}, one
     * value per output dimension. Throws INVALID with {@link #checkInvariants}'s message.
     */
    public LinearLayout(List<Dim> inputs, List<Dim> outputs, List<List<List<Long>>> bases) {
        this.inputs = List.copyOf(inputs);
        this.outputs = List.copyOf(outputs);
        Optional<String> broken = checkInvariants(this.inputs, this.outputs, bases);
        if (broken.isPresent()) {
            throw new AxeException(AxeException.Kind.INVALID, broken.get());
        }
        this.bases = new long[inputs.size()][][];
        for (int i = 0; i < inputs.size(); i++) {
            this.bases[i] = new long[inputs.get(i).bits()][];
            for (int j = 0; j < inputs.get(i).bits(); j++) {
                this.bases[i][j] = bases.get(i).get(j).stream().mapToLong(Long::longValue).toArray();
            }
        }
    }

    /** The layout, or empty when {@link #checkInvariants} finds a broken rule. */
    public static Optional<LinearLayout> tryCreate(List<Dim> inputs, List<Dim> outputs, List<List<List<Long>>> bases) {
        if (checkInvariants(inputs, outputs, bases).isPresent()) {
            return Optional.empty();
        }
        return Optional.of(new LinearLayout(inputs, outputs, bases));
    }

    /**
     * The first broken rule, if any: distinct input names, distinct output names, one basis per input bit,
     * one component per output dimension, each component in {@code [0, 2^c_k)}.
     */
    public static Optional<String> checkInvariants(List<Dim> inputs, List<Dim> outputs, List<List<List<Long>>> bases) {
        for (List<Dim> dims : List.of(inputs, outputs)) {
            Set<String> seen = new HashSet<>();
            for (Dim d : dims) {
                if (!seen.add(d.name())) {
                    return Optional.of("linear layout dimension name " + d.name() + " appears twice in " + dims);
                }
            }
        }
        if (bases.size() != inputs.size()) {
            return Optional.of("linear layout has " + inputs.size() + " input dimensions but " + bases.size()
                    + " lists of bases");
        }
        for (int i = 0; i < inputs.size(); i++) {
            Dim in = inputs.get(i);
            if (bases.get(i).size() != in.bits()) {
                return Optional.of("input " + in.name() + " has " + in.bits() + " bits but " + bases.get(i).size()
                        + " bases");
            }
            for (int j = 0; j < in.bits(); j++) {
                List<Long> v = bases.get(i).get(j);
                if (v.size() != outputs.size()) {
                    return Optional.of("basis " + in.name() + "=" + (1L << j) + " has " + v.size()
                            + " components but there are " + outputs.size() + " output dimensions");
                }
                for (int k = 0; k < v.size(); k++) {
                    long c = v.get(k);
                    if (c < 0 || c >= outputs.get(k).size()) {
                        return Optional.of("basis " + in.name() + "=" + (1L << j) + " component " + outputs.get(k).name()
                                + " (" + c + ") is outside [0, " + outputs.get(k).size() + ")");
                    }
                }
            }
        }
        return Optional.empty();
    }

    public List<Dim> inputs() {
        return inputs;
    }

    public List<Dim> outputs() {
        return outputs;
    }

    /** The index of the input dimension named {@code name}. */
    public int inputIndex(String name) {
        for (int i = 0; i < inputs.size(); i++) {
            if (inputs.get(i).name().equals(name)) {
                return i;
            }
        }
        throw new AxeException(AxeException.Kind.INVALID, "linear layout " + this + " has no input " + name);
    }

    /** The image of input {@code i} = {@code 2^bit}, one value per output dimension. */
    public long[] basis(int i, int bit) {
        if (i < 0 || i >= inputs.size() || bit < 0 || bit >= inputs.get(i).bits()) {
            throw new AxeException(AxeException.Kind.INVALID, "linear layout " + this + " has no basis (" + i + ", "
                    + bit + ")");
        }
        return bases[i][bit].clone();
    }

    /** The output for one value per input dimension: the XOR of the bases of the set bits. */
    public long[] apply(long... input) {
        if (input.length != inputs.size()) {
            throw new AxeException(AxeException.Kind.INVALID, "linear layout " + this + " takes " + inputs.size()
                    + " inputs, got " + Arrays.toString(input));
        }
        long[] out = new long[outputs.size()];
        for (int i = 0; i < input.length; i++) {
            if (input[i] < 0 || input[i] >= inputs.get(i).size()) {
                throw new AxeException(AxeException.Kind.INVALID, "input " + inputs.get(i).name() + " (" + input[i]
                        + ") is outside [0, " + inputs.get(i).size() + ")");
            }
            for (int j = 0; j < inputs.get(i).bits(); j++) {
                if ((input[i] >> j & 1) != 0) {
                    for (int k = 0; k < out.length; k++) {
                        out[k] ^= bases[i][j][k];
                    }
                }
            }
        }
        return out;
    }

    /** The number of input points: {@code 2^(sum of input bits)}. */
    public long inputSize() {
        long n = 1;
        for (Dim d : inputs) {
            n = Math.multiplyExact(n, d.size());
        }
        return n;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof LinearLayout l && inputs.equals(l.inputs) && outputs.equals(l.outputs)
                && Arrays.deepEquals(bases, l.bases);
    }

    @Override
    public int hashCode() {
        return 31 * (31 * inputs.hashCode() + outputs.hashCode()) + Arrays.deepHashCode(bases);
    }

    /** {@code [register: (0,1) (0,2); lane: (1,0)] -> (dim0:1, dim1:2)}: bases per input, then output bit counts. */
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < inputs.size(); i++) {
            sb.append(i > 0 ? "; " : "").append(inputs.get(i).name()).append(':');
            for (long[] v : bases[i]) {
                sb.append(' ').append(tuple(v));
            }
        }
        sb.append("] -> (");
        for (int k = 0; k < outputs.size(); k++) {
            sb.append(k > 0 ? ", " : "").append(outputs.get(k).name()).append(':').append(outputs.get(k).bits());
        }
        return sb.append(')').toString();
    }

    static String tuple(long[] v) {
        StringBuilder sb = new StringBuilder("(");
        for (int k = 0; k < v.length; k++) {
            sb.append(k > 0 ? "," : "").append(v[k]);
        }
        return sb.append(')').toString();
    }

    /** Bases as nested lists, for building a new layout from this one. */
    List<List<List<Long>>> basesAsLists() {
        List<List<List<Long>>> out = new ArrayList<>();
        for (long[][] in : bases) {
            List<List<Long>> bits = new ArrayList<>();
            for (long[] v : in) {
                bits.add(Arrays.stream(v).boxed().toList());
            }
            out.add(bits);
        }
        return out;
    }
}
