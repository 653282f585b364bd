package org.axe4j.tvm;

/**
 * A Java implementation of a TVM packed function. Arguments arrive decoded as by
 * {@link TvmFunction#call}; the result is encoded the same way. Anything thrown becomes a TVM error
 * (see {@link Callbacks}).
 */
@FunctionalInterface
public interface PackedFunction {
    Object apply(Object[] args) throws Exception;
}
