package org.axe4j.layout.interop;

import java.util.ArrayList;
import java.util.List;
import org.axe4j.layout.AxeException;

/**
 * Reads CuTe's text form:
 *
 * <pre>
 *   layout := tree ':' tree          the two trees must have the same nesting (be congruent)
 *   tree   := INT | '(' tree (',' tree)* ')'
 *   INT    := '_'? '-'? DIGITS        '_' marks a static integer in CuTe's printout and is ignored
 * </pre>
 *
 * Errors name the column and show a caret under the offending character.
 */
final class CuteText {
    private CuteText() {}

    /** A parsed tree: a leaf integer or a list of subtrees, with the column where it starts. */
    private record Tree(long value, List<Tree> children, int column) {
        boolean isLeaf() {
            return children == null;
        }
    }

    static CuteLayout parse(String text) {
        if (text == null) {
            throw new AxeException(AxeException.Kind.PARSE, "CuTe layout text is null");
        }
        Reader r = new Reader(text);
        Tree shape = r.tree();
        r.expect(':');
        Tree stride = r.tree();
        r.skip();
        if (r.pos < text.length()) {
            throw r.error("expected end of layout");
        }
        return r.build(shape, stride);
    }

    private static final class Reader {
        private final String s;
        private int pos;

        Reader(String s) {
            this.s = s;
        }

        Tree tree() {
            skip();
            int at = pos;
            if (accept('(')) {
                List<Tree> children = new ArrayList<>();
                do {
                    children.add(tree());
                } while (accept(','));
                expect(')');
                return new Tree(0, children, at);
            }
            return new Tree(integer(), null, at);
        }

        /** Pairs shape and stride trees node by node; a mismatch is reported at the stride's column. */
        CuteLayout build(Tree shape, Tree stride) {
            if (shape.isLeaf() != stride.isLeaf()
                    || (!shape.isLeaf() && shape.children().size() != stride.children().size())) {
                pos = stride.column();
                throw error("stride is not congruent with shape " + describe(shape));
            }
            if (shape.isLeaf()) {
                if (shape.value() < 1) {
                    pos = shape.column();
                    throw error("mode size (" + shape.value() + ") must be >= 1");
                }
                try {
                    return new CuteLayout.Leaf(shape.value(), stride.value());
                } catch (AxeException e) {
                    pos = stride.column();
                    throw error(e.getMessage());
                }
            }
            List<CuteLayout> modes = new ArrayList<>();
            for (int i = 0; i < shape.children().size(); i++) {
                modes.add(build(shape.children().get(i), stride.children().get(i)));
            }
            try {
                return new CuteLayout.Tuple(modes);
            } catch (AxeException e) {
                pos = shape.column();
                throw error(e.getMessage());
            }
        }

        private String describe(Tree t) {
            if (t.isLeaf()) {
                return "(an integer) starting at column " + (t.column() + 1);
            }
            return "(a tuple of " + t.children().size() + ") starting at column " + (t.column() + 1);
        }

        private long integer() {
            skip();
            int start = pos;
            accept('_');
            int sign = pos;
            if (pos < s.length() && s.charAt(pos) == '-') {
                pos++;
            }
            int digits = pos;
            while (pos < s.length() && Character.isDigit(s.charAt(pos))) {
                pos++;
            }
            if (pos == digits) {
                pos = start;
                throw error("expected an integer or '('");
            }
            try {
                return Long.parseLong(s.substring(sign, pos));
            } catch (NumberFormatException e) {
                pos = start;
                throw error("integer does not fit in 64 bits");
            }
        }

        void expect(char c) {
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

        void skip() {
            while (pos < s.length() && Character.isWhitespace(s.charAt(pos))) {
                pos++;
            }
        }

        AxeException error(String what) {
            String found = pos < s.length() ? "'" + s.charAt(pos) + "'" : "end of text";
            return new AxeException(AxeException.Kind.PARSE, "cannot parse CuTe layout: " + what + " (found " + found
                    + ") at column " + (pos + 1) + "\n  " + s + "\n  " + " ".repeat(pos) + "^");
        }
    }
}
