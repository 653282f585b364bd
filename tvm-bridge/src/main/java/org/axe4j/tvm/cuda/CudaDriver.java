package org.axe4j.tvm.cuda;

import com.sun.jna.Library;
import com.sun.jna.Native;
import com.sun.jna.ptr.IntByReference;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * What the CUDA driver ({@code libcuda.so.1}, installed with the NVIDIA driver) says about this
 * machine's GPUs, asked without making a CUDA context: {@code cuInit}, {@code cuDeviceGetCount},
 * {@code cuDeviceGetName} and the compute-capability attributes (75 and 76).
 */
public final class CudaDriver {
    private static final int ATTRIBUTE_CC_MAJOR = 75;
    private static final int ATTRIBUTE_CC_MINOR = 76;

    /** One GPU: its ordinal, name and compute capability. */
    public record Gpu(int ordinal, String name, ComputeCapability capability) {
        @Override
        public String toString() {
            return "cuda:" + ordinal + " (" + name + ", compute capability " + capability + ")";
        }
    }

    /** The driver's answer: the GPUs, or why there are none. */
    public record Probe(List<Gpu> gpus, Optional<String> whyNone) {
        public Probe {
            gpus = List.copyOf(gpus);
        }

        public boolean present() {
            return !gpus.isEmpty();
        }

        /**
         * GPU {@code ordinal}.
         *
         * @throws CudaException naming why there is none (no driver, no GPU, an ordinal past the count)
         */
        public Gpu gpu(int ordinal) {
            if (gpus.isEmpty()) {
                throw new CudaException(whyNone.orElse("no CUDA GPU"));
            }
            if (ordinal < 0 || ordinal >= gpus.size()) {
                throw new CudaException("no GPU cuda:" + ordinal + "; this machine has " + gpus);
            }
            return gpus.get(ordinal);
        }
    }

    interface Library13 extends Library {
        int cuInit(int flags);

        int cuDeviceGetCount(IntByReference count);

        int cuDeviceGet(IntByReference device, int ordinal);

        int cuDeviceGetName(byte[] name, int length, int device);

        int cuDeviceGetAttribute(IntByReference value, int attribute, int device);
    }

    private static volatile Probe probed;

    private CudaDriver() {}

    /** The driver's answer, asked once per process. */
    public static Probe probe() {
        Probe done = probed;
        if (done == null) {
            synchronized (CudaDriver.class) {
                if (probed == null) {
                    probed = ask();
                }
                done = probed;
            }
        }
        return done;
    }

    private static Probe ask() {
        Library13 driver;
        try {
            driver = Native.load("cuda", Library13.class);
        } catch (UnsatisfiedLinkError e) {
            return none("no CUDA driver: libcuda.so.1 does not load (" + firstLine(e.getMessage())
                    + "); CUDA modules need the NVIDIA driver on this machine");
        }
        int rc = driver.cuInit(0);
        if (rc != 0) {
            return none("the CUDA driver finds no usable GPU: cuInit returned " + rc);
        }
        IntByReference count = new IntByReference();
        rc = driver.cuDeviceGetCount(count);
        if (rc != 0 || count.getValue() == 0) {
            return none("the CUDA driver reports no GPU (cuDeviceGetCount: " + rc + ", count " + count.getValue() + ")");
        }
        List<Gpu> gpus = new ArrayList<>();
        for (int ordinal = 0; ordinal < count.getValue(); ordinal++) {
            IntByReference device = new IntByReference();
            IntByReference major = new IntByReference();
            IntByReference minor = new IntByReference();
            byte[] name = new byte[256];
            if (driver.cuDeviceGet(device, ordinal) != 0
                    || driver.cuDeviceGetName(name, name.length, device.getValue()) != 0
                    || driver.cuDeviceGetAttribute(major, ATTRIBUTE_CC_MAJOR, device.getValue()) != 0
                    || driver.cuDeviceGetAttribute(minor, ATTRIBUTE_CC_MINOR, device.getValue()) != 0) {
                return none("the CUDA driver could not describe GPU " + ordinal);
            }
            gpus.add(new Gpu(ordinal, Native.toString(name),
                    new ComputeCapability(major.getValue(), minor.getValue())));
        }
        return new Probe(gpus, Optional.empty());
    }

    private static Probe none(String why) {
        return new Probe(List.of(), Optional.of(why));
    }

    private static String firstLine(String message) {
        return message == null ? "" : message.lines().findFirst().orElse("");
    }
}
