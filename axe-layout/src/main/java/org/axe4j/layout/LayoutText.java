package org.axe4j.layout;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The text syntax of layouts, read and written:
 *
 * <pre>
 *   layout  := ( offset '+' )* 'S' '[' shard ']' ( ('+' | '-') term )*
 *   term    := 'R' '[' iters ']' | offset
 *   offset  := INT ( '@' AXIS )?
 *   shard   := iters | extents
 *   iters   := '(' INT (',' INT)* ')' ':' '(' stride (',' stride)* ')'  |  INT ':' stride
 *   extents := INT (',' INT)*  |  '(' INT (',' INT)* ')'      strides row-major and compact on axis m
 *   stride  := INT ( '@' AXIS )?          a bare stride or offset means axis m
 *   INT     := ( '+' | '-' )? [0-9]+      a 64-bit integer
 *   AXIS    := [A-Za-z_] [A-Za-z0-9_.]*
 * </pre>
 *
 * The text is ASCII: blanks (space, tab, CR, LF) may stand between tokens, and any other character, such
 * as an Arabic-Indic or full-width digit or an em space, is a parse error that names its code point. A
 * layout whose span plus offset on some axis does not fit in 64 bits is INVALID ({@link Layout}).
 *
 * {@code S[1:1]} (no parentheses) is the empty shard; {@code S[(1):(1)]} is one iter of extent 1. As in TIRx,
 * {@code S[2,3,4]} is {@code S[(2,3,4):(12,4,1)]}, and an offset may also lead: {@code 64 + S[8:1]} is
 * {@code S[8:1] + 64}.
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
        return print(l.shard(), l.replica(), l.offset());
    }

    /** The text of a layout's parts (also of parts the constructor refuses, for its error). */
    static String print(List<Iter> shard, List<Iter> replica, Map<Axis, Long> offset) {
        StringBuilder sb = new StringBuilder("S[");
        if (shard.isEmpty()) {
            sb.append("1:1");
        } else {
            iters(sb, shard);
        }
        sb.append(']');
        if (!replica.isEmpty()) {
            sb.append(" + R[");
            iters(sb, replica);
            sb.append(']');
        }
        for (Map.Entry<Axis, Long> e : offset.entrySet()) {
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
        private final TextCursor c;

        Parser(String s) {
            this.c = new TextCursor("layout", s);
        }

        Layout layout() {
            TreeMap<Axis, Long> offset = new TreeMap<>();
            c.skip();
            while (c.peek() == '-' || c.peek() == '+' || TextCursor.isDigit(c.peek())) {   // leading offsets
                int at = c.position();
                addOffset(offset, c.integer("expected an integer"), optionalAxis(), at);
                c.skip();
                if (c.peek() != '+') {
                    throw c.error("expected '+' after a leading offset");
                }
                c.advance();
                c.skip();
            }
            if (c.peek() != 'S') {
                throw c.error(offset.isEmpty() ? "expected 'S' (or a leading offset)" : "expected 'S'");
            }
            c.expect('S');
            c.expect('[');
            List<Iter> shard = iters(true);
            c.expect(']');
            List<Iter> replica = new ArrayList<>();
            while (!c.atEnd()) {
                char op = c.peek();
                if (op != '+' && op != '-') {
                    throw c.error("expected '+', '-' or end of layout");
                }
                c.advance();
                c.skip();
                if (c.peek() == 'R') {
                    if (op == '-') {
                        throw c.error("a replica term cannot be subtracted");
                    }
                    c.advance();
                    c.expect('[');
                    replica.addAll(iters(false));
                    c.expect(']');
                } else {
                    c.skip();
                    int at = c.position();
                    long v = c.integer("expected an integer");
                    if (op == '-') {
                        if (v == Long.MIN_VALUE) {
                            c.moveTo(at);
                            throw c.error("offset is out of range");
                        }
                        v = -v;
                    }
                    addOffset(offset, v, optionalAxis(), at);
                }
            }
            try {
                return new Layout(shard, replica, offset);
            } catch (AxeException e) {
                throw new AxeException(AxeException.Kind.INVALID, e.getMessage() + " in layout '" + c.text() + "'", e);
            }
        }

        private void addOffset(TreeMap<Axis, Long> offset, long v, Axis axis, int at) {
            long prev = offset.getOrDefault(axis, 0L);
            try {
                offset.put(axis, Math.addExact(prev, v));
            } catch (ArithmeticException e) {
                c.moveTo(at);
                throw c.error("offsets on axis " + axis + " overflow 64 bits");
            }
        }

        /**
         * {@code (e,...):(s,...)} or {@code e:s}; in a shard the bare {@code 1:1} is the empty shard, and extents alone
         * ({@code e,...} or {@code (e,...)}) take row-major compact strides on axis m.
         */
        private List<Iter> iters(boolean shard) {
            List<Long> extents = new ArrayList<>();
            List<Integer> extentPos = new ArrayList<>();
            List<Long> strides = new ArrayList<>();
            List<Axis> axes = new ArrayList<>();
            if (c.accept('(')) {
                do {
                    c.skip();
                    extentPos.add(c.position());
                    extents.add(c.integer("expected an integer"));
                } while (c.accept(','));
                c.expect(')');
                c.skip();
                if (shard && c.peek() != ':') {
                    return compact(extents, extentPos);
                }
                c.expect(':');
                c.expect('(');
                do {
                    strides.add(c.integer("expected an integer"));
                    axes.add(optionalAxis());
                } while (c.accept(','));
                c.skip();
                int close = c.position();
                c.expect(')');
                if (strides.size() != extents.size()) {
                    c.moveTo(close);
                    throw c.errorHere(extents.size() + " extents but " + strides.size() + " strides");
                }
            } else {
                c.skip();
                extentPos.add(c.position());
                extents.add(c.integer("expected an integer"));
                c.skip();
                if (shard && (c.peek() == ',' || c.peek() == ']')) {
                    while (c.accept(',')) {
                        c.skip();
                        extentPos.add(c.position());
                        extents.add(c.integer("expected an integer"));
                    }
                    return compact(extents, extentPos);
                }
                c.expect(':');
                strides.add(c.integer("expected an integer"));
                axes.add(optionalAxis());
                if (shard && extents.get(0) == 1 && strides.get(0) == 1 && axes.get(0).isMemory()) {
                    return List.of();
                }
            }
            List<Iter> out = new ArrayList<>();
            for (int i = 0; i < extents.size(); i++) {
                try {
                    out.add(new Iter(extents.get(i), strides.get(i), axes.get(i)));
                } catch (AxeException e) {
                    c.moveTo(extentPos.get(i));
                    throw new AxeException(AxeException.Kind.INVALID, e.getMessage() + c.where());
                }
            }
            return out;
        }

        /** Iters of {@code extents} with row-major compact strides on axis m (the last extent varies fastest). */
        private List<Iter> compact(List<Long> extents, List<Integer> extentPos) {
            Iter[] out = new Iter[extents.size()];
            long stride = 1;
            for (int i = extents.size() - 1; i >= 0; i--) {
                try {
                    out[i] = new Iter(extents.get(i), stride, Axis.M);
                    stride = Checks.mul(() -> "compact strides of " + extents, stride, extents.get(i));
                } catch (AxeException e) {
                    c.moveTo(extentPos.get(i));
                    throw new AxeException(AxeException.Kind.INVALID, e.getMessage() + c.where());
                }
            }
            return List.of(out);
        }

        private Axis optionalAxis() {
            if (!c.accept('@')) {
                return Axis.M;
            }
            return Axis.of(c.identifier("expected an axis name after '@'"));
        }
    }
}
