package org.axe4j.mesh;

import java.util.ArrayList;
import java.util.List;
import org.axe4j.layout.AxeException;
import org.axe4j.layout.Axis;
import org.axe4j.layout.interop.DeviceMesh;

/**
 * Rank numbering of a {@link DeviceMesh}: rank = row-major index of the mesh coordinate (PyTorch's
 * {@code DeviceMesh(arange(n).reshape(shape))}). A device point {@code {axis: v}} decodes per axis into the
 * coordinates of the mesh dimensions on that axis ({@code i_j = (v / meshStride_j) mod shape_j}), so
 * {@code rank = sum over axes of rankOf_axis(v)}, one lookup table per device axis.
 */
final class MeshRanks {
    final DeviceMesh mesh;
    final int size;
    /** Distinct device axes, in order of first use by a mesh dimension. */
    final List<Axis> axes = new ArrayList<>();
    /** {@code rankPart[a][v]}: the rank contribution of value v on device axis a. */
    final int[][] rankPart;

    MeshRanks(DeviceMesh mesh) {
        this.mesh = mesh;
        if (mesh.size() > (1 << 20)) {
            throw new AxeException(AxeException.Kind.INVALID, "device mesh " + mesh + " has " + mesh.size()
                    + " devices; the planner handles at most 2^20");
        }
        this.size = (int) mesh.size();
        for (Axis a : mesh.axes()) {
            if (!axes.contains(a)) {
                axes.add(a);
            }
        }
        rankPart = new int[axes.size()][];
        for (int a = 0; a < axes.size(); a++) {
            long extent = 1;
            for (int j = 0; j < mesh.rank(); j++) {
                if (mesh.axis(j).equals(axes.get(a))) {
                    extent *= mesh.dim(j);
                }
            }
            rankPart[a] = new int[(int) extent];
            for (int v = 0; v < extent; v++) {
                int r = 0;
                for (int j = 0; j < mesh.rank(); j++) {
                    if (mesh.axis(j).equals(axes.get(a))) {
                        r += (int) ((v / mesh.stride(j)) % mesh.dim(j) * rankStride(j));
                    }
                }
                rankPart[a][v] = r;
            }
        }
    }

    /** Row-major step of mesh dimension j in the rank numbering. */
    long rankStride(int j) {
        long s = 1;
        for (int k = j + 1; k < mesh.rank(); k++) {
            s *= mesh.dim(k);
        }
        return s;
    }

    /** The mesh coordinate of a rank. */
    int[] coord(int rank) {
        int[] c = new int[mesh.rank()];
        for (int j = mesh.rank() - 1; j >= 0; j--) {
            c[j] = (int) (rank % mesh.dim(j));
            rank /= (int) mesh.dim(j);
        }
        return c;
    }

    /**
     * The sub-group of {@code rank} along mesh dimensions {@code dims}: every rank whose coordinates agree with
     * it outside {@code dims}, ordered row-major over the coordinates in {@code dims}.
     */
    int[] group(int rank, List<Integer> dims) {
        int[] c = coord(rank);
        int n = 1;
        for (int j : dims) {
            n *= (int) mesh.dim(j);
        }
        int[] out = new int[n];
        for (int k = 0; k < n; k++) {
            int rest = k;
            int[] cc = c.clone();
            for (int t = dims.size() - 1; t >= 0; t--) {
                int j = dims.get(t);
                cc[j] = rest % (int) mesh.dim(j);
                rest /= (int) mesh.dim(j);
            }
            int r = 0;
            for (int j = 0; j < cc.length; j++) {
                r += (int) (cc[j] * rankStride(j));
            }
            out[k] = r;
        }
        return out;
    }
}
