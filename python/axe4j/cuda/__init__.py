"""CUDA: the emitters of the ``cuda-*`` plan kinds (``emit``, ``async_emit``, ``tma_emit``, ``emit_register``,
``register_fence``), the recorded choices of TVM's CUDA cases (``choices``), the CPU interpreter of CUDA kernels
(``interp``) and the CUDA kernels (``kernels``)."""

# The modules whose emitters register their plan kinds; axe4j._registry imports them the first time a plan of
# this target is emitted (importing the package alone stays light).
EMITTER_MODULES = ("emit", "async_emit", "tma_emit", "emit_register", "tmem_emit")


def alloc_by_span(pool, shape, dtype="float32", layout=None, align=0, scope="shared.dyn"):
    """``pool.alloc`` (TIRx's ``T.SMEMPool``) for a layout that reaches past its shape's elements, such as a padded
    tile ``S[(16, 48):(56, 1)]`` (bank-conflict padding): the pool's bump allocator carves the shape's bytes, so the
    next allocation would start inside the padding; this carves the layout's footprint instead, offset + the
    highest address on ``m`` + 1 elements (``VerifyLayouts``'s ``pool-span`` rule names the buffers that need it).
    A swizzled layout (``ComposeLayout``) is measured by its tile layout: the swizzle moves elements inside whole
    atoms."""
    from tvm.runtime import DataType
    from tvm.tirx.layout import ComposeLayout

    buffer = pool.alloc(shape, dtype, scope=scope, align=align, layout=layout if layout is not None else "default")
    tile = layout.tile_layout if isinstance(layout, ComposeLayout) else layout
    elements = 1
    for extent in shape:
        elements *= int(extent)
    if tile is None:
        return buffer
    def on_m(axis):
        return getattr(axis, "name", None) == "m" or str(axis).endswith('name="m")')

    reach = sum(int(v) for axis, v in tile.offset.items() if on_m(axis))   # highest address on m
    for it in list(tile.shard) + list(tile.replica):
        if on_m(it.axis) and int(it.stride) > 0:
            reach += (int(it.extent) - 1) * int(it.stride)
    extra = reach + 1 - elements
    if extra > 0:
        pool.offset += (extra * DataType(dtype).bits + 7) // 8
        if pool._owns_buffer:
            pool.max_offset = max(pool.max_offset, pool.offset)
    return buffer
