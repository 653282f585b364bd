package org.axe4j.layout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class GroupManyTest {
    @Test
    void groupManyOnlySplitsAndEveryShapeGetsItsBlocks() {
        Property.forAll("group_many(L, shapes) == L, each shape's blocks multiply to its dims", 500, r -> {
            Layout l = RandomLayouts.layout(r);
            List<Shape> shapes = List.of(RandomLayouts.shapeOf(r, l.size(), 3), RandomLayouts.shapeOf(r, l.size(), 3));
            GroupMany.Result g;
            try {
                g = GroupMany.groupMany(l, shapes);
            } catch (AxeException e) {
                assertEquals(AxeException.Kind.NOT_REPRESENTABLE, e.kind(), e.getMessage());
                return;
            }
            assertTrue(Oracle.sameMap(l, g.layout()), l + " -> " + g.layout());
            assertEquals(l.replica(), g.layout().replica());
            assertEquals(l.offset(), g.layout().offset());
            for (int i = 0; i < shapes.size(); i++) {
                new Grouped(g.layout(), shapes.get(i), g.seps().get(i)); // checks the block products
            }
        });
    }

    @Test
    void theCommonRefinementOfTwoShapes() {
        GroupMany.Result g = GroupMany.groupMany(Layout.of(List.of(Iter.of(30, 1)), List.of(), java.util.Map.of()),
                List.of(Shape.of(6, 5), Shape.of(2, 15)));
        assertEquals(List.of(Iter.of(2, 15), Iter.of(3, 5), Iter.of(5, 1)), g.layout().shard());
        assertEquals(List.of(List.of(0, 2, 3), List.of(0, 1, 3)), g.seps());
        assertThrows(AxeException.class, () -> GroupMany.groupMany(
                Layout.of(List.of(Iter.of(2, 3), Iter.of(3, 1)), List.of(), java.util.Map.of()),
                List.of(Shape.of(3, 2))));
    }
}
