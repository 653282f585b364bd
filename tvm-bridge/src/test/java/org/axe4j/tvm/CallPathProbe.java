package org.axe4j.tvm;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;

/**
 * Makes the same calls through whichever path {@link FastCall} chose in this JVM and prints one line
 * per result, so that a JVM on the JNI path and one forced onto JNA can be compared line by line.
 * The first line is {@code mode <jni|jna>}; the last ones show that the JVM's SIGSEGV handler
 * survived the loads and that implicit null checks still work.
 *
 * <p>Usage: {@code CallPathProbe <vector_add.so over float32[16]>}.
 */
public final class CallPathProbe {
    private CallPathProbe() {}

    public static void main(String[] args) {
        Tvm.load();
        long jvmHandler = Libc.handlerOf(Libc.currentAction(Libc.SIGSEGV));
        TestSupport.loadWithCppTestingGlobals();
        System.out.println("mode " + FastCall.mode());
        System.out.println("nop " + Tvm.function("testing.nop").call());
        System.out.println("add_one " + Tvm.function("testing.add_one").call(41L));
        System.out.println("echo_string " + Tvm.function("testing.echo").call("short"));
        System.out.println("echo_long_string " + Tvm.function("testing.echo").call("x".repeat(3000)).hashCode());
        System.out.println("java_global " + Tvm.function("testing.apply").call(Tvm.register("axe4j.probe.twice",
                a -> 2 * (Long) a[0], true), 21L));
        printError("raised", () -> Tvm.function("testing.test_raise_error").call("ValueError", "probe message"));
        printError("bad_argument", () -> Tvm.function("testing.add_one").call("not a number"));

        Kernel add = ModuleCache.shared().kernel(Path.of(args[0]), "vector_add");
        Kernel.TensorSpec spec = new Kernel.TensorSpec(new long[] {16}, DataType.FLOAT32);
        try (Kernel.Workspace workspace = add.newWorkspace(List.of(spec, spec, spec))) {
            for (int i = 0; i < 16; i++) {
                workspace.buffer(0).putFloat(4 * i, i);
                workspace.buffer(1).putFloat(4 * i, 100 * i);
            }
            workspace.call();
            System.out.println("workspace " + floats(workspace.buffer(2)));
            add.call(workspace.tensor(1), workspace.tensor(2), workspace.tensor(0));
            System.out.println("kernel_call " + floats(workspace.buffer(0)));
        }
        try (TvmTensor small = TvmTensor.empty(new long[] {3}, DataType.FLOAT32, Device.cpu())) {
            printError("kernel_error", () -> add.call(small, small, small));
        }
        System.out.println("sigsegv_handler_kept " + (Libc.handlerOf(Libc.currentAction(Libc.SIGSEGV)) == jvmHandler));
        System.out.println("null_checks " + NullCheckProbe.exercise());
    }

    private static String floats(ByteBuffer buffer) {
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < 16; i++) {
            text.append(i == 0 ? "" : ",").append(buffer.getFloat(4 * i));
        }
        return text.toString();
    }

    private static void printError(String label, Runnable call) {
        try {
            call.run();
            System.out.println(label + " no error");
        } catch (TvmException e) {
            System.out.println(label + " " + e.kind() + ": " + e.tvmMessage().replace('\n', ' '));
        }
    }
}
