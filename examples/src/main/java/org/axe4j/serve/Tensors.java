package org.axe4j.serve;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.axe4j.tvm.DataType;

/**
 * Tensors between JSON and an argument's bytes (native order, row-major). A JSON tensor is nested arrays of the
 * argument's shape, or {@code {"dtype": "float32", "data": nested arrays}} where the dtype must be the argument's.
 * JSON carries the dtypes Java has numbers for: float32/64, int8..64, uint8/16/32, bool; others go in binary.
 */
final class Tensors {
    private Tensors() {}

    static boolean jsonSupports(DataType t) {
        if (t.lanes() != 1) {
            return false;
        }
        return switch (t.code()) {
            case DataType.FLOAT -> t.bits() == 32 || t.bits() == 64;
            case DataType.INT -> t.bits() == 8 || t.bits() == 16 || t.bits() == 32 || t.bits() == 64;
            case DataType.UINT -> t.bits() == 8 || t.bits() == 16 || t.bits() == 32;
            case DataType.BOOL -> true;
            default -> false;
        };
    }

    /** Writes the JSON tensor {@code value} into {@code into} (argument {@code arg}'s bytes). */
    static void fill(Manifest.Argument arg, JsonElement value, ByteBuffer into) throws HttpError {
        if (!jsonSupports(arg.dtype())) {
            throw new HttpError(415, "bad_dtype", "argument " + arg.describe() + ": dtype " + arg.dtype()
                    + " has no JSON form here; send this function's inputs as application/octet-stream");
        }
        if (value.isJsonObject()) {
            JsonObject tagged = value.getAsJsonObject();
            JsonElement dtype = tagged.get("dtype");
            if (dtype == null || !dtype.isJsonPrimitive() || !tagged.has("data")) {
                throw new HttpError(400, "bad_json", "argument " + arg.name() + ": an object must be {\"dtype\": ..., "
                        + "\"data\": [...]}");
            }
            if (!dtype.getAsString().equals(arg.dtype().toString())) {
                throw new HttpError(400, "bad_dtype", "argument " + arg.name() + ": expected dtype " + arg.dtype()
                        + ", given " + clip(dtype.getAsString()));
            }
            value = tagged.get("data");
        }
        long[] shape = arg.shape();
        List<Long> given = givenShape(value);
        if (!sameShape(shape, given)) {
            throw new HttpError(400, "bad_shape", "argument " + arg.name() + ": expected shape "
                    + Arrays.toString(shape) + " " + arg.dtype() + ", given shape " + given);
        }
        long[] at = new long[shape.length];
        put(arg, value, 0, at, into, new int[] {0});
    }

    /** The shape nested arrays seem to have, following first elements (a scalar has shape []). */
    private static List<Long> givenShape(JsonElement value) {
        List<Long> shape = new ArrayList<>();
        JsonElement e = value;
        while (e != null && e.isJsonArray()) {
            JsonArray a = e.getAsJsonArray();
            shape.add((long) a.size());
            e = a.isEmpty() ? null : a.get(0);
        }
        return shape;
    }

    private static boolean sameShape(long[] expected, List<Long> given) {
        if (expected.length != given.size()) {
            return expected.length == 0 && given.isEmpty();
        }
        for (int i = 0; i < expected.length; i++) {
            if (expected[i] != given.get(i)) {
                return false;
            }
        }
        return true;
    }

    private static void put(Manifest.Argument arg, JsonElement value, int depth, long[] at, ByteBuffer into,
                            int[] offset) throws HttpError {
        long[] shape = arg.shape();
        if (depth == shape.length) {
            if (!value.isJsonPrimitive()) {
                throw new HttpError(400, "bad_shape", "argument " + arg.name() + Arrays.toString(at) + " is "
                        + clip(value.toString()) + ", not a number: expected shape " + Arrays.toString(shape));
            }
            writeElement(arg, value.getAsJsonPrimitive(), at, into, offset[0]);
            offset[0] += arg.dtype().bytes();
            return;
        }
        if (!value.isJsonArray() || value.getAsJsonArray().size() != shape[depth]) {
            throw new HttpError(400, "bad_shape", "argument " + arg.name() + ": ragged at "
                    + Arrays.toString(Arrays.copyOf(at, depth)) + ": expected " + shape[depth] + " elements there"
                    + " (shape " + Arrays.toString(shape) + "), given " + clip(value.isJsonArray()
                    ? value.getAsJsonArray().size() + " elements" : value.toString()));
        }
        JsonArray array = value.getAsJsonArray();
        for (int i = 0; i < array.size(); i++) {
            at[depth] = i;
            put(arg, array.get(i), depth + 1, at, into, offset);
        }
    }

    private static void writeElement(Manifest.Argument arg, JsonPrimitive p, long[] at, ByteBuffer into, int offset)
            throws HttpError {
        DataType t = arg.dtype();
        if (t.code() == DataType.BOOL) {
            if (!p.isBoolean()) {
                throw notA(arg, at, p, "true or false");
            }
            into.put(offset, (byte) (p.getAsBoolean() ? 1 : 0));
            return;
        }
        if (!p.isNumber()) {
            throw notA(arg, at, p, "number");
        }
        if (t.code() == DataType.FLOAT) {
            double d = p.getAsDouble();
            if (t.bits() == 32) {
                float f = (float) d;
                if (Float.isInfinite(f) && !Double.isInfinite(d)) {
                    throw notA(arg, at, p, "float32 (out of range)");
                }
                into.putFloat(offset, f);
            } else {
                into.putDouble(offset, d);
            }
            return;
        }
        long v;
        try {
            v = new BigDecimal(p.getAsString()).longValueExact();
        } catch (ArithmeticException | NumberFormatException e) {
            throw notA(arg, at, p, t + " (a whole number)");
        }
        long min = t.code() == DataType.UINT ? 0 : -(1L << (t.bits() - 1));
        long max = t.bits() == 64 ? Long.MAX_VALUE : t.code() == DataType.UINT ? (1L << t.bits()) - 1
                : (1L << (t.bits() - 1)) - 1;
        if (v < min || v > max) {
            throw notA(arg, at, p, t + " (range " + min + ".." + max + ")");
        }
        switch (t.bits()) {
            case 8 -> into.put(offset, (byte) v);
            case 16 -> into.putShort(offset, (short) v);
            case 32 -> into.putInt(offset, (int) v);
            default -> into.putLong(offset, v);
        }
    }

    private static HttpError notA(Manifest.Argument arg, long[] at, JsonPrimitive p, String what) {
        return new HttpError(400, "bad_dtype", "argument " + arg.name() + Arrays.toString(at) + " = "
                + clip(p.toString()) + " is not a " + what + "; the argument is " + arg.describe());
    }

    /** Appends argument {@code arg}'s bytes as nested JSON arrays of its shape. */
    static void write(Manifest.Argument arg, ByteBuffer from, StringBuilder out) {
        write(arg, from, 0, new int[] {0}, out);
    }

    private static void write(Manifest.Argument arg, ByteBuffer from, int depth, int[] offset, StringBuilder out) {
        long[] shape = arg.shape();
        if (depth == shape.length) {
            element(arg.dtype(), from, offset[0], out);
            offset[0] += arg.dtype().bytes();
            return;
        }
        out.append('[');
        for (long i = 0; i < shape[depth]; i++) {
            if (i > 0) {
                out.append(',');
            }
            write(arg, from, depth + 1, offset, out);
        }
        out.append(']');
    }

    private static void element(DataType t, ByteBuffer from, int offset, StringBuilder out) {
        switch (t.code()) {
            case DataType.BOOL -> out.append(from.get(offset) != 0);
            case DataType.FLOAT -> {
                double d = t.bits() == 32 ? from.getFloat(offset) : from.getDouble(offset);
                if (Double.isFinite(d) && t.bits() == 32) {
                    FloatText.append((float) d, out);
                } else if (Double.isFinite(d)) {
                    out.append(d);
                } else {
                    out.append("null"); // JSON has no NaN or infinity
                }
            }
            case DataType.UINT -> out.append(switch (t.bits()) {
                case 8 -> Byte.toUnsignedLong(from.get(offset));
                case 16 -> Short.toUnsignedLong(from.getShort(offset));
                case 32 -> Integer.toUnsignedLong(from.getInt(offset));
                default -> Long.toUnsignedString(from.getLong(offset));
            });
            default -> out.append(switch (t.bits()) {
                case 8 -> (long) from.get(offset);
                case 16 -> (long) from.getShort(offset);
                case 32 -> (long) from.getInt(offset);
                default -> from.getLong(offset);
            });
        }
    }

    /** At most 80 characters of a client's text, for a message. */
    static String clip(String s) {
        return s.length() <= 80 ? s : s.substring(0, 77) + "...";
    }
}
