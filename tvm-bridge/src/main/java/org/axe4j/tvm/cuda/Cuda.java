package org.axe4j.tvm.cuda;

import java.nio.file.Path;
import org.axe4j.tvm.TvmException;
import org.axe4j.tvm.TvmLibraries;

/**
 * CUDA support in a JVM without Python: the driver's GPUs, the CUDA runtime, TVM's CUDA library and
 * the fatbin callback ({@link CudaBinaries}), set up once per process by {@link #enable()}.
 * {@link org.axe4j.tvm.TvmModule#load} calls it by itself when a library holds a CUDA module, so a
 * service only loads its module; code that allocates or times on the GPU first calls
 * {@code Cuda.enable()} for the {@link CudaRuntime}.
 */
public final class Cuda {
    private static volatile Cuda enabled;

    private final CudaDriver.Probe driver;
    private final CudaRuntime runtime;
    private final Path tvmCuda;
    private final boolean fatbinCallback;

    private Cuda(CudaDriver.Probe driver, CudaRuntime runtime, Path tvmCuda, boolean fatbinCallback) {
        this.driver = driver;
        this.runtime = runtime;
        this.tvmCuda = tvmCuda;
        this.fatbinCallback = fatbinCallback;
    }

    /**
     * Sets up CUDA support (idempotent, thread-safe).
     *
     * @throws CudaException saying why when there is no driver, no GPU, or no CUDA 13 runtime (with
     *     the folders searched)
     * @throws org.axe4j.tvm.TvmLoadException when this TVM installation has no
     *     {@code libtvm_runtime_cuda.so}
     */
    public static Cuda enable() {
        Cuda done = enabled;
        if (done != null) {
            return done;
        }
        synchronized (Cuda.class) {
            if (enabled == null) {
                CudaDriver.Probe driver = CudaDriver.probe();
                if (!driver.present()) {
                    throw new CudaException(driver.whyNone().orElse("no CUDA GPU"));
                }
                Path cudart = CudaLibraries.require("libcudart.so.13", "TVM's CUDA runtime");
                Path tvmCuda = TvmLibraries.loadCudaRuntime(cudart);
                CudaRuntime runtime = new CudaRuntime(cudart);
                boolean callback = CudaBinaries.registerCallback(driver::gpus);
                enabled = new Cuda(driver, runtime, tvmCuda, callback);
            }
            return enabled;
        }
    }

    /** Whether {@link #enable()} has completed in this process. */
    public static boolean isEnabled() {
        return enabled != null;
    }

    /**
     * Whether {@code error}, raised while loading a library, says that no loader of {@code cuda}
     * modules is registered: the library holds CUDA code and TVM's CUDA library is not loaded yet.
     */
    public static boolean isMissingCudaLoader(TvmException error) {
        String message = error.tvmMessage();
        return message != null && message.contains("load_from_bytes.cuda");
    }

    public CudaDriver.Probe driver() {
        return driver;
    }

    public CudaRuntime runtime() {
        return runtime;
    }

    /** The {@code libtvm_runtime_cuda.so} loaded. */
    public Path tvmCudaLibrary() {
        return tvmCuda;
    }

    /** Whether the bridge's fatbin callback serves CUDA code (false inside a Python TVM process). */
    public boolean servesFatbins() {
        return fatbinCallback;
    }

    @Override
    public String toString() {
        return "Cuda(" + driver.gpus() + ", runtime " + runtime.path() + ", " + tvmCuda
                + (fatbinCallback ? ", fatbins from " + CudaBinaries.folders() : ", TVM's own compile callback") + ")";
    }
}
