package org.axe4j.tvm;

/** DLPack's {@code DLDevice}: device type ({@code kDLCPU = 1}, {@code kDLCUDA = 2}, ...) and ordinal. */
public record Device(int deviceType, int deviceId) {
    public static final int CPU = 1;
    public static final int CUDA = 2;
    public static final int CUDA_HOST = 3;

    public static Device cpu() {
        return new Device(CPU, 0);
    }

    public static Device cuda(int id) {
        return new Device(CUDA, id);
    }

    /** Parses {@code cpu}, {@code cuda}, {@code cpu:0}, {@code cuda:1}. */
    public static Device parse(String text) {
        String[] parts = text.trim().split(":");
        int id = parts.length > 1 ? Integer.parseInt(parts[1]) : 0;
        switch (parts[0]) {
            case "cpu": return new Device(CPU, id);
            case "cuda": return new Device(CUDA, id);
            case "cuda_host": return new Device(CUDA_HOST, id);
            default: throw new IllegalArgumentException("Device.parse(\"" + text + "\"): expected cpu[:id] or cuda[:id]");
        }
    }

    @Override
    public String toString() {
        String name = deviceType == CPU ? "cpu" : deviceType == CUDA ? "cuda" : deviceType == CUDA_HOST
                ? "cuda_host" : "device" + deviceType;
        return name + ":" + deviceId;
    }
}
