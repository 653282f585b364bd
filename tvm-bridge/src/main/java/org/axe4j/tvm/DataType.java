package org.axe4j.tvm;

/**
 * DLPack's {@code DLDataType}: type code, bits per lane, lanes. Text form as TVM prints it:
 * {@code <code><bits>[x<lanes>]}, e.g. {@code float32}, {@code int8x4}, {@code bool}, {@code handle}.
 */
public record DataType(int code, int bits, int lanes) {
    public static final int INT = 0;
    public static final int UINT = 1;
    public static final int FLOAT = 2;
    public static final int HANDLE = 3;
    public static final int BFLOAT = 4;
    public static final int COMPLEX = 5;
    public static final int BOOL = 6;

    public static final DataType FLOAT32 = new DataType(FLOAT, 32, 1);
    public static final DataType FLOAT64 = new DataType(FLOAT, 64, 1);
    public static final DataType FLOAT16 = new DataType(FLOAT, 16, 1);
    public static final DataType INT8 = new DataType(INT, 8, 1);
    public static final DataType INT16 = new DataType(INT, 16, 1);
    public static final DataType INT32 = new DataType(INT, 32, 1);
    public static final DataType INT64 = new DataType(INT, 64, 1);
    public static final DataType UINT8 = new DataType(UINT, 8, 1);
    public static final DataType BOOL8 = new DataType(BOOL, 8, 1);

    public DataType {
        if (code < 0 || code > 255 || bits < 0 || bits > 255 || lanes < 0 || lanes > 65535) {
            throw new IllegalArgumentException("DataType(code=" + code + ", bits=" + bits + ", lanes=" + lanes
                    + "): code and bits must fit in 8 bits, lanes in 16 bits");
        }
    }

    /** Bytes of one element: {@code ceil(bits * lanes / 8)}. */
    public int bytes() {
        return (bits * lanes + 7) / 8;
    }

    private static final java.util.regex.Pattern TEXT =
            java.util.regex.Pattern.compile("(uint|int|bfloat|float|complex|bool|handle)([0-9]*)(?:x([0-9]+))?");

    /** Parses {@code int|uint|float|bfloat|complex<bits>[x<lanes>]}, {@code bool[x<lanes>]} or {@code handle}. */
    public static DataType parse(String text) {
        java.util.regex.Matcher m = TEXT.matcher(text.trim());
        if (!m.matches()) {
            throw new IllegalArgumentException("DataType.parse(\"" + text
                    + "\"): expected int|uint|float|bfloat|complex<bits>[x<lanes>], bool or handle");
        }
        String name = m.group(1);
        boolean fixedBits = name.equals("bool") || name.equals("handle");
        if (fixedBits != m.group(2).isEmpty()) {
            throw new IllegalArgumentException("DataType.parse(\"" + text + "\"): " + (fixedBits
                    ? name + " takes no bit width" : name + " needs a bit width, e.g. " + name + "32"));
        }
        int lanes = m.group(3) == null ? 1 : Integer.parseInt(m.group(3));
        switch (name) {
            case "bool": return new DataType(BOOL, 8, lanes);
            case "handle": return new DataType(HANDLE, 64, lanes);
            default: break;
        }
        int bits = Integer.parseInt(m.group(2));
        int code = name.equals("int") ? INT : name.equals("uint") ? UINT : name.equals("float") ? FLOAT
                : name.equals("bfloat") ? BFLOAT : COMPLEX;
        return new DataType(code, bits, lanes);
    }

    @Override
    public String toString() {
        String base;
        switch (code) {
            case INT: base = "int" + bits; break;
            case UINT: base = "uint" + bits; break;
            case FLOAT: base = "float" + bits; break;
            case BFLOAT: base = "bfloat" + bits; break;
            case COMPLEX: base = "complex" + bits; break;
            case BOOL: base = "bool"; break;
            case HANDLE: base = "handle"; break;
            default: base = "custom[" + code + "]" + bits; break;
        }
        return lanes == 1 ? base : base + "x" + lanes;
    }
}
