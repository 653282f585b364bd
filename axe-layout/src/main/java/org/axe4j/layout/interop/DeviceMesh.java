package org.axe4j.layout.interop;

import java.util.Arrays;
import java.util.List;
import org.axe4j.layout.AxeException;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Point;

/**
 * A device mesh: dimension {@code j} has {@code shape.get(j)} devices and is indexed on device axis
 * {@code axes.get(j)}. Mesh dimensions that share an axis number their devices row-major on it, as
 * PyTorch's {@code DeviceMesh(arange(n).reshape(shape))} numbers ranks:
 *
 * <pre>
 *   meshStride_j  = product of shape_{j'} over j' > j with axes_{j'} = axes_j
 *   device(i)     = sum_j i_j * meshStride_j @ axes_j
 * </pre>
 *
 * Example: {@code DeviceMesh.of(2, 2)} puts both dimensions on {@code gpuid} with strides (2, 1): mesh
 * coordinate (1, 0) is {@code {gpuid:2}}. {@code new DeviceMesh([2, 4], [dp, tp])} gives each its own axis.
 */
public record DeviceMesh(List<Long> shape, List<Axis> axes) {
    /** The default device axis of a mesh whose dimensions are not named. */
    public static final Axis GPUID = Axis.of("gpuid");

    public DeviceMesh {
        shape = List.copyOf(shape);
        axes = List.copyOf(axes);
        if (shape.size() != axes.size()) {
            throw new AxeException(AxeException.Kind.INVALID, "device mesh shape " + shape + " has " + shape.size()
                    + " dimensions but " + axes.size() + " axes " + axes);
        }
        long size = 1;
        for (int j = 0; j < shape.size(); j++) {
            if (shape.get(j) < 1) {
                throw new AxeException(AxeException.Kind.INVALID, "device mesh " + shape + " dimension " + j + " ("
                        + shape.get(j) + ") must be >= 1");
            }
            if (axes.get(j).isMemory()) {
                throw new AxeException(AxeException.Kind.INVALID, "device mesh axis " + j + " must not be the memory axis m,"
                        + " which addresses the local buffer");
            }
            try {
                size = Math.multiplyExact(size, shape.get(j));
            } catch (ArithmeticException e) {
                throw new AxeException(AxeException.Kind.INVALID, "device mesh " + shape + " has more than 2^63 devices");
            }
        }
    }

    /** A mesh with every dimension on {@link #GPUID}, devices numbered row-major. */
    public static DeviceMesh of(long... shape) {
        Axis[] axes = new Axis[shape.length];
        Arrays.fill(axes, GPUID);
        return new DeviceMesh(Arrays.stream(shape).boxed().toList(), List.of(axes));
    }

    /** A mesh whose dimension {@code j} is on axis {@code axes[j]}. */
    public static DeviceMesh named(List<Long> shape, String... axes) {
        return new DeviceMesh(shape, Arrays.stream(axes).map(Axis::of).toList());
    }

    public int rank() {
        return shape.size();
    }

    public long dim(int j) {
        return shape.get(j);
    }

    public Axis axis(int j) {
        return axes.get(j);
    }

    /** The number of devices. */
    public long size() {
        return shape.stream().reduce(1L, (a, b) -> a * b);
    }

    /** {@code meshStride_j}: how far one step along mesh dimension {@code j} moves on its axis. */
    public long stride(int j) {
        long s = 1;
        for (int k = j + 1; k < shape.size(); k++) {
            if (axes.get(k).equals(axes.get(j))) {
                s *= shape.get(k);
            }
        }
        return s;
    }

    /** The device point of a mesh coordinate. */
    public Point device(long... coord) {
        if (coord.length != rank()) {
            throw new AxeException(AxeException.Kind.INVALID, "mesh coordinate " + Arrays.toString(coord)
                    + " has rank " + coord.length + " but mesh " + this + " has rank " + rank());
        }
        Point p = Point.ZERO;
        for (int j = 0; j < coord.length; j++) {
            if (coord[j] < 0 || coord[j] >= shape.get(j)) {
                throw new AxeException(AxeException.Kind.INVALID, "mesh coordinate " + Arrays.toString(coord)
                        + " is outside mesh " + this);
            }
            p = p.plus(axes.get(j), coord[j] * stride(j));
        }
        return p;
    }

    /** {@code (2,2):(2@gpuid,1@gpuid)}: the mesh shape and the step of each dimension. */
    @Override
    public String toString() {
        StringBuilder sizes = new StringBuilder("(");
        StringBuilder steps = new StringBuilder("(");
        for (int j = 0; j < shape.size(); j++) {
            sizes.append(j > 0 ? "," : "").append(shape.get(j));
            steps.append(j > 0 ? "," : "").append(stride(j)).append('@').append(axes.get(j));
        }
        return sizes + "):" + steps + ")";
    }
}
