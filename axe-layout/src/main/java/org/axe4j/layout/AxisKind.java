package org.axe4j.layout;

/** What an axis indexes: storage, execution units, or devices of a mesh. */
public enum AxisKind {
    /** Memory: global/shared offsets, registers, Trainium partitions and free axis, tensor-memory columns. */
    MEMORY,
    /** Execution units: lanes, warps, threads, blocks. */
    THREAD,
    /** Devices of a mesh (GPUs, Trainium cores, ranks). */
    DEVICE,
    /** An axis the registry does not know; any identifier is a legal axis. */
    UNKNOWN
}
