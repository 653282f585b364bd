/*
 * JNI fast path for org.axe4j.tvm.JniCalls: one plain JNI call into TVMFFIFunctionCall on an
 * argument frame the Java side already encoded in native memory. JNA direct mapping pays a generic
 * dispatch on every call; a JNI function with primitive arguments is a direct call.
 *
 * This library never opens libtvm_ffi itself: Java passes the address of TVMFFIFunctionCall that
 * it resolved from the library TvmLibraries loaded (with its signal handlers restored), so loading
 * this file runs no foreign static constructor.
 */
#include <jni.h>
#include <stdint.h>

/* The one tvm-ffi entry point used, declared by hand: int (void*, const TVMFFIAny*, int32_t, TVMFFIAny*). */
typedef int (*axe4j_function_call)(void *function, const void *args, int32_t num_args, void *result);

/* Set once by bind(), before any call; Java publishes it through a static initializer. */
static axe4j_function_call function_call;

JNIEXPORT jboolean JNICALL
Java_org_axe4j_tvm_JniCalls_bind(JNIEnv *env, jclass cls, jlong function_call_address) {
    (void) env;
    (void) cls;
    function_call = (axe4j_function_call) (intptr_t) function_call_address;
    return function_call != NULL ? JNI_TRUE : JNI_FALSE;
}

JNIEXPORT jint JNICALL
Java_org_axe4j_tvm_JniCalls_functionCall(JNIEnv *env, jclass cls, jlong function, jlong args, jint num_args,
                                         jlong result) {
    (void) env;
    (void) cls;
    return function_call((void *) (intptr_t) function, (const void *) (intptr_t) args, (int32_t) num_args,
                         (void *) (intptr_t) result);
}
