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

    /**
     * A bare swizzle: the layout is the identity {@code S[n:1]} (or {@code S[1:1]}, or no shard), canonically. TIRx's
     * {@code ComposeLayout} over such a "trivial" tile stands for the swizzle of memory itself, of any size: its apply
     * takes every index {@code x >= 0} to {@code swz(x)}, and tile, tile-of, group and slice read it as the identity
     * over whatever shape they are given ({@link #over}).
     */
    public boolean isBare() {
        Layout c = Canonicalize.canonicalize(layout);
        return c.replica().isEmpty() && c.offset().isEmpty()
                && (c.shard().isEmpty() || c.shard().size() == 1 && c.shard().get(0).stride() == 1);
    }

    /**
     * This layout as one admitting {@code shape}: a bare swizzle becomes {@code swz o S[size(shape):1]} (TIRx's
     * identity substitution); any other layout must admit the shape (INVALID otherwise) and is returned as is.
     */
    public SwizzledLayout over(Shape shape) {
        if (isBare()) {
            return new SwizzledLayout(swizzle, Layout.of(List.of(new Iter(shape.size(), 1, Axis.M)), List.of(),
                    java.util.Map.of()));
        }
        if (!layout.admits(shape)) {
            throw AxeException.invalid("swizzled layout %s (size %d) does not admit shape %s (size %d)", this, size(),
                    shape, shape.size());
        }
        return this;
    }

    /** {@code swz o group(L, shape)}: the same map with the shard split by {@code shape} (a bare swizzle: the identity). */
    public Result<SwizzledLayout> group(Shape shape) {
        SwizzledLayout l = over(shape);
        return Group.tryGroup(l.layout, shape).map(g -> new SwizzledLayout(swizzle, g.layout()));
    }

    /**
     * {@code swz o slice(L)}: {@code (swz o L)(b + y) = swz(L(b + y))}, so slicing the layout under the swizzle slices
     * the map; a bare swizzle is sliced as the identity over {@code shape}.
     */
    public Result<SwizzledLayout> slice(Shape shape, Region region) {
        SwizzledLayout l = over(shape);
        return Slice.trySlice(l.layout, shape, region).map(s -> new SwizzledLayout(swizzle, s));
    }

    /**
     * {@link #apply(long)}, where a bare swizzle takes every {@code x >= 0} (TIRx repeats the swizzle past its period:
     * {@code swz(x) = x - x mod P + swz(x mod P)}); any other layout needs {@code 0 <= x < size}.
     */
    public List<Point> applyAny(long x) {
        if (x < 0) {
            throw AxeException.invalid("apply: index %d of %s is negative", x, this);
        }
        if (x >= size() && isBare()) {
            return List.of(swizzled(new Point(new TreeMap<>(java.util.Map.of(Axis.M, x)))));
        }
        return apply(x);
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

    /** The largest m coordinate of the image, by enumeration (a swizzle has no closed form for it). */
    public long largestAddress() {
        long size = size();
        if (size > Equivalence.RUN_LIMIT) {
            throw new AxeException(AxeException.Kind.NOT_REPRESENTABLE, "span: " + this + " is swizzled and has "
                    + size + " elements, more than the " + Equivalence.RUN_LIMIT + " axe4j enumerates for its "
                    + "largest address");
        }
        long max = Long.MIN_VALUE;
        for (long x = 0; x < size; x++) {
            for (Point p : apply(x)) {
                max = Math.max(max, p.get(Axis.M));
            }
        }
        return max;
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
