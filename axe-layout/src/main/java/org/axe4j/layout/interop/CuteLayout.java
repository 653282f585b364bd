package org.axe4j.layout.interop;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.axe4j.layout.AxeException;
import org.axe4j.layout.Shape;

/**
 * A CuTe layout {@code shape:stride}: a tree whose leaves are modes {@code s:d} (size {@code s >= 1},
 * integer stride {@code d}) and whose inner nodes are tuples of modes, e.g. {@code (2,(3,4)):(1,(2,6))}.
 *
 * <pre>
 *   leaf   s:d            applyFlat(i) = i * d                         i in [0, s)
 *   tuple  (m_0,...,m_k)  applyFlat(i) = sum_j m_j.applyFlat(i_j)      i = i_0 + |m_0| (i_1 + |m_1| (i_2 + ...))
 *   apply(c_0,...,c_k)    = sum_j mode(j).applyFlat(c_j)               one coordinate per top-level mode
 * </pre>
 *
 * Flat indices unflatten colexicographically (first mode fastest), as in CuTe. A leaf layout {@code 8:1}
 * has rank 1 and is its own only mode; {@code (8):(1)} is a tuple of one mode with the same map.
 * Example: {@code (4,(2,2)):(2,(1,8))} maps (1, 3) to {@code 1*2 + 1*1 + 1*8 = 11}.
 */
public sealed interface CuteLayout permits CuteLayout.Leaf, CuteLayout.Tuple {

    /** A leaf {@code size:stride}. */
    record Leaf(long size, long stride) implements CuteLayout {
        public Leaf {
            if (stride == Long.MIN_VALUE) {
                throw new AxeException(AxeException.Kind.INVALID, "CuTe mode stride (" + stride + ") is out of range");
            }
            if (size < 1) {
                throw new AxeException(AxeException.Kind.INVALID, "CuTe mode size (" + size + ") must be >= 1");
            }
            try {
                Math.multiplyExact(size - 1, Math.abs(stride));
            } catch (ArithmeticException e) {
                throw new AxeException(AxeException.Kind.INVALID,
                        "CuTe mode " + size + ":" + stride + " reaches beyond 64 bits");
            }
        }

        @Override
        public long size() {
            return size;
        }

        @Override
        public long applyFlat(long i) {
            checkFlat(this, i);
            return i * stride;
        }

        @Override
        public List<CuteLayout> modes() {
            return List.of(this);
        }

        @Override
        public String toString() {
            return size + ":" + stride;
        }
    }

    /** A tuple of modes, each a leaf or a nested tuple. */
    record Tuple(List<CuteLayout> children) implements CuteLayout {
        public Tuple {
            children = List.copyOf(children);
            if (children.isEmpty()) {
                throw new AxeException(AxeException.Kind.INVALID, "a CuTe tuple needs at least one mode");
            }
            // Size and reach (sum of (s-1)*|d| over the leaves) must fit, so that apply never overflows.
            long size = 1;
            long reach = 0;
            for (CuteLayout c : children) {
                try {
                    size = Math.multiplyExact(size, c.size());
                    for (Leaf leaf : c.leaves()) {
                        reach = Math.addExact(reach, Math.multiplyExact(leaf.size() - 1, Math.abs(leaf.stride())));
                    }
                } catch (ArithmeticException e) {
                    throw new AxeException(AxeException.Kind.INVALID, "size or reach of CuTe tuple " + children
                            + " overflows 64 bits");
                }
            }
        }

        @Override
        public long size() {
            long size = 1;
            for (CuteLayout c : children) {
                size *= c.size();
            }
            return size;
        }

        @Override
        public long applyFlat(long i) {
            checkFlat(this, i);
            long sum = 0;
            for (CuteLayout c : children) {
                sum += c.applyFlat(i % c.size());
                i /= c.size();
            }
            return sum;
        }

        @Override
        public List<CuteLayout> modes() {
            return children;
        }

        @Override
        public String toString() {
            return shapeText() + ":" + strideText();
        }
    }

    /** A leaf {@code size:stride}. */
    static CuteLayout of(long size, long stride) {
        return new Leaf(size, stride);
    }

    /** A tuple of the given modes. */
    static CuteLayout tuple(CuteLayout... modes) {
        return new Tuple(List.of(modes));
    }

    /** Reads {@code shape:stride}, e.g. {@code ((2,2),4):((1,4),2)}; CuTe's static {@code _4} reads as 4. */
    static CuteLayout parse(String text) {
        return CuteText.parse(text);
    }

    /** The number of flat indices: the product of all leaf sizes. */
    long size();

    /** The layout's value at a flat index, unflattened colexicographically (first mode fastest). */
    long applyFlat(long i);

    /** The top-level modes: a tuple's children, or the leaf itself. */
    List<CuteLayout> modes();

    /** The number of top-level modes. */
    default int rank() {
        return modes().size();
    }

    /** Top-level mode {@code k}. */
    default CuteLayout mode(int k) {
        return modes().get(k);
    }

    /** The sizes of the top-level modes: the shape whose coordinates {@link #apply} takes. */
    default Shape topShape() {
        long[] dims = new long[rank()];
        for (int k = 0; k < dims.length; k++) {
            dims[k] = mode(k).size();
        }
        return Shape.of(dims);
    }

    /** The layout's value at a coordinate of {@link #topShape()}; a nested mode reads its coordinate as a flat index. */
    default long apply(long... coord) {
        if (coord.length != rank()) {
            throw new AxeException(AxeException.Kind.INVALID, "coordinate " + Arrays.toString(coord) + " has rank "
                    + coord.length + " but CuTe layout " + this + " has rank " + rank());
        }
        long sum = 0;
        for (int k = 0; k < coord.length; k++) {
            sum += mode(k).applyFlat(coord[k]);
        }
        return sum;
    }

    /** The leaves in colexicographic order: the first leaf is the fastest digit of a flat index. */
    default List<Leaf> leaves() {
        List<Leaf> out = new ArrayList<>();
        collectLeaves(this, out);
        return List.copyOf(out);
    }

    /** The shape part of the text form, e.g. {@code (2,(3,4))}. */
    default String shapeText() {
        if (this instanceof Leaf m) {
            return Long.toString(m.size());
        }
        StringBuilder sb = new StringBuilder("(");
        for (CuteLayout c : modes()) {
            sb.append(sb.length() > 1 ? "," : "").append(c.shapeText());
        }
        return sb.append(')').toString();
    }

    /** The stride part of the text form, e.g. {@code (1,(2,6))}. */
    default String strideText() {
        if (this instanceof Leaf m) {
            return Long.toString(m.stride());
        }
        StringBuilder sb = new StringBuilder("(");
        for (CuteLayout c : modes()) {
            sb.append(sb.length() > 1 ? "," : "").append(c.strideText());
        }
        return sb.append(')').toString();
    }

    private static void collectLeaves(CuteLayout c, List<Leaf> out) {
        if (c instanceof Leaf m) {
            out.add(m);
        } else {
            for (CuteLayout child : c.modes()) {
                collectLeaves(child, out);
            }
        }
    }

    private static void checkFlat(CuteLayout c, long i) {
        if (i < 0 || i >= c.size()) {
            throw new AxeException(AxeException.Kind.INVALID,
                    "flat index " + i + " is outside [0, " + c.size() + ") of CuTe layout " + c);
        }
    }
}
