package org.axe4j.cli;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import org.axe4j.layout.AxeException;
import org.axe4j.layout.TextCursor;

/**
 * Command-line forms of shapes, coordinates, points and regions, read into the JSON of a request:
 *
 * <pre>
 *   shape, coord   8,16   (8,16)   [8,16]   ()          -> [8,16]
 *   point          laneid:8,warpid:6   {laneid:8, warpid:6}   -> {"laneid":8,"warpid":6}
 *   region         0:4,8:16   (0:4,8:16)                 -> [[0,4],[8,16]]   (half-open)
 * </pre>
 *
 * As in layout text, numbers are ASCII digits with an optional sign and blanks are space, tab, CR and LF:
 * {@code ٨,١٦} or full-width digits are not a shape.
 */
final class CliText {
    private CliText() {}

    private static String unwrap(String what, String text, String open, String close) {
        String t = trim(text);
        for (int k = 0; k < open.length(); k++) {
            if (t.length() >= 2 && t.charAt(0) == open.charAt(k) && t.charAt(t.length() - 1) == close.charAt(k)) {
                return trim(t.substring(1, t.length() - 1));
            }
        }
        return t;
    }

    /** {@code s} without leading and trailing ASCII blanks (and no others: U+2003 stays, and is refused). */
    static String trim(String s) {
        int b = 0;
        int e = s.length();
        while (b < e && TextCursor.isBlank(s.charAt(b))) {
            b++;
        }
        while (e > b && TextCursor.isBlank(s.charAt(e - 1))) {
            e--;
        }
        return s.substring(b, e);
    }

    private static AxeException bad(String what, String text, String example) {
        return new AxeException(AxeException.Kind.PARSE,
                "cannot read " + what + " '" + text + "': expected e.g. " + example);
    }

    private static long integer(String what, String whole, String token, String example) {
        String t = trim(token);
        int digits = t.startsWith("-") || t.startsWith("+") ? 1 : 0;
        if (t.length() == digits) {
            throw bad(what, whole, example);
        }
        for (int i = digits; i < t.length(); i++) {
            if (!TextCursor.isDigit(t.charAt(i))) {
                throw bad(what, whole, example);
            }
        }
        try {
            return Long.parseLong(t);
        } catch (NumberFormatException e) {
            throw new AxeException(AxeException.Kind.PARSE, "cannot read " + what + " '" + whole
                    + "': " + t + " does not fit in 64 bits");
        }
    }

    /** A list of integers, as for a shape or coordinate. */
    static JsonArray integers(String what, String text) {
        String body = unwrap(what, text, "([", ")]");
        JsonArray a = new JsonArray();
        if (body.isEmpty()) {
            return a;
        }
        for (String token : body.split(",", -1)) {
            a.add(integer(what, text, token, "8,16 or (8,16)"));
        }
        return a;
    }

    static JsonObject point(String text) {
        String body = unwrap("point", text, "{(", "})");
        JsonObject o = new JsonObject();
        if (body.isEmpty()) {
            return o;
        }
        for (String token : body.split(",", -1)) {
            String[] kv = token.split(":", -1);
            if (kv.length != 2 || kv[0].isBlank()) {
                throw bad("point", text, "laneid:8,warpid:6");
            }
            o.addProperty(trim(kv[0]), integer("point", text, kv[1], "laneid:8,warpid:6"));
        }
        return o;
    }

    static JsonArray region(String text) {
        String body = unwrap("region", text, "([", ")]");
        JsonArray a = new JsonArray();
        if (body.isEmpty()) {
            return a;
        }
        for (String token : body.split(",", -1)) {
            String[] be = token.split(":", -1);
            if (be.length != 2) {
                throw bad("region", text, "0:4,8:16 (begin:end per dimension, end excluded)");
            }
            JsonArray pair = new JsonArray();
            pair.add(integer("region", text, be[0], "0:4,8:16"));
            pair.add(integer("region", text, be[1], "0:4,8:16"));
            a.add(pair);
        }
        return a;
    }
}
