#!/bin/sh
# Builds the JNI fast path (axe4j_jni.c) and the parallel launcher (axe4j_pool.c), every .c file beside SOURCE,
# into OUT_DIR/libaxe4j_jni.so during the Maven build.
# Never fails the build: without gcc or jni.h it prints why and stops, and the bridge then
# calls TVM through JNA (org.axe4j.tvm.FastCall.mode() says "jna").
# Usage: build.sh SOURCE OUT_DIR JAVA_HOME
source_file=$1
out_dir=$2
java_home=$3
compiler=${CC:-gcc}
# a skipped or failed build must not leave an older library behind to be packaged
rm -f "$out_dir/libaxe4j_jni.so"
if ! command -v "$compiler" >/dev/null 2>&1; then
    echo "axe4j JNI fast path: skipped, no C compiler '$compiler' on PATH (the bridge will use JNA)"
    exit 0
fi
include_dir=""
for candidate in "$java_home/include" "$java_home/../include" "${JAVA_HOME:-/nonexistent}/include"; do
    if [ -f "$candidate/jni.h" ]; then
        include_dir=$candidate
        break
    fi
done
if [ -z "$include_dir" ]; then
    echo "axe4j JNI fast path: skipped, no jni.h under $java_home (a JRE, not a JDK?; the bridge will use JNA)"
    exit 0
fi
mkdir -p "$out_dir"
if "$compiler" -O2 -fPIC -shared -pthread -Wall -Wextra -Werror -I"$include_dir" -I"$include_dir/linux" \
        -o "$out_dir/libaxe4j_jni.so" "$(dirname "$source_file")"/*.c; then
    echo "axe4j JNI fast path: built $out_dir/libaxe4j_jni.so"
else
    echo "axe4j JNI fast path: compiling $(dirname "$source_file")/*.c failed (the bridge will use JNA)"
fi
exit 0
