package org.axe4j.tvm;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.axe4j.tvm.cuda.CudaBinaries;
import org.axe4j.tvm.cuda.CudaException;

/**
 * Loads a CUDA library in a JVM where a Java stand-in plays TVM's {@code cuda} module loader (this
 * machine has no driver for the real one): the stand-in takes the serialized module
 * ({@code [u64 n][fmt][function table][u64 n][code]}), asks the registered compile callback for the
 * code's binary as the real loader does, prints what it got, and raises. Prints the exception
 * {@link TvmModule#load} ends with.
 *
 * <p>Usage: {@code CudaLoadProbe LIBRARY}
 */
public final class CudaLoadProbe {
    private CudaLoadProbe() {}

    public static void main(String[] args) {
        Tvm.load();
        CudaBinaries.registerCallback(List::of);
        Tvm.register("ffi.Module.load_from_bytes.cuda", a -> {
            byte[] blob = (byte[]) a[0];
            ByteBuffer b = ByteBuffer.wrap(blob).order(ByteOrder.LITTLE_ENDIAN);
            int n = (int) b.getLong(0);
            String fmt = new String(blob, 8, n, StandardCharsets.UTF_8);
            String code = null;
            for (int o = 8 + n; o + 8 <= blob.length; o++) {
                if (b.getLong(o) == blob.length - o - 8L) {
                    code = new String(blob, o + 8, blob.length - o - 8, StandardCharsets.UTF_8);
                    break;
                }
            }
            System.out.println("stand-in: fmt " + fmt + ", code sha256 " + CudaBinaries.sourceHash(code));
            byte[] binary = (byte[]) Tvm.call(CudaBinaries.CALLBACK, code);
            System.out.println("stand-in: callback returned " + binary.length + " bytes");
            throw new IllegalStateException("stand-in loader stops here");
        }, false);
        try {
            TvmModule.load(Path.of(args[0]));
            System.out.println("loaded (unexpected)");
        } catch (CudaException e) {
            System.out.println("CudaException: " + e.getMessage());
        } catch (TvmException e) {
            System.out.println("TvmException: " + e.getMessage());
        }
    }
}
