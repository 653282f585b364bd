package org.axe4j.tvm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.jna.Pointer;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Random;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class TensorTest {
    @BeforeAll
    static void load() {
        Tvm.load();
    }

    @Test
    void allocateAndQuery() {
        try (TvmTensor t = TvmTensor.empty(new long[] {2, 3, 4}, DataType.FLOAT32, Device.cpu())) {
            assertArrayEquals(new long[] {2, 3, 4}, t.shape());
            assertEquals(3, t.ndim());
            assertEquals(DataType.FLOAT32, t.dtype());
            assertEquals(Device.cpu(), t.device());
            assertEquals(24, t.elementCount());
            assertEquals(96, t.byteSize());
            assertTrue(t.isContiguous());
            assertEquals("ffi.Tensor", t.typeKey());
            assertTrue(t.dataAddress() != 0);
        }
    }

    @Test
    void copiesForEveryJavaArrayType() {
        Random random = new Random(3);
        int n = 37;
        float[] f = new float[n];
        double[] d = new double[n];
        int[] i = new int[n];
        long[] l = new long[n];
        short[] s = new short[n];
        byte[] b = new byte[n];
        for (int k = 0; k < n; k++) {
            f[k] = random.nextFloat();
            d[k] = random.nextDouble();
            i[k] = random.nextInt();
            l[k] = random.nextLong();
            s[k] = (short) random.nextInt();
            b[k] = (byte) random.nextInt();
        }
        long[] shape = {n};
        try (TvmTensor t = TvmTensor.empty(shape, DataType.FLOAT32, Device.cpu())) {
            assertArrayEquals(f, t.copyFrom(f).toFloatArray());
            // the bytes sit in TVM's buffer, little-endian as on the host
            assertEquals(f[5], new Pointer(t.dataAddress()).getFloat(20));
        }
        try (TvmTensor t = TvmTensor.empty(shape, DataType.FLOAT64, Device.cpu())) {
            assertArrayEquals(d, t.copyFrom(d).toDoubleArray());
        }
        try (TvmTensor t = TvmTensor.empty(shape, DataType.INT32, Device.cpu())) {
            assertArrayEquals(i, t.copyFrom(i).toIntArray());
        }
        try (TvmTensor t = TvmTensor.empty(shape, DataType.INT64, Device.cpu())) {
            assertArrayEquals(l, t.copyFrom(l).toLongArray());
        }
        try (TvmTensor t = TvmTensor.empty(shape, DataType.INT16, Device.cpu())) {
            assertArrayEquals(s, t.copyFrom(s).toShortArray());
        }
        try (TvmTensor t = TvmTensor.empty(shape, DataType.INT8, Device.cpu())) {
            assertArrayEquals(b, t.copyFrom(b).toByteArray());
        }
    }

    @Test
    void directBuffers() {
        try (TvmTensor t = TvmTensor.empty(new long[] {4, 4}, DataType.FLOAT32, Device.cpu())) {
            ByteBuffer in = ByteBuffer.allocateDirect(16 * 4 + 8).order(ByteOrder.nativeOrder());
            in.position(8);
            for (int k = 0; k < 16; k++) {
                in.putFloat(8 + 4 * k, k * 0.5f);
            }
            t.copyFrom(in);
            float[] values = t.toFloatArray();
            for (int k = 0; k < 16; k++) {
                assertEquals(k * 0.5f, values[k]);
            }
            ByteBuffer out = ByteBuffer.allocateDirect(64).order(ByteOrder.nativeOrder());
            t.copyTo(out);
            assertEquals(7.5f, out.getFloat(60));
            assertThrows(IllegalArgumentException.class, () -> t.copyFrom(ByteBuffer.allocate(64)));
            assertThrows(IllegalArgumentException.class, () -> t.copyTo(ByteBuffer.allocateDirect(10)));
        }
    }

    @Test
    void mismatchedCopiesAreRejected() {
        try (TvmTensor t = TvmTensor.empty(new long[] {3}, DataType.FLOAT32, Device.cpu())) {
            IllegalArgumentException count = assertThrows(IllegalArgumentException.class,
                    () -> t.copyFrom(new float[4]));
            assertTrue(count.getMessage().contains("4 values") && count.getMessage().contains("3 elements"),
                    count.getMessage());
            IllegalArgumentException type = assertThrows(IllegalArgumentException.class,
                    () -> t.copyFrom(new double[3]));
            assertTrue(type.getMessage().contains("float32"), type.getMessage());
        }
    }

    @Test
    void dlpackExchange() {
        float[] values = {1, 2, 3, 4, 5, 6};
        try (TvmTensor t = TvmTensor.empty(new long[] {2, 3}, DataType.FLOAT32, Device.cpu())) {
            t.copyFrom(values);
            long managed = t.toDLPack();
            // DLManagedTensor begins with its DLTensor: data @0, ndim @16, shape @24
            Pointer dl = new Pointer(managed);
            assertEquals(t.dataAddress(), dl.getLong(0) + dl.getLong(40));
            assertEquals(2, dl.getInt(16));
            assertArrayEquals(new long[] {2, 3}, new Pointer(dl.getLong(24)).getLongArray(0, 2));
            try (TvmTensor back = TvmTensor.fromDLPack(managed)) {
                assertEquals(t.dataAddress(), back.dataAddress());
                assertArrayEquals(new long[] {2, 3}, back.shape());
                assertEquals(DataType.FLOAT32, back.dtype());
                assertArrayEquals(values, back.toFloatArray());
                back.copyFrom(new float[] {9, 9, 9, 9, 9, 9});
            }
            // shared memory: the original sees the write made through the imported tensor
            assertArrayEquals(new float[] {9, 9, 9, 9, 9, 9}, t.toFloatArray());
        }
    }

    @Test
    void tensorsPassThroughCalls() {
        Axe4jGlobals.install();
        try (TvmTensor t = TvmTensor.empty(new long[] {2}, DataType.INT32, Device.cpu());
             TvmTensor back = (TvmTensor) Tvm.call("axe4j.testing.echo", t)) {
            assertTrue(t.sameObject(back));
            assertEquals(java.util.List.of("ffi.Tensor"), Tvm.call("axe4j.testing.type_keys", t));
        }
    }
}
