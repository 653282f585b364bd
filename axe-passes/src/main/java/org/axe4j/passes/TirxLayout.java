package org.axe4j.passes;

import java.util.Objects;
import org.axe4j.layout.AxeException;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Swizzle;
import org.axe4j.layout.SwizzledLayout;

/**
 * A TVM layout read into axe4j values: the integer layout {@code L}, the symbolic part of its offset
 * and the swizzle applied after it (identity for a plain {@code tirx.TileLayout}). The map is
 * {@code x -> { swz(p + sym) | p in L(x) }}. {@code composed} records that TVM held a
 * {@code tirx.ComposeLayout}, so that writing back gives the same kind of object even for an
 * identity swizzle.
 */
public record TirxLayout(Layout layout, SymbolicOffset symbolic, Swizzle swizzle, boolean composed) {
    public TirxLayout {
        Objects.requireNonNull(layout, "layout");
        Objects.requireNonNull(symbolic, "symbolic");
        Objects.requireNonNull(swizzle, "swizzle");
        if (composed) {
            new SwizzledLayout(swizzle, layout); // validates: memory axis only
        }
    }

    public static TirxLayout of(Layout layout) {
        return new TirxLayout(layout, SymbolicOffset.NONE, Swizzle.IDENTITY, false);
    }

    public static TirxLayout of(SwizzledLayout swizzled) {
        return new TirxLayout(swizzled.layout(), SymbolicOffset.NONE, swizzled.swizzle(), true);
    }

    /** True for an integer, unswizzled layout: an axe4j {@link Layout} says all of it. */
    public boolean isPlain() {
        return symbolic.isEmpty() && !composed;
    }

    /** The integer, unswizzled layout, or a NOT_REPRESENTABLE error naming {@code operation}. */
    public Layout plain(String operation) {
        if (!symbolic.isEmpty()) {
            throw new AxeException(AxeException.Kind.NOT_REPRESENTABLE, operation + ": the layout " + this
                    + " has a symbolic offset; " + operation + " needs integer offsets");
        }
        if (composed) {
            throw new AxeException(AxeException.Kind.NOT_REPRESENTABLE, operation + ": the layout " + this
                    + " is swizzled; " + operation + " applies to an unswizzled tile layout");
        }
        return layout;
    }

    /** The same symbolic offset and swizzle around another integer layout (for offset-preserving operations). */
    public TirxLayout withLayout(Layout other) {
        return new TirxLayout(other, symbolic, swizzle, composed);
    }

    /** axe4j text: {@code [Swizzle<B,M,S> o ]S[...] + R[...] + offset[ + (2*n)@axis]}. */
    @Override
    public String toString() {
        String body = layout + symbolic.toString();
        return composed ? swizzle + " o " + body : body;
    }
}
