package org.axe4j.layout;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A box region of a logical shape: per dimension {@code k} the half-open range
 * {@code [begin_k, end_k)}, of width {@code w_k = end_k - begin_k}.
 *
 * <pre>
 *   box = { b + y : 0 <= y_k < w_k }        text form  [2:6, 0:8]   (b = (2,0), w = (4,8))
 * </pre>
 *
 * Boxes are never empty: {@code 0 <= begin_k < end_k}. A slice admits the widths as its shape, and a
 * shape dimension is at least 1, so an empty box has no slice to describe. A box of rank 0 is the
 * single point of a rank-0 shape.
 */
public record Region(List<Long> begin, List<Long> end) {
    public Region {
        if (begin == null || end == null) {
            throw AxeException.invalid("region begin and end must not be null");
        }
        begin = List.copyOf(begin);
        end = List.copyOf(end);
        if (begin.size() != end.size()) {
            throw AxeException.invalid("region begin %s and end %s have different ranks (%d and %d)",
                    begin, end, begin.size(), end.size());
        }
        for (int k = 0; k < begin.size(); k++) {
            if (begin.get(k) < 0) {
                throw AxeException.invalid("region dimension %d begins at %d: a begin must be >= 0", k, begin.get(k));
            }
            if (begin.get(k) >= end.get(k)) {
                throw AxeException.invalid("region dimension %d is [%d:%d): a box must be non-empty (begin < end)",
                        k, begin.get(k), end.get(k));
            }
        }
    }

    /** {@code Region.of(new long[] {2, 6}, new long[] {0, 8})} is {@code [2:6, 0:8]}. */
    public static Region of(long[]... beginEndPairs) {
        List<Long> b = new ArrayList<>();
        List<Long> e = new ArrayList<>();
        for (int k = 0; k < beginEndPairs.length; k++) {
            long[] pair = beginEndPairs[k];
            if (pair == null || pair.length != 2) {
                throw AxeException.invalid("region dimension %d needs a (begin, end) pair", k);
            }
            b.add(pair[0]);
            e.add(pair[1]);
        }
        return new Region(b, e);
    }

    /** The box {@code b + [0, w)}: begins and widths per dimension. */
    public static Region at(long[] begin, long[] widths) {
        if (begin.length != widths.length) {
            throw AxeException.invalid("region begin has rank %d but widths have rank %d", begin.length, widths.length);
        }
        List<Long> b = new ArrayList<>();
        List<Long> e = new ArrayList<>();
        for (int k = 0; k < begin.length; k++) {
            Checks.positive("region dimension " + k + " width", widths[k]);
            b.add(begin[k]);
            e.add(Checks.add("region dimension " + k + " end", begin[k], widths[k]));
        }
        return new Region(b, e);
    }

    /** The whole of {@code shape}. */
    public static Region full(Shape shape) {
        return at(new long[shape.rank()], shape.toArray());
    }

    /** Reads the text form {@code [2:6, 0:8]} ({@code []} for rank 0); ASCII digits and blanks only. */
    public static Region parse(String text) {
        if (text == null) {
            throw new AxeException(AxeException.Kind.PARSE, "region text is null");
        }
        TextCursor c = new TextCursor("region", text);
        c.expect('[');
        List<long[]> pairs = new ArrayList<>();
        if (!c.accept(']')) {
            do {
                long b = c.integer("expected begin:end");
                c.expect(':');
                long e = c.integer("expected begin:end");
                pairs.add(new long[] {b, e});
            } while (c.accept(','));
            c.expect(']');
        }
        if (!c.atEnd()) {
            throw c.error("expected end of region");
        }
        return of(pairs.toArray(new long[0][]));
    }

    public int rank() {
        return begin.size();
    }

    public long begin(int k) {
        return begin.get(k);
    }

    public long end(int k) {
        return end.get(k);
    }

    /** {@code w_k = end_k - begin_k}. */
    public long width(int k) {
        return end.get(k) - begin.get(k);
    }

    /** The widths {@code (w_0, ..., w_{r-1})}: the shape a slice on this box admits. */
    public Shape extents() {
        List<Long> w = new ArrayList<>();
        for (int k = 0; k < rank(); k++) {
            w.add(width(k));
        }
        return new Shape(w);
    }

    /** The begins {@code b} as an array. */
    public long[] beginArray() {
        return begin.stream().mapToLong(Long::longValue).toArray();
    }

    /** True iff the box has the rank of {@code shape} and lies inside it: {@code end_k <= S_k}. */
    public boolean within(Shape shape) {
        return outside(shape).isEmpty();
    }

    /** Throws an INVALID error naming the box and the shape unless {@link #within}. */
    public void requireWithin(Shape shape) {
        Optional<String> why = outside(shape);
        if (why.isPresent()) {
            throw AxeException.invalid("%s", why.get());
        }
    }

    /** Why the box is not inside {@code shape}, or empty if it is. */
    Optional<String> outside(Shape shape) {
        if (rank() != shape.rank()) {
            return Optional.of(String.format("region %s has rank %d but shape %s has rank %d",
                    this, rank(), shape, shape.rank()));
        }
        for (int k = 0; k < rank(); k++) {
            if (end(k) > shape.dim(k)) {
                return Optional.of(String.format("region %s lies outside shape %s: dimension %d ends at %d > %d",
                        this, shape, k, end(k), shape.dim(k)));
            }
        }
        return Optional.empty();
    }

    /** {@code [2:6, 0:8]}, which {@link #parse} reads back. */
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("[");
        for (int k = 0; k < rank(); k++) {
            if (k > 0) {
                sb.append(", ");
            }
            sb.append(begin(k)).append(':').append(end(k));
        }
        return sb.append(']').toString();
    }
}
