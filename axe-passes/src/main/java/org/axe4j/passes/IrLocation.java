package org.axe4j.passes;

import java.util.Optional;
import org.axe4j.tvm.Tvm;
import org.axe4j.tvm.TvmFunction;

/**
 * The source-location argument that TVM's expression constructors ({@code ir.IntImm}, {@code prim.Add}, ...) take
 * last: TVM 0.27's {@code Span} accepts None; the new TIRx (tvm_tirx) requires an {@code ir.Location} and has
 * {@code ir.UnknownLoc} for "none".
 */
final class IrLocation {
    private static volatile Object unknown;
    private static volatile boolean resolved;

    private IrLocation() {}

    /** None on TVM 0.27, the shared {@code ir.UnknownLoc()} on the new TIRx. */
    static Object none() {
        if (!resolved) {
            synchronized (IrLocation.class) {
                if (!resolved) {
                    Optional<TvmFunction> make = Tvm.findFunction("ir.UnknownLoc");
                    // Held for the life of the process: every constructor call shares it.
                    unknown = make.isPresent() ? make.get().call() : null;
                    resolved = true;
                }
            }
        }
        return unknown;
    }
}
