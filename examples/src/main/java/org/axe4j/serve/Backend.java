package org.axe4j.serve;

import java.util.List;
import java.util.function.Supplier;
import org.axe4j.tvm.Kernel;

/**
 * What runs a module's functions when not its own TVM kernels: the same service (admission, HTTP, JSON and binary
 * bodies, metrics, reload) in front of another engine, e.g. a peer to compare with through identical server code.
 * The manifest still names the functions and their arguments, and the module is still loaded (which checks it
 * against its manifest).
 */
@FunctionalInterface
public interface Backend {
    /**
     * Makes runners for {@code function}, whose arguments in manifest order are {@code args}; each runner's buffers
     * hold those arguments' bytes ({@link Runner#buffer}), inputs and outputs alike.
     */
    Supplier<Runner> runners(String function, List<Kernel.TensorSpec> args);
}
