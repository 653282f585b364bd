package org.axe4j.layout.interop;

import java.util.ArrayList;
import java.util.List;
import org.axe4j.layout.AxeException;
import org.axe4j.layout.TextCursor;

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

    /** Deepest nesting of modes read (the reader recurses once per level). */
    static final int MAX_DEPTH = 64;

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
        r.c.expect(':');
        Tree stride = r.tree();
        if (!r.c.atEnd()) {
            throw r.c.error("expected end of layout");
        }
        return r.build(shape, stride);
    }

    private static final class Reader {
        private final TextCursor c;

        Reader(String s) {
            this.c = new TextCursor("CuTe layout", s);
        }

        private int depth;

        Tree tree() {
            c.skip();
            int at = c.position();
            if (c.accept('(')) {
                if (++depth > MAX_DEPTH) {
                    c.moveTo(at);
                    throw c.errorHere("modes nest deeper than " + MAX_DEPTH + " levels");
                }
                List<Tree> children = new ArrayList<>();
                do {
                    children.add(tree());
                } while (c.accept(','));
                depth--;
                c.expect(')');
                return new Tree(0, children, at);
            }
            return new Tree(integer(), null, at);
        }

        /** Pairs shape and stride trees node by node; a mismatch is reported at the stride's column. */
        CuteLayout build(Tree shape, Tree stride) {
            if (shape.isLeaf() != stride.isLeaf()
                    || (!shape.isLeaf() && shape.children().size() != stride.children().size())) {
                c.moveTo(stride.column());
                throw c.error("stride is not congruent with shape " + describe(shape));
            }
            if (shape.isLeaf()) {
                if (shape.value() < 1) {
                    c.moveTo(shape.column());
                    throw c.error("mode size (" + shape.value() + ") must be >= 1");
                }
                try {
                    return new CuteLayout.Leaf(shape.value(), stride.value());
                } catch (AxeException e) {
                    c.moveTo(stride.column());
                    throw c.error(e.getMessage());
                }
            }
            List<CuteLayout> modes = new ArrayList<>();
            for (int i = 0; i < shape.children().size(); i++) {
                modes.add(build(shape.children().get(i), stride.children().get(i)));
            }
            try {
                return new CuteLayout.Tuple(modes);
            } catch (AxeException e) {
                c.moveTo(shape.column());
                throw c.error(e.getMessage());
            }
        }

        private String describe(Tree t) {
            if (t.isLeaf()) {
                return "(an integer) starting at column " + (t.column() + 1);
            }
            return "(a tuple of " + t.children().size() + ") starting at column " + (t.column() + 1);
        }

        private long integer() {
            c.accept('_'); // CuTe prints static integers as _4
            return c.integer("expected an integer or '('");
        }
    }
}
