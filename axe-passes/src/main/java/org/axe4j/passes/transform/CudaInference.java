package org.axe4j.passes.transform;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Result;
import org.axe4j.layout.Shape;
import org.axe4j.layout.SwizzledLayout;
import org.axe4j.layout.TileOf;
import org.axe4j.passes.TirxLayout;
import org.axe4j.passes.transform.CudaFragments.MmaRole;
import org.axe4j.passes.transform.InferLayouts.Proposal;
import org.axe4j.passes.transform.TirFunction.Buffer;
import org.axe4j.passes.transform.TirFunction.Call;
import org.axe4j.passes.transform.TirFunction.Region;
import org.axe4j.tvm.TvmObject;

/**
 * What one CUDA tile call asks of a register or shared buffer without a layout, so that its matrix rule accepts:
 * <ul>
 *   <li>warp {@code gemm} (mma.sync, 16-bit A/B, f32 C/D): each register operand the m16n8k16 fragment of its role
 *   and orientation (A, or A^T stored K x M; B stored K x N, or N x K with {@code trans_b}; C, D) tiled row-major
 *   over its blocks;</li>
 *   <li>warpgroup {@code gemm_async} on sm_90a: the register accumulator the wgmma m64nNk16 fragment (N the widest
 *   multiple of 8 up to 256 dividing the tile's N) tiled row-major over its blocks;</li>
 *   <li>a shared 16-bit operand of {@code gemm_async} (A M x K, B N x K, K-major) or the 2-D destination of a
 *   {@code copy_async} from global (TMA): K-major with the widest swizzle (128, 64, 32 bytes) whose row divides K,
 *   the layout both the TMA box and the wgmma descriptor walk; 8x8 core matrices when none divides. A shared
 *   buffer of more dims used one (rows x K) matrix at a time (a ring of stages) stacks such tiles, leading dims
 *   row-major and outermost.</li>
 * </ul>
 */
final class CudaInference {
    private CudaInference() {}

    /** The proposal of {@code call} for its operand {@code role} ({@code b}), if the call has a rule to satisfy. */
    static Optional<Proposal> propose(Buffer b, Call c, int role, TargetLimits target) {
        Region r = c.regions().get(role);
        int rank = b.shape().length;
        boolean local = b.scope().equals("local");
        if (rank < 2 || (local && rank != 2) || !wholeMatrix(r)) {
            return Optional.empty();
        }
        long rows = b.shape()[rank - 2];
        long cols = b.shape()[rank - 1];
        String scope = execScope(c);
        if (local && c.op().equals("gemm") && scope.equals("warp") && c.regions().size() >= 4) {
            MmaRole mr = mmaRole(c, role);
            if (!mmaTypes(c)) {
                return Optional.empty();
            }
            Layout l = CudaFragments.mma(mr, rows, cols);
            return l == null ? Optional.empty() : Optional.of(new Proposal(l, "warp gemm operand " + roleName(role)
                    + ": the mma.m16n8k16 " + mr + " fragment (" + mr.rows + "x" + mr.cols + ") tiled row-major over "
                    + rows / mr.rows + "x" + cols / mr.cols + " blocks, as axe4j-cuda-mma takes it", c));
        }
        if (local && c.op().equals("gemm_async") && role == 0 && scope.equals("warpgroup")
                && target.arch().equals("sm_90a") && b.dtype().equals("float32")) {
            Layout l = CudaFragments.wgmmaAccumulator(rows, cols);
            long w = CudaFragments.wgmmaWidth(cols);
            return l == null ? Optional.empty() : Optional.of(new Proposal(l, "wgmma accumulator: the m64n" + w
                    + "k16 fragment (64x" + w + ") tiled row-major over " + rows / 64 + "x" + cols / w
                    + " blocks, as axe4j-cuda-wgmma takes it", c));
        }
        if (!b.scope().startsWith("shared") || b.elementBytes() != 2 || rows % 8 != 0 || cols % 8 != 0) {
            return Optional.empty();
        }
        boolean wgmmaOperand = c.op().equals("gemm_async") && (role == 1 || role == 2) && !transposed(c, role);
        boolean tmaBox = c.op().equals("copy_async") && role == 0 && c.regions().size() > 1
                && c.regions().get(1).buffer().scope().equals("global");
        if (!wgmmaOperand && !tmaBox) {
            return Optional.empty();
        }
        int mode = CudaFragments.widestSwizzle(cols, b.elementBytes());
        String inner = wgmmaOperand ? "K = " + cols : "its rows of " + cols;
        String why = mode == 0 ? "no swizzle row (16, 32, 64 elements) divides " + inner + ": 8x8 core matrices"
                : (wgmmaOperand ? "K-major, " : "") + (16 << mode) + "-byte swizzle (the widest whose row of "
                + (8 << mode) + " elements divides " + inner + ")";
        SwizzledLayout tile = CudaFragments.sharedKMajor(rows, cols, mode);
        String stack = "";
        if (rank > 2) {
            tile = CudaFragments.stacked(java.util.Arrays.copyOf(b.shape(), rank - 2), tile, rows * cols);
            stack = "; the leading dims " + java.util.Arrays.toString(java.util.Arrays.copyOf(b.shape(), rank - 2))
                    + " stack whole (" + rows + "x" + cols + ") tiles, each a whole number of swizzle periods";
        }
        return Optional.of(new Proposal(tile, (wgmmaOperand ? "wgmma operand " + roleName(c, role)
                : "TMA destination") + ": " + why + stack + ", which axe4j-cuda-tma and axe4j-cuda-wgmma both accept", c));
    }

    /**
     * User-given register operands of a warp gemm or warpgroup gemm_async that are not a tile of the fragment their
     * rule needs: the inferred operands then cannot make the rule accept.
     */
    static List<String> partnerConflicts(Buffer b, Call c, TargetLimits target) {
        List<String> out = new ArrayList<>();
        boolean mma = c.op().equals("gemm") && execScope(c).equals("warp");
        boolean wgmma = c.op().equals("gemm_async") && execScope(c).equals("warpgroup");
        for (int k = 0; (mma || wgmma) && k < c.regions().size(); k++) {
            Buffer o = c.regions().get(k).buffer();
            if (o == b || o.layout() == null || !o.scope().equals("local") || o.shape().length != 2
                    || !o.constantShape() || (wgmma && k != 0)) {
                continue;
            }
            TirxLayout given = VerifyLayouts.layoutOf(o);
            Layout fragment = mma ? mmaRole(c, k).fragment : CudaFragments.wgmmaAtom(CudaFragments.wgmmaWidth(o.shape()[1]));
            Shape atom = mma ? Shape.of(mmaRole(c, k).rows, mmaRole(c, k).cols)
                    : Shape.of(64, CudaFragments.wgmmaWidth(o.shape()[1]));
            if (atom.dim(1) == 0 || o.shape()[0] % atom.dim(0) != 0 || o.shape()[1] % atom.dim(1) != 0) {
                continue;
            }
            Result<Layout> m = given == null || !given.symbolic().isEmpty() ? null
                    : TileOf.outer(given.layout(), Shape.of(o.shape()[0], o.shape()[1]), fragment, atom);
            if (m == null || !m.isPresent()) {
                out.add("user-given layout " + (given == null ? "?" : given.layout()) + " of " + o.name() + " ("
                        + roleName(c, k) + ") is not a tile of the " + (mma ? "mma" : "wgmma") + " fragment "
                        + fragment + "; kept it, so the " + (mma ? "axe4j-cuda-mma" : "axe4j-cuda-wgmma")
                        + " rule will decline this call" + (m == null ? "" : ": " + m.reason()));
            }
        }
        return out;
    }

    /** gemm operands in call order: D, A, B, C; transposes are the first two boolean arguments. */
    private static MmaRole mmaRole(Call c, int role) {
        return switch (role) {
            case 1 -> transposed(c, 1) ? MmaRole.A_T : MmaRole.A;
            case 2 -> transposed(c, 2) ? MmaRole.B_T : MmaRole.B;
            default -> MmaRole.C;
        };
    }

    private static boolean transposed(Call c, int role) {
        List<Boolean> flags = new ArrayList<>();
        for (Object o : c.others()) {
            if (o instanceof Boolean f) {
                flags.add(f);
            }
        }
        int at = role - 1;
        return at >= 0 && at < flags.size() && flags.get(at);
    }

    private static boolean mmaTypes(Call c) {
        String in = c.regions().get(1).buffer().dtype();
        return (in.equals("float16") || in.equals("bfloat16")) && c.regions().get(2).buffer().dtype().equals(in)
                && c.regions().get(0).buffer().dtype().equals("float32")
                && c.regions().get(3).buffer().dtype().equals("float32");
    }

    private static String roleName(int role) {
        return switch (role) {
            case 0 -> "D";
            case 1 -> "A";
            case 2 -> "B";
            default -> "C";
        };
    }

    private static String roleName(Call c, int role) {
        return c.op().equals("gemm_async") ? List.of("C", "A", "B").get(Math.min(role, 2)) : roleName(role);
    }

    /**
     * The region is one whole matrix of its buffer: the last two dims whole, every leading dim of extent 1 (a
     * stage of a stacked shared tile; a register tile has no leading dims).
     */
    private static boolean wholeMatrix(Region r) {
        Long[] shape = r.buffer().shape();
        for (int k = 0; k < shape.length; k++) {
            boolean last = k >= shape.length - 2;
            if (r.extents()[k] == null || (last && (r.begins()[k] == null || r.begins()[k] != 0
                    || !r.extents()[k].equals(shape[k]))) || (!last && r.extents()[k] != 1)) {
                return false;
            }
        }
        return true;
    }

    /** {@code ExecScope.kind} numbers (TIRx's {@code ExecScopeKind}). */
    private static final java.util.Map<Long, String> SCOPE_KINDS = java.util.Map.of(
            2L, "cluster", 3L, "cta", 4L, "warpgroup", 5L, "warp", 6L, "thread");

    /** The call's cooperation scope ({@code TilePrimitiveCall.scope.kind}): thread, warp, warpgroup, cta, cluster. */
    static String execScope(Call c) {
        Object s = c.node().fieldNames().contains("scope") ? c.node().get("scope") : null;
        Object kind = s instanceof TvmObject o && o.fieldNames().contains("kind") ? o.get("kind") : null;
        return kind instanceof Long k ? SCOPE_KINDS.getOrDefault(k, "thread") : "thread";
    }
}
