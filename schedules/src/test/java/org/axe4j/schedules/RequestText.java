package org.axe4j.schedules;

/** Dispatch requests in the JSON text that {@link Request#fromJson} reads, for tests of every target's rules. */
public final class RequestText {
    private RequestText() {}

    /** A request of {@code op} at {@code scope}; {@code operands} and {@code params} are JSON members, comma-joined. */
    public static String request(String op, String scope, String operands, String params) {
        return "{\"op\":\"" + op + "\",\"target\":\"llvm\",\"scope\":\"" + scope + "\",\"operands\":[" + operands
                + "],\"params\":{" + params + "}}";
    }

    /** A float32 operand of shape {@code [m, n]} whose region is the whole buffer. */
    public static String operand(String role, long m, long n) {
        return "{\"role\":\"" + role + "\",\"name\":\"" + role + "\",\"dtype\":\"float32\",\"shape\":[" + m + "," + n
                + "],\"start\":[0,0],\"extent\":[" + m + "," + n + "]}";
    }
}
