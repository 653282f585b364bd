package org.axe4j.layout;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The text syntax of layouts, read and written:
 *
 * <pre>
 *   layout  := 'S' '[' iters ']' ( ('+' | '-') term )*
 *   term    := 'R' '[' iters ']' | INT ( '@' AXIS )?
 *   iters   := '(' INT (',' INT)* ')' ':' '(' stride (',' stride)* ')'  |  INT ':' stride
 *   stride  := INT ( '@' AXIS )?          a bare stride or offset means axis m
 * </pre>
 *
 * {@code S[1:1]} (no parentheses) is the empty shard; {@code S[(1):(1)]} is one iter of extent 1.
 * Example: {@code S[(8,2,4,2):(4@laneid,1@warpid,1@laneid,1@reg)] + R[2:4@warpid] + 5@warpid}.
 * Errors name the column and show a caret under the offending character.
 */
public final class LayoutText {
    private LayoutText() {}

    public static Layout parse(String text) {
        if (text == null) {
            throw new AxeException(AxeException.Kind.PARSE, "layout text is null");
        }
        return new Parser(text).layout();
    }

    public static String print(Layout l) {
        StringBuilder sb = new StringBuilder("S[");
        if (l.shard().isEmpty()) {
            sb.append("1:1");
        } else {
            iters(sb, l.shard());
        }
        sb.append(']');
        if (!l.replica().isEmpty()) {
            sb.append(" + R[");
            iters(sb, l.replica());
            sb.append(']');
        }
        for (Map.Entry<Axis, Long> e : l.offset().entrySet()) {
            long v = e.getValue();
            // Long.MIN_VALUE has no positive counterpart: it keeps its sign after '+'.
            boolean minus = v < 0 && v != Long.MIN_VALUE;
            sb.append(minus ? " - " : " + ").append(minus ? -v : v);
            if (!e.getKey().isMemory()) {
                sb.append('@').append(e.getKey());
            }
        }
        return sb.toString();
    }

    /** A single iter prints as {@code e:s@a}; a single extent-1 iter keeps its parentheses (else it reads as empty). */
    private static void iters(StringBuilder sb, List<Iter> iters) {
        if (iters.size() == 1 && iters.get(0).extent() != 1) {
            Iter it = iters.get(0);
            sb.append(it.extent()).append(':').append(strideText(it.stride(), it.axis()));
            return;
        }
        sb.append('(');
        for (int i = 0; i < iters.size(); i++) {
            sb.append(i > 0 ? "," : "").append(iters.get(i).extent());
        }
        sb.append("):(");
        for (int i = 0; i < iters.size(); i++) {
            sb.append(i > 0 ? "," : "").append(strideText(iters.get(i).stride(), iters.get(i).axis()));
        }
        sb.append(')');
    }

    static String strideText(long stride, Axis axis) {
        return axis.isMemory() ? Long.toString(stride) : stride + "@" + axis;
    }

    /** Recursive-descent parser over the characters of one layout. */
    private static final class Parser {
        private final String s;
        private int pos;

        Parser(String s) {
            this.s = s;
        }

        Layout layout() {
            skip();
            expect('S');
            expect('[');
            List<Iter> shard = iters(true);
            expect(']');
            List<Iter> replica = new ArrayList<>();
            TreeMap<Axis, Long> offset = new TreeMap<>();
            while (true) {
                skip();
                if (pos == s.length()) {
                    break;
                }
                char op = peek();
                if (op != '+' && op != '-') {
                    throw error("expected '+', '-' or end of layout");
                }
                pos++;
                skip();
                if (peek() == 'R') {
                    if (op == '-') {
                        throw error("a replica term cannot be subtracted");
                    }
                    pos++;
                    expect('[');
                    replica.addAll(iters(false));
                    expect(']');
                } else {
                    int at = pos;
                    long v = integer();
                    if (op == '-') {
                        if (v == Long.MIN_VALUE) {
                            pos = at;
                            throw error("offset is out of range");
                        }
                        v = -v;
                    }
                    Axis axis = optionalAxis();
                    long prev = offset.getOrDefault(axis, 0L);
                    try {
                        offset.put(axis, Math.addExact(prev, v));
                    } catch (ArithmeticException e) {
                        pos = at;
                        throw error("offsets on axis " + axis + " overflow 64 bits");
                    }
                }
            }
            try {
                return new Layout(shard, replica, offset);
            } catch (AxeException e) {
                throw new AxeException(AxeException.Kind.INVALID, e.getMessage() + " in layout '" + s + "'", e);
            }
        }

        /** {@code (e,...):(s,...)} or {@code e:s}; in a shard the bare {@code 1:1} is the empty shard. */
        private List<Iter> iters(boolean shard) {
            skip();
            List<Long> extents = new ArrayList<>();
            List<Integer> extentPos = new ArrayList<>();
            List<Long> strides = new ArrayList<>();
            List<Axis> axes = new ArrayList<>();
            boolean parens = peek() == '(';
            if (parens) {
                pos++;
                do {
                    skip();
                    extentPos.add(pos);
                    extents.add(integer());
                    skip();
                } while (accept(','));
                expect(')');
                expect(':');
                expect('(');
                do {
                    skip();
                    strides.add(integer());
                    axes.add(optionalAxis());
                    skip();
                } while (accept(','));
                int close = pos;
                expect(')');
                if (strides.size() != extents.size()) {
                    pos = close;
                    throw new AxeException(AxeException.Kind.PARSE, "cannot parse layout: "
                            + extents.size() + " extents but " + strides.size() + " strides" + where());
                }
            } else {
                extentPos.add(pos);
                extents.add(integer());
                expect(':');
                skip();
                strides.add(integer());
                axes.add(optionalAxis());
                if (shard && extents.get(0) == 1 && strides.get(0) == 1 && axes.get(0).isMemory()) {
                    return List.of();
                }
            }
            List<Iter> out = new ArrayList<>();
            for (int i = 0; i < extents.size(); i++) {
                if (extents.get(i) < 1) {
                    pos = extentPos.get(i);
                    throw new AxeException(AxeException.Kind.INVALID,
                            "extent (" + extents.get(i) + ") must be >= 1" + where());
                }
                try {
                    out.add(new Iter(extents.get(i), strides.get(i), axes.get(i)));
                } catch (AxeException e) {
                    pos = extentPos.get(i);
                    throw new AxeException(AxeException.Kind.INVALID, e.getMessage() + where());
                }
            }
            return out;
        }

        private Axis optionalAxis() {
            skip();
            if (!accept('@')) {
                return Axis.M;
            }
            skip();
            int start = pos;
            if (pos < s.length() && (Character.isLetter(peek()) || peek() == '_')) {
                pos++;
                while (pos < s.length() && (Character.isLetterOrDigit(peek()) || peek() == '_' || peek() == '.')) {
                    pos++;
                }
                return Axis.of(s.substring(start, pos));
            }
            throw error("expected an axis name after '@'");
        }

        private long integer() {
            skip();
            int start = pos;
            if (pos < s.length() && (peek() == '-' || peek() == '+')) {
                pos++;
            }
            int digits = pos;
            while (pos < s.length() && Character.isDigit(peek())) {
                pos++;
            }
            if (pos == digits) {
                pos = start;
                throw error("expected an integer");
            }
            try {
                return Long.parseLong(s.substring(start, pos));
            } catch (NumberFormatException e) {
                pos = start;
                throw error("integer does not fit in 64 bits");
            }
        }

        private void expect(char c) {
            skip();
            if (pos >= s.length() || s.charAt(pos) != c) {
                throw error("expected '" + c + "'");
            }
            pos++;
        }

        private boolean accept(char c) {
            skip();
            if (pos < s.length() && s.charAt(pos) == c) {
                pos++;
                return true;
            }
            return false;
        }

        private char peek() {
            return pos < s.length() ? s.charAt(pos) : '\0';
        }

        private void skip() {
            while (pos < s.length() && Character.isWhitespace(s.charAt(pos))) {
                pos++;
            }
        }

        private String where() {
            return " at column " + (pos + 1) + "\n  " + s + "\n  " + " ".repeat(pos) + "^";
        }

        private AxeException error(String what) {
            String found = pos < s.length() ? "'" + s.charAt(pos) + "'" : "end of text";
            return new AxeException(AxeException.Kind.PARSE, "cannot parse layout: " + what + " but found " + found + where());
        }
    }
}
