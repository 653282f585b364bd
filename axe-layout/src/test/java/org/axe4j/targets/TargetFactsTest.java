package org.axe4j.targets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The hardware facts Python reads (python/axe4j/targets.json) are this package's, generated, never hand-edited. */
class TargetFactsTest {
    @Test
    void pythonsFileIsTheGeneratedOne() throws Exception {
        Path file = Path.of(System.getProperty("user.dir")).getParent().resolve("python/axe4j/targets.json");
        assertEquals(TargetFacts.json(), Files.readString(file),
                "python/axe4j/targets.json differs from org.axe4j.targets: run `make targets-json`");
    }

    @Test
    void psumBankHoldsItsBytesOfFloat32() {
        assertEquals(Trainium.PSUM_BANK_BYTES, Trainium.PSUM_BANK_FLOAT32 * 4);
        assertEquals(Trainium.PARTITIONS, Trainium.MATMUL_CONTRACTION);
    }

    @Test
    void wgmmaWidthAndSwizzleChoices() {
        assertEquals(256, MatrixFragments.wgmmaWidth(768));
        assertEquals(120, MatrixFragments.wgmmaWidth(120));
        assertEquals(0, MatrixFragments.wgmmaWidth(4));
        assertEquals(3, MatrixFragments.widestSwizzle(128, 2));   // 64 fp16 = 128-byte rows
        assertEquals(2, MatrixFragments.widestSwizzle(32, 2));
        assertEquals(0, MatrixFragments.widestSwizzle(8, 2));
        assertThrows(IllegalArgumentException.class, () -> MatrixFragments.wgmmaAccumulator(12));
    }
}
