package org.axe4j.tvm;

/**
 * A module's contribution to the TVM globals that {@link Axe4jGlobals#install()} registers.
 *
 * <p>Implementations are found with {@link java.util.ServiceLoader}: a module lists its class in
 * {@code META-INF/services/org.axe4j.tvm.GlobalsProvider}. {@code install()} calls {@link #register()}
 * once per process, after the TVM libraries are loaded, in the order of {@link #name()}.
 */
public interface GlobalsProvider {
    /** A short name for messages and ordering, e.g. {@code "axe4j.layout"}. */
    String name();

    /** Registers this module's globals with {@link Tvm#register}; errors propagate to {@code install()}. */
    void register();
}
