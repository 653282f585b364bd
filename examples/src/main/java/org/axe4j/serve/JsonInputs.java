package org.axe4j.serve;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.axe4j.tvm.DataType;

/**
 * Reads a JSON request's inputs straight from the body's bytes into the worker's input buffers, without a tree or
 * strings: the plain form only,
 * <pre>{"inputs": {"NAME": nested arrays of the argument's shape, ...}}</pre>
 * with every input once, float elements any JSON number, integer elements plain integers, bool elements true or
 * false. Anything else (another top-level key, the tagged {"dtype", "data"} form, escapes in a name, a number an
 * element cannot hold, a wrong shape, bad JSON...) makes {@link #read} return false having decided nothing: the
 * caller then reads the body with Gson's tree ({@link Tensors#fill}), which accepts what it accepted before and
 * names the problem. So both readers agree on every body the fast one takes.
 */
final class JsonInputs {
    private final byte[] body;
    private final int end;
    private int at;

    private JsonInputs(byte[] body, int length) {
        this.body = body;
        this.end = length;
    }

    /**
     * Writes {@code f}'s inputs from {@code body[0, length)} into {@code runner}'s buffers; false when the body is
     * not in the plain form (the buffers may then hold part of it).
     */
    static boolean read(byte[] body, int length, Manifest.Function f, Runner runner) {
        return new JsonInputs(body, length).inputs(f, runner);
    }

    /** {@code text} read as one JSON number the way {@link #read} reads an element; NaN if it is not one. */
    static double number(String text) {
        byte[] bytes = text.getBytes(StandardCharsets.ISO_8859_1);
        JsonInputs reader = new JsonInputs(bytes, bytes.length);
        double d = reader.number();
        return reader.at == bytes.length ? d : Double.NaN;
    }

    private boolean inputs(Manifest.Function f, Runner runner) {
        if (!take('{') || !key("inputs") || !take(':') || !take('{')) {
            return false;
        }
        List<Manifest.Argument> inputs = f.inputs();
        boolean[] seen = new boolean[inputs.size()];
        int count = 0;
        if (!take('}')) {
            do {
                int which = inputIndex(inputs);
                if (which < 0 || seen[which] || !take(':')) {
                    return false;
                }
                seen[which] = true;
                count++;
                Manifest.Argument a = inputs.get(which);
                if (!tensor(a, runner.buffer(a.index()))) {
                    return false;
                }
            } while (take(','));
            if (!take('}')) {
                return false;
            }
        }
        if (count != inputs.size() || !take('}')) {
            return false;
        }
        skipSpace();
        return at == end;
    }

    /** The index in {@code inputs} of the quoted name at the cursor (no escapes), or -1. */
    private int inputIndex(List<Manifest.Argument> inputs) {
        skipSpace();
        for (int i = 0; i < inputs.size(); i++) {
            int mark = at;
            if (key(inputs.get(i).name())) {
                return i;
            }
            at = mark;
        }
        return -1;
    }

    private boolean key(String name) {
        skipSpace();
        byte[] bytes = name.getBytes(StandardCharsets.UTF_8);
        if (at + bytes.length + 2 > end || body[at] != '"' || body[at + bytes.length + 1] != '"') {
            return false;
        }
        for (int i = 0; i < bytes.length; i++) {
            if (body[at + 1 + i] != bytes[i] || bytes[i] == '\\') {
                return false;
            }
        }
        at += bytes.length + 2;
        return true;
    }

    private boolean tensor(Manifest.Argument a, ByteBuffer into) {
        long[] shape = a.shape();
        long elements = 1;
        for (long extent : shape) {
            elements *= extent;
        }
        int size = a.dtype().bytes();
        int[] remaining = new int[shape.length];  // elements left in the array open at each depth
        int depth = 0;
        for (long n = 0; n < elements; n++) {
            while (depth < shape.length) {        // open arrays down to the elements
                if (!take('[')) {
                    return false;
                }
                remaining[depth] = (int) shape[depth];
                depth++;
            }
            if (!element(a.dtype(), into, (int) (n * size))) {
                return false;
            }
            while (depth > 0 && --remaining[depth - 1] == 0) {  // close every array now full
                if (!take(']')) {
                    return false;
                }
                depth--;
            }
            if (depth > 0 && !take(',')) {
                return false;
            }
        }
        return elements > 0 || emptyArrays(shape);
    }

    /** A shape with a zero extent: arrays down to it, then the empty one, e.g. [[], []] for [2, 0]. */
    private boolean emptyArrays(long[] shape) {
        for (int d = 0; d < shape.length; d++) {
            if (!take('[')) {
                return false;
            }
            if (shape[d] == 0) {
                for (int up = d; up >= 0; up--) {
                    if (!take(']')) {
                        return false;
                    }
                }
                return true;
            }
            if (shape[d] != 1) {
                return false;  // several arrays of empty arrays: left to the tree reader
            }
        }
        return false;
    }

    private boolean element(DataType t, ByteBuffer into, int offset) {
        skipSpace();
        if (t.code() == DataType.BOOL) {
            if (literal("true")) {
                into.put(offset, (byte) 1);
                return true;
            }
            if (literal("false")) {
                into.put(offset, (byte) 0);
                return true;
            }
            return false;
        }
        if (t.code() == DataType.FLOAT) {
            double d = number();
            if (Double.isNaN(d)) {
                return false;
            }
            if (t.bits() == 64) {
                into.putDouble(offset, d);
                return true;
            }
            float f = (float) d;
            if (Float.isInfinite(f)) {
                return false;  // out of float32's range: the tree reader says so
            }
            into.putFloat(offset, f);
            return true;
        }
        return integer(t, into, offset);
    }

    private boolean literal(String word) {
        if (at + word.length() > end) {
            return false;
        }
        for (int i = 0; i < word.length(); i++) {
            if (body[at + i] != word.charAt(i)) {
                return false;
            }
        }
        at += word.length();
        return true;
    }

    /** A JSON number at the cursor as the nearest double (as Double.parseDouble reads it), or NaN if none. */
    private double number() {
        int start = at;
        boolean negative = at < end && body[at] == '-';
        if (negative) {
            at++;
        }
        long w = 0;            // the first 19 significant digits, unsigned
        int digits = 0;
        int q = 0;             // w * 10^q, before the exponent
        boolean truncated = false;
        if (at < end && body[at] == '0') {
            at++;
        } else if (at < end && body[at] >= '1' && body[at] <= '9') {
            for (; at < end && body[at] >= '0' && body[at] <= '9'; at++) {
                if (digits < 19) {
                    w = w * 10 + (body[at] - '0');
                    digits++;
                } else {
                    q++;
                    truncated |= body[at] != '0';
                }
            }
        } else {
            return Double.NaN;
        }
        if (at < end && body[at] == '.') {
            at++;
            int first = at;
            for (; at < end && body[at] >= '0' && body[at] <= '9'; at++) {
                if (digits < 19) {
                    w = w * 10 + (body[at] - '0');
                    digits += w == 0 ? 0 : 1;  // leading zeros are not significant
                    q--;
                } else {
                    truncated |= body[at] != '0';
                }
            }
            if (at == first) {
                return Double.NaN;
            }
        }
        if (at < end && (body[at] == 'e' || body[at] == 'E')) {
            at++;
            boolean down = at < end && body[at] == '-';
            if (at < end && (body[at] == '-' || body[at] == '+')) {
                at++;
            }
            int first = at;
            int exponent = 0;
            for (; at < end && body[at] >= '0' && body[at] <= '9'; at++) {
                exponent = Math.min(exponent * 10 + (body[at] - '0'), 1_000_000);
            }
            if (at == first) {
                return Double.NaN;
            }
            q += down ? -exponent : exponent;
        }
        long bits = DecimalToDouble.bits(negative, w, q, truncated);
        if (bits == DecimalToDouble.UNDECIDED) {
            return Double.parseDouble(new String(body, start, at - start, StandardCharsets.ISO_8859_1));
        }
        return Double.longBitsToDouble(bits);
    }

    /** A plain JSON integer (no fraction or exponent: those go to the tree reader) in {@code t}'s range. */
    private boolean integer(DataType t, ByteBuffer into, int offset) {
        boolean negative = at < end && body[at] == '-';
        if (negative) {
            at++;
        }
        int first = at;
        long v = 0;
        for (; at < end && body[at] >= '0' && body[at] <= '9'; at++) {
            v = v * 10 + (body[at] - '0');
        }
        int length = at - first;
        if (length == 0 || length > 18 || length > 1 && body[first] == '0'
                || at < end && (body[at] == '.' || body[at] == 'e' || body[at] == 'E')) {
            return false;
        }
        v = negative ? -v : v;
        long min = t.code() == DataType.UINT ? 0 : -(1L << (t.bits() - 1));
        long max = t.bits() == 64 ? Long.MAX_VALUE : t.code() == DataType.UINT ? (1L << t.bits()) - 1
                : (1L << (t.bits() - 1)) - 1;
        if (v < min || v > max) {
            return false;
        }
        switch (t.bits()) {
            case 8 -> into.put(offset, (byte) v);
            case 16 -> into.putShort(offset, (short) v);
            case 32 -> into.putInt(offset, (int) v);
            default -> into.putLong(offset, v);
        }
        return true;
    }

    /** Skips JSON whitespace, then takes {@code c} if it is next. */
    private boolean take(char c) {
        skipSpace();
        if (at < end && body[at] == c) {
            at++;
            return true;
        }
        return false;
    }

    private void skipSpace() {
        while (at < end && (body[at] == ' ' || body[at] == '\n' || body[at] == '\r' || body[at] == '\t')) {
            at++;
        }
    }
}
