package org.axe4j.bench;

import java.util.Map;
import org.axe4j.layout.Shape;

/** The paper's worked layouts (AXE-SPEC section 8) with the logical shape each is used under. */
final class PaperLayouts {
    /** A layout in text form and an admitted shape. */
    record Case(String text, Shape shape) {}

    static final Map<String, Case> CASES = Map.of(
            "tensor-core", new Case("S[(8,2,4,2):(4@laneid,1@warpid,1@laneid,1@reg)] + R[2:4@warpid] + 5@warpid",
                    Shape.of(8, 16)),
            "mesh-replicated", new Case("S[(2,32,128):(1@gpuid,128@m,1@m)] + R[2:2@gpuid]", Shape.of(64, 128)),
            "trainium-sbuf", new Case("S[(2,128,512):(512@F,1@P,1@F)]", Shape.of(256, 512)),
            "column-major", new Case("S[(3,4):(1,3)]", Shape.of(3, 4)));

    private PaperLayouts() {}

    static Case get(String name) {
        Case c = CASES.get(name);
        if (c == null) {
            throw new IllegalArgumentException("no paper layout named " + name + "; known: " + CASES.keySet());
        }
        return c;
    }
}
