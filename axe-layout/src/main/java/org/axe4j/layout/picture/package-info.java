/**
 * Pictures of layouts: which hardware coordinates hold each element of a logical tile.
 *
 * <p>{@link org.axe4j.layout.picture.TileModel} computes, once, the cells of the logical tile of a
 * layout {@code L} under an admitted shape {@code S}: ranks above 2 are flattened to rows by grouping
 * the leading dimensions ({@code rows = S_0 * ... * S_{m-2}}, {@code cols = S_{m-1}}), and each cell
 * holds the set {@code L(c)}. The renderers only draw that model, so both pictures show the same points:
 *
 * <ul>
 *   <li>{@link org.axe4j.layout.picture.TextTable}: a fixed-width table, one line per point of a cell;
 *   <li>{@link org.axe4j.layout.picture.SvgPicture}: one rectangle per cell, coloured by the cell's
 *       thread (or device) coordinates, every replica listed.
 * </ul>
 *
 * Points print compactly through {@link org.axe4j.layout.picture.PointLabels}, e.g. the tensor-core
 * tile's element (2,9) is {@code L8 W6 r1 / L8 W10 r1} with legend {@code L = laneid, W = warpid, r = reg}.
 */
package org.axe4j.layout.picture;
