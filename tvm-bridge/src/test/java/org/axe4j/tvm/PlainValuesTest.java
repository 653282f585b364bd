package org.axe4j.tvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The value records that need no native code: text forms and statistics. */
class PlainValuesTest {
    @Test
    void deviceTextRoundTrips() {
        for (Device d : List.of(Device.cpu(), Device.cuda(0), Device.cuda(7), new Device(Device.CUDA_HOST, 1))) {
            assertEquals(d, Device.parse(d.toString()));
        }
        assertEquals(Device.cpu(), Device.parse("cpu"));
        assertEquals(Device.cuda(2), Device.parse("cuda:2"));
        assertThrows(IllegalArgumentException.class, () -> Device.parse("tpu:0"));
    }

    @Test
    void dataTypeTextRoundTripsAndSizes() {
        for (String text : List.of("float32", "int8x4", "uint1", "bool", "bfloat16", "handle", "complex64")) {
            assertEquals(text, DataType.parse(text).toString());
        }
        assertEquals(4, DataType.FLOAT32.bytes());
        assertEquals(16, DataType.parse("float32x4").bytes());
        assertEquals(1, DataType.parse("uint1").bytes());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> DataType.parse("int8xq"));
        assertEquals("DataType.parse(\"int8xq\"): expected int|uint|float|bfloat|complex<bits>[x<lanes>],"
                + " bool or handle", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> DataType.parse("float"));
        assertThrows(IllegalArgumentException.class, () -> DataType.parse("bool8"));
        assertThrows(IllegalArgumentException.class, () -> new DataType(DataType.INT, 256, 1));
    }

    @Test
    void timingStatistics() {
        Timing odd = new Timing(List.of(3.0, 1.0, 2.0));
        assertEquals(2.0, odd.mean());
        assertEquals(2.0, odd.median());
        assertEquals(1.0, odd.min());
        assertEquals(3.0, odd.max());
        Timing even = new Timing(List.of(4.0, 1.0, 2.0, 10.0));
        assertEquals(3.0, even.median());
        assertEquals(4.25, even.mean());
        assertThrows(IllegalArgumentException.class, () -> new Timing(List.of()));
    }
}
