package org.axe4j.passes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.axe4j.layout.Canonicalize;
import org.axe4j.layout.Group;
import org.axe4j.layout.Grouped;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Oracle;
import org.axe4j.layout.Point;
import org.axe4j.layout.Property;
import org.axe4j.layout.RandomLayouts;
import org.axe4j.layout.Region;
import org.axe4j.layout.Result;
import org.axe4j.layout.Shape;
import org.axe4j.layout.Slice;
import org.axe4j.tvm.Axe4jGlobals;
import org.axe4j.tvm.Tvm;
import org.axe4j.tvm.TvmException;
import org.axe4j.tvm.TvmObject;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The axe4j.layout.* globals, called through TVM's registry, give the algebra's answers on TVM objects. */
class LayoutGlobalsTest {
    @BeforeAll
    static void install() {
        Axe4jGlobals.install();
    }

    @Test
    void providerIsInstalled() {
        assertTrue(Axe4jGlobals.providers().contains("axe4j.layout"));
        assertTrue(Tvm.globalFunctionNames().contains("axe4j.layout.slice"));
    }

    /** canonicalize, group, slice and apply through the registry, each checked by enumeration. */
    @Test
    void registryAnswersMatchTheAlgebraAndEnumeration() {
        Property.forAll("axe4j.layout globals", Math.max(1, Property.CASES / 5), r -> {
            Layout l = RandomLayouts.layout(r);
            try (TvmObject t = TirxLayouts.toTvm(l)) {
                Layout canon = TirxLayouts.fromTvm((TvmObject) Tvm.call("axe4j.layout.canonicalize", t));
                assertEquals(Canonicalize.canonicalize(l), canon);
                assertTrue(Oracle.sameMap(l, canon), () -> "canonicalize of " + l);
                assertEquals(true, Tvm.call("axe4j.layout.equivalent", t, TirxLayouts.toTvm(canon)));

                Shape shape = RandomLayouts.shapeOf(r, l.size(), 3);
                Result<Grouped> grouped = Group.tryGroup(l, shape);
                if (grouped.isPresent()) {
                    List<?> pair = (List<?>) Tvm.call("axe4j.layout.group", t, shape.dims());
                    assertEquals(grouped.get().layout(), TirxLayouts.fromTvm((TvmObject) pair.get(0)));
                } else {
                    TvmException e = assertThrows(TvmException.class, () -> Tvm.call("axe4j.layout.group", t, shape.dims()));
                    assertEquals("ValueError", e.kind());
                    assertTrue(e.getMessage().contains("axe4j.layout.group"), e.getMessage());
                }

                long begin = r.nextInt((int) l.size());
                long end = begin + 1 + r.nextInt((int) (l.size() - begin));
                Object sliced = Tvm.call("axe4j.layout.slice", t, List.of(l.size()), List.of(List.of(begin, end)));
                Result<Layout> expected = Slice.trySlice(l, Shape.of(l.size()), Region.of(new long[] {begin, end}));
                if (expected.isEmpty()) {
                    assertNull(sliced);
                } else {
                    Layout s = TirxLayouts.fromTvm((TvmObject) sliced);
                    for (long y = 0; y < s.size(); y++) {
                        assertEquals(l.apply(begin + y), s.apply(y), "slice [" + begin + "," + end + ") of " + l);
                    }
                }

                long x = r.nextInt((int) l.size());
                TreeSet<Point> points = new TreeSet<>();
                for (Object p : (List<?>) Tvm.call("axe4j.layout.apply", t, x)) {
                    points.add(TirxLayouts.pointOf((Map<?, ?>) p));
                }
                assertEquals(Oracle.table(l).get((int) x), points, "apply(" + x + ") of " + l);
            }
        });
    }

    @Test
    void textIsAcceptedWhereverALayoutIs() {
        Object parsed = Tvm.call("axe4j.layout.parse", "S[(2,4):(4,1@laneid)] + R[2:1@warpid] + 3");
        assertEquals("S[(2,4):(4,1@laneid)] + R[2:1@warpid] + 3", Tvm.call("axe4j.layout.to_text", parsed));
        assertEquals(8L, Tvm.call("axe4j.layout.size", "S[(2,4):(4,1)]"));
        assertEquals(4L, Tvm.call("axe4j.layout.span", "S[(2,4):(4,1@laneid)]", "laneid"));
        List<Object> points = new ArrayList<>((List<?>) Tvm.call("axe4j.layout.apply", "S[(2,4):(4,1)] + 3",
                List.of(1L, 2L), List.of(2L, 4L)));
        assertEquals(List.of(Map.of("m", 9L)), points);
        TvmException arity = assertThrows(TvmException.class, () -> Tvm.call("axe4j.layout.slice", "S[4:1]"));
        assertTrue(arity.getMessage().contains("axe4j.layout.slice takes 3 arguments, got 1"), arity.getMessage());
        TvmException region = assertThrows(TvmException.class,
                () -> Tvm.call("axe4j.layout.slice", "S[4:1]", List.of(4L), List.of(7L)));
        assertTrue(region.getMessage().contains("region[0] must be an ir.Range or a [begin, end] pair"),
                region.getMessage());
    }
}
