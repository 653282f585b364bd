package org.axe4j.layout;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.TreeMap;

/**
 * A swizzle applied after a memory layout: {@code (swz o L)(x) = { swz(p) | p in L(x) }}, where the
 * swizzle acts on the memory coordinate of each point (AXE-SPEC section 9; TIRx's {@code ComposeLayout}).
 * The layout's points must lie on the memory axis {@code m} only.
 *
 * <p>Text: {@code Swizzle<B,M,S> o S[...] + R[...] + offset}, e.g. {@code Swizzle<3,4,3> o S[(8,64):(64,1)]}.
 */
public record SwizzledLayout(Swizzle swizzle, Layout layout) {
    public SwizzledLayout {
        Objects.requireNonNull(swizzle, "swizzle");
        Objects.requireNonNull(layout, "layout");
        for (Axis a : layout.axes()) {
            if (!a.equals(Axis.M)) {
                throw new AxeException(AxeException.Kind.INVALID, "swizzled layout " + swizzle + " o " + layout
                        + ": a swizzle acts on memory addresses, so the layout may use only axis m, not " + a);
            }
        }
    }

    /** Reads {@code Swizzle<B,M,S> o <layout>}; {@code ∘} may stand for {@code o}. */
    public static SwizzledLayout parse(String text) {
        if (text == null) {
            throw new AxeException(AxeException.Kind.PARSE, "swizzled layout text is null");
        }
        TextCursor c = new TextCursor("swizzled layout", text);
        String word = c.identifier("expected 'Swizzle<B,M,S>'");
        if (!word.equals("Swizzle")) {
            c.moveTo(c.position() - word.length());
            throw c.error("expected 'Swizzle<B,M,S>'");
        }
        c.expect('<');
        int bits = Math.toIntExact(c.integer("expected the swizzled bits B"));
        c.expect(',');
        int base = Math.toIntExact(c.integer("expected the base M"));
        c.expect(',');
        int shift = Math.toIntExact(c.integer("expected the shift S"));
        c.expect('>');
        c.skip();
        if (!c.accept('o') && !c.accept('∘')) {
            throw c.error("expected 'o' between the swizzle and the layout");
        }
        Layout layout;
        try {
            layout = Layout.parse(text.substring(c.position()));
        } catch (AxeException e) {
            throw new AxeException(AxeException.Kind.PARSE, "cannot parse the layout after the swizzle in '" + text
                    + "': " + e.getMessage());
        }
        return new SwizzledLayout(new Swizzle(bits, base, shift), layout);
    }

    /** Is {@code text} a swizzled layout (it starts with {@code Swizzle<})? */
    public static boolean isSwizzledText(String text) {
        if (text == null) {
            return false;
        }
        int i = 0;
        while (i < text.length() && TextCursor.isBlank(text.charAt(i))) {
            i++;
        }
        return text.startsWith("Swizzle<", i);
    }

    public long size() {
        return layout.size();
    }

    /** {@code { swz(p) | p in L(x) }}, sorted. */
    public List<Point> apply(long x) {
        List<Point> out = new ArrayList<>();
        for (Point p : layout.apply(x)) {
            out.add(swizzled(p));
        }
        out.sort(null);
        return out;
    }

    /** {@code swz(D(x) + O)}: the image under the zero replica. */
    public Point base(long x) {
        return swizzled(layout.base(x));
    }

    private Point swizzled(Point p) {
        TreeMap<Axis, Long> c = new TreeMap<>();
        c.put(Axis.M, swizzle.apply(p.get(Axis.M)));
        return new Point(c);
    }

    @Override
    public String toString() {
        return swizzle + " o " + layout;
    }
}
