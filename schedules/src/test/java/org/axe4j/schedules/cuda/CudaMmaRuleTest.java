package org.axe4j.schedules.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Point;
import org.axe4j.layout.Property;
import org.axe4j.layout.Shape;
import org.axe4j.layout.Tile;
import org.axe4j.schedules.Decision;
import org.axe4j.schedules.Operand;
import org.axe4j.schedules.Request;
import org.axe4j.targets.MatrixFragments;
import org.junit.jupiter.api.Test;

/**
 * The mma plan, executed lane by lane with the instruction's semantics taken from the PTX ISA fragment tables
 * (not from the layouts), computes D = op(A) op(B) + beta C for every tile shape and orientation, with random outer
 * (register-block) layouts; integer-valued inputs make the check exact.
 */
class CudaMmaRuleTest {
    private static final Axis LANE = Axis.of("laneid");

    /**
     * Every tile shape (m in {16, 32, 48}, n in {8, ..., 32}, k in {16, 32}), orientation of A and B, beta in
     * {0, 1} and C either aliasing D or laid out on its own: 384 cases, each with random register-block orders
     * and random integer inputs from its own seed (from BASE_SEED and the case index); a failure names its case.
     */
    @Test
    void planComputesTheProductForEveryFragmentTileShape() {
        int cases = 0;
        for (long m = 16; m <= 48; m += 16) {
            for (long n = 8; n <= 32; n += 8) {
                for (long k = 16; k <= 32; k += 16) {
                    for (int flags = 0; flags < 16; flags++) {
                        checkProduct(m, n, k, (flags & 1) != 0, (flags & 2) != 0, (flags & 4) != 0, (flags & 8) != 0,
                                new Random((Property.BASE_SEED + cases) * 0x9E3779B97F4A7C15L));
                        cases++;
                    }
                }
            }
        }
        assertEquals(3 * 4 * 2 * 16, cases);
    }

    private static void checkProduct(long m, long n, long k, boolean ta, boolean tb, boolean beta, boolean cIsD,
            Random r) {
        String label = "m=" + m + " n=" + n + " k=" + k + " trans_a=" + ta + " trans_b=" + tb + " beta=" + beta
                + " C is D=" + cIsD + ": ";
        long[] aShape = ta ? new long[] {k, m} : new long[] {m, k};
        long[] bShape = tb ? new long[] {n, k} : new long[] {k, n};
        Layout aL = tiled(r, aShape, ta ? MatrixFragments.MMA_A_T : MatrixFragments.MMA_A, 16, 16);
        Layout bL = tiled(r, bShape, tb ? MatrixFragments.MMA_B_T : MatrixFragments.MMA_B, tb ? 8 : 16, tb ? 16 : 8);
        Layout dL = tiled(r, new long[] {m, n}, MatrixFragments.MMA_C, 16, 8);
        Layout cL = cIsD ? dL : tiled(r, new long[] {m, n}, MatrixFragments.MMA_C, 16, 8);
        Request call = request("float16", aShape, aL, bShape, bL, new long[] {m, n}, dL, cL, ta, tb, 1.0,
                beta ? 1.0 : 0.0);
        Decision d = CudaDispatch.TABLE.decide("axe4j-cuda-mma", call);
        assertTrue(d.accepted(), label + d.reason());
        long[][] a = random(r, m, k);
        long[][] b = random(r, k, n);
        long[][] c = random(r, m, n);
        double[][] aReg = distribute(ta ? transpose(a) : a, aShape, aL);
        double[][] bReg = distribute(tb ? transpose(b) : b, bShape, bL);
        double[][] cReg = distribute(c, new long[] {m, n}, cL);
        double[][] dReg = new double[32][(int) dL.spanOn(Axis.M)];
        run(d.planJson(), aReg, bReg, cReg, dReg);
        for (long i = 0; i < m; i++) {
            for (long j = 0; j < n; j++) {
                long want = beta ? c[(int) i][(int) j] : 0;
                for (long kk = 0; kk < k; kk++) {
                    want += a[(int) i][(int) kk] * b[(int) kk][(int) j];
                }
                Point p = dL.apply(Shape.of(m, n), i, j).get(0);
                assertEquals((double) want, dReg[(int) p.get(LANE)][(int) p.get(Axis.M)],
                        label + "D(" + i + "," + j + ") " + d.planJson().get("notes"));
            }
        }
    }

    @Test
    void declinesWithTheReason() {
        Layout a = MatrixFragments.MMA_A;
        Layout b = MatrixFragments.MMA_B;
        Layout c = MatrixFragments.MMA_C;
        long[] sa = {16, 16};
        long[] sb = {16, 8};
        long[] sc = {16, 8};
        assertDecline(request("float16", sa, a, sb, b, sc, c, c, false, false, 2.0, 0.0), "alpha must be 1");
        assertDecline(request("float32", sa, a, sb, b, sc, c, c, false, false, 1.0, 0.0), "float16 or bfloat16");
        assertDecline(request("float16", sa, Layout.parse("S[(16,2,4,2):(1@laneid,4,1@laneid,1)]"), sb, b, sc, c,
                c, false, false, 1.0, 0.0), "is not a tile of the mma fragment");
        assertDecline(request("float16", sa, a, sb, b, sc, c, c, true, false, 1.0, 0.0),
                "is not a tile of the mma fragment");
    }

    private static void assertDecline(Request call, String reason) {
        Decision d = CudaDispatch.TABLE.decide("axe4j-cuda-mma", call);
        assertFalse(d.accepted());
        assertTrue(d.reason().contains(reason), d.reason());
    }

    /** outer (x) fragment with the blocks in a random register order. */
    private static Layout tiled(Random r, long[] shape, Layout fragment, long rows, long cols) {
        long br = shape[0] / rows;
        long bc = shape[1] / cols;
        boolean rowMajor = r.nextBoolean();
        Layout outer = Layout.parse("S[(" + br + "," + bc + "):(" + (rowMajor ? bc : 1) + "," + (rowMajor ? 1 : br)
                + ")]");
        return Tile.tile(outer, Shape.of(br, bc), fragment, Shape.of(rows, cols));
    }

    private static Request request(String in, long[] aShape, Layout a, long[] bShape, Layout b, long[] dShape,
            Layout d, Layout c, boolean ta, boolean tb, double alpha, double beta) {
        List<Operand> ops = List.of(operand("D", "float32", dShape, d), operand("A", in, aShape, a),
                operand("B", in, bShape, b), operand("C", "float32", dShape, c));
        JsonObject params = new JsonObject();
        params.addProperty("threads", 32);
        params.addProperty("trans_a", ta);
        params.addProperty("trans_b", tb);
        params.addProperty("alpha", alpha);
        params.addProperty("beta", beta);
        JsonObject storage = new JsonObject();
        for (String role : List.of("D", "A", "B", "C")) {
            storage.addProperty(role, "local");
        }
        params.add("storage", storage);
        return new Request("gemm", "cuda", "warp", ops, params);
    }

    private static Operand operand(String role, String dtype, long[] shape, Layout layout) {
        return new Operand(role, role, dtype, shape, new long[shape.length], shape, layout);
    }

    private static long[][] random(Random r, long rows, long cols) {
        long[][] out = new long[(int) rows][(int) cols];
        for (long[] row : out) {
            for (int j = 0; j < row.length; j++) {
                row[j] = r.nextInt(7) - 3;
            }
        }
        return out;
    }

    private static long[][] transpose(long[][] x) {
        long[][] out = new long[x[0].length][x.length];
        for (int i = 0; i < x.length; i++) {
            for (int j = 0; j < x[0].length; j++) {
                out[j][i] = x[i][j];
            }
        }
        return out;
    }

    /** Each lane's registers of a tile stored with {@code layout}. */
    private static double[][] distribute(long[][] x, long[] shape, Layout layout) {
        double[][] regs = new double[32][(int) layout.spanOn(Axis.M)];
        for (int i = 0; i < shape[0]; i++) {
            for (int j = 0; j < shape[1]; j++) {
                Point p = layout.apply(Shape.of(shape), i, j).get(0);
                regs[(int) p.get(LANE)][(int) p.get(Axis.M)] = x[i][j];
            }
        }
        return regs;
    }

    /** The plan, one mma at a time; the fragments are read and written with the PTX ISA tables. */
    @SuppressWarnings("unchecked")
    private static void run(Map<String, Object> plan, double[][] a, double[][] b, double[][] c, double[][] d) {
        boolean fromC = plan.get("init").equals("C");
        for (Map<String, Object> tile : (List<Map<String, Object>>) plan.get("tiles")) {
            List<Long> ds = (List<Long>) tile.get("d");
            List<Long> cs = (List<Long>) tile.get("c");
            for (int l = 0; l < 32; l++) {
                for (int s = 0; s < 4; s++) {
                    d[l][(int) (long) ds.get(s)] = fromC ? c[l][(int) (long) cs.get(s)] : 0;
                }
            }
            for (Map<String, Object> step : (List<Map<String, Object>>) tile.get("steps")) {
                List<Long> aw = (List<Long>) step.get("a");
                List<Long> bw = (List<Long>) step.get("b");
                double[][] fa = new double[16][16];
                double[][] fb = new double[16][8];
                for (int l = 0; l < 32; l++) {
                    int g = l / 4;
                    int t = l % 4;
                    for (int i = 0; i < 8; i++) { // a_i is half (i % 2) of word i / 2
                        int row = (i == 0 || i == 1 || i == 4 || i == 5) ? g : g + 8;
                        int col = t * 2 + (i & 1) + (i >= 4 ? 8 : 0);
                        fa[row][col] = a[l][(int) (2 * aw.get(i / 2) + i % 2)];
                    }
                    for (int i = 0; i < 4; i++) {
                        int row = t * 2 + (i & 1) + (i >= 2 ? 8 : 0);
                        fb[row][g] = b[l][(int) (2 * bw.get(i / 2) + i % 2)];
                    }
                }
                for (int l = 0; l < 32; l++) {
                    for (int i = 0; i < 4; i++) {
                        int row = i < 2 ? l / 4 : l / 4 + 8;
                        int col = (l % 4) * 2 + (i & 1);
                        double sum = 0;
                        for (int kk = 0; kk < 16; kk++) {
                            sum += fa[row][kk] * fb[kk][col];
                        }
                        d[l][(int) (long) ds.get(i)] += sum;
                    }
                }
            }
        }
    }
}
