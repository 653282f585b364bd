package org.axe4j.mesh;

/** Local copies into the destination buffer: {@code dst[to[i]] = buffer(from)[at[i]]}. */
public record Copy(String from, int[] at, int[] to) {}
