package org.axe4j.layout.interop;

import org.axe4j.layout.Layout;
import org.axe4j.layout.Shape;

/** An Axe layout together with the logical shape it is read with; the layout admits the shape. */
public record ShapedLayout(Layout layout, Shape shape) {
    public ShapedLayout {
        layout.requireAdmits(shape);
    }

    @Override
    public String toString() {
        return layout + " with shape " + shape;
    }
}
