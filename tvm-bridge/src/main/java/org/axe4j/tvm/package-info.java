/**
 * A JVM binding of TVM's C ABI (tvm-ffi) over JNA.
 *
 * <h2>What crosses the boundary</h2>
 * Every value TVM passes is a 16-byte {@code TVMFFIAny}: a type index, four bytes used only by
 * small strings, and an 8-byte payload (integer, double, pointer, data type, device, or an object
 * pointer). Objects start with a 24-byte header (reference count, type index, deleter) followed by
 * their cell: a string's bytes, a function's entry point, a tensor's {@code DLTensor}, an array's
 * elements. {@link org.axe4j.tvm.Values} documents the Java side of each kind:
 * <pre>
 *   Tvm.call("ffi.Array", 1L, "two", 3.0)        -> List [1, two, 3.0]
 *   Tvm.call("ffi.MapGetItem", Map.of("k", 7L), "k") -> 7L
 *   Tvm.call("ir.Range", 2L, 10L, null)          -> TvmObject ir.Range, get("extent") is IntImm 8
 * </pre>
 *
 * <h2>Calls</h2>
 * {@link org.axe4j.tvm.TvmFunction#call} writes arguments into a per-thread pooled native frame
 * and calls {@code TVMFFIFunctionCall} through {@link org.axe4j.tvm.FastCall}: a plain JNI function
 * ({@code libaxe4j_jni.so}, in the jar) or, without it or with {@code -Daxe4j.tvm.jni=false}, JNA
 * direct mapping ({@code Native.register}); a non-zero return code becomes a {@link org.axe4j.tvm.TvmException} with TVM's error kind,
 * message and backtrace. Java functions become TVM functions
 * ({@link org.axe4j.tvm.Tvm#register}); what they throw becomes a TVM error of a matching kind
 * ({@code IllegalArgumentException} is {@code ValueError}, others {@code RuntimeError}).
 *
 * <h2>Ownership</h2>
 * A {@link org.axe4j.tvm.TvmObject} owns one reference: close it, or a {@code Cleaner} releases
 * it once the wrapper is unreachable. Strings, byte arrays, arrays and maps are copied into Java
 * values, so they need no closing.
 *
 * <h2>Loading</h2>
 * {@link org.axe4j.tvm.TvmLibraries#load()} finds the libraries, loads them in TVM's order and
 * keeps the JVM's SIGSEGV handler, which {@code libtvm_ffi} would otherwise replace (the JVM
 * relies on that signal for implicit null checks). {@link org.axe4j.tvm.Axe4jGlobals#install()}
 * registers axe4j's own globals for Python.
 */
package org.axe4j.tvm;
