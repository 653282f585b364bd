"""The kernels written on both lanes and compared by their PTX (test_tile_ops_tirx.py): plain data, so that the 0.27
lane's process (_tile_kernels_027.py) and the new lane's (_tile_kernels_tirx.py) build the same kernel from one entry.

- ``roundtrip``: A (global) -> S (shared) -> B (global) at ``scope``, over the ``shape`` region of arguments of shape
  ``storage``. S is row-major, or has the strides ``s_strides``, or is ``s_swizzle`` = (per_element, swizzle_len,
  atom_len, atom): a ``ComposeLayout`` of the atom tiled to the shape.
- ``map``: A -> X (shared), ``op`` at ``scope`` into Y (shared; ``add`` reads B too, into X), Y -> C.
- ``thread_local``: each thread's row of A into registers, doubled, back to B.
- ``cp_async``: A -> S by ``copy_async`` at ``scope``, waited and synced, S -> B.
- ``tile`` (plain or meta): the tutorial's 32 x 32 tile of a 64 x 64 matrix per CTA, its offset a plain variable (the
  rules cannot prove it aligned: one element per access) or an expression (four).
- ``transpose``: the tutorial's transpose of a 64 x 64 matrix by 32 x 32 tiles through a swizzled shared tile
  (``Swizzle<3,2,3>``), written row by row and read column by column through a transposed view of the same bytes.
- ``swizzle_bytes``: a 32 x 32 tile written through that swizzled layout, its bytes read back through a plain
  row-major view.
"""

from __future__ import annotations

ARCHS = ("sm_80", "sm_90a")

KERNELS = {
    # docs/tutorial.md, section 2 ("Tile offsets: T.meta_var")
    "tutorial_tile_plain": {"kind": "tile", "meta": False},
    "tutorial_tile_meta_var": {"kind": "tile", "meta": True},
    # docs/tutorial.md, section 2: the transpose through a swizzled shared tile and its transposed view
    "tutorial_transpose_swizzled": {"kind": "transpose"},
    # the same swizzled tile read back through a plain view of its bytes: the swizzle itself shows in the numbers
    "swizzled_tile_bytes_f32": {"kind": "swizzle_bytes"},
    # python/tests/test_cuda_dispatch.py's vectorized copies
    "copy_cta_f32_64x32": {"kind": "roundtrip", "shape": (64, 32), "dtype": "float32", "scope": "cta",
                           "threads": 128},
    "copy_cta_padded_rows_f32": {"kind": "roundtrip", "shape": (16, 30), "storage": (16, 32), "dtype": "float32",
                                 "scope": "cta", "threads": 64},
    "copy_cta_transposing_f32": {"kind": "roundtrip", "shape": (32, 32), "dtype": "float32", "scope": "cta",
                                 "threads": 128, "s_strides": (1, 32)},
    # python/tests/test_cuda_async.py's cp.async copies (16 bytes: .cg; 8 bytes: .ca), committed and waited
    "cp_async_cta_f32_64x32": {"kind": "cp_async", "shape": (64, 32), "dtype": "float32", "scope": "cta",
                               "threads": 128},
    "cp_async_warp_padded_rows_f32": {"kind": "cp_async", "shape": (16, 30), "storage": (16, 32),
                                      "dtype": "float32", "scope": "warp", "threads": 32},
    # fp16 128-byte swizzle (Swizzle<3,3,3>) tiled over the shared tile: 8-element units stay whole (16 bytes)
    "copy_cta_swizzled_shared_f16": {"kind": "roundtrip", "shape": (64, 64), "dtype": "float16", "scope": "cta",
                                     "threads": 128, "s_swizzle": (3, 3, 3, (8, 64))},
    "add_cta_f32": {"kind": "map", "op": "add", "shape": (32, 64), "dtype": "float32", "out_dtype": "float32",
                    "scope": "cta", "threads": 128},
    "exp_warp_f32": {"kind": "map", "op": "exp", "shape": (8, 32), "dtype": "float32", "out_dtype": "float32",
                     "scope": "warp", "threads": 32},
    "cast_cta_f32_to_f16": {"kind": "map", "op": "cast", "shape": (32, 32), "dtype": "float32",
                            "out_dtype": "float16", "scope": "cta", "threads": 128},
    "fill_warpgroup_f32": {"kind": "map", "op": "fill", "shape": (16, 32), "dtype": "float32",
                           "out_dtype": "float32", "scope": "warpgroup", "threads": 128},
    "fill_thread_f32": {"kind": "map", "op": "fill", "shape": (4, 8), "dtype": "float32", "out_dtype": "float32",
                        "scope": "thread", "threads": 32},
    "thread_local_add_f32": {"kind": "thread_local", "shape": (64, 8), "dtype": "float32"},
}


def arrays(name):
    """(the kernel's arguments as numpy arrays, seeded; the outputs zero) and the expected arguments after it ran,
    from numpy: ``(args, expected, exact)``; ``exact`` False where the device computes a transcendental
    (``ex2.approx`` under fast math) and a tolerance of 2 ulp applies."""
    import numpy as np

    spec = KERNELS[name]
    rng = np.random.default_rng(sum(map(ord, name)))
    kind = spec["kind"]
    if kind == "tile":
        a = rng.standard_normal((64, 64)).astype("float32")
        return [a, np.zeros_like(a)], [a, a], True
    if kind == "transpose":
        a = rng.standard_normal((64, 64)).astype("float32")
        return [a, np.zeros_like(a)], [a, a.T.copy()], True
    if kind == "swizzle_bytes":
        a = rng.standard_normal((32, 32)).astype("float32")
        b = np.empty_like(a)
        b.reshape(-1)[swizzle_3_2_3(np.arange(a.size))] = a.reshape(-1)
        return [a, np.zeros_like(a)], [a, b], True
    if kind in ("roundtrip", "cp_async"):
        storage = spec.get("storage") or spec["shape"]
        rows, cols = spec["shape"]
        a = rng.standard_normal(storage).astype(spec["dtype"])
        b = np.zeros_like(a)
        b[:rows, :cols] = a[:rows, :cols]
        return [a, np.zeros_like(a)], [a, b], True
    if kind == "thread_local":
        a = rng.standard_normal(spec["shape"]).astype(spec["dtype"])
        return [a, np.zeros_like(a)], [a, a + a], True
    a = rng.standard_normal(spec["shape"]).astype(spec["dtype"])
    b = rng.standard_normal(spec["shape"]).astype(spec["dtype"])
    out = {"add": lambda: a + b, "exp": lambda: np.exp(a), "cast": lambda: a.astype(spec["out_dtype"]),
           "fill": lambda: np.full(spec["shape"], 2.5, spec["out_dtype"])}[spec["op"]]()
    exact = spec["op"] != "exp"
    return [a, b, np.zeros(spec["shape"], spec["out_dtype"])], [a, b, out.astype(spec["out_dtype"])], exact


def swizzle_3_2_3(i):
    """CuTe's Swizzle<3,2,3> of element offsets, ``ComposeLayout(2, 3, 3, ...)``: bits 5..7 XORed into bits 2..4."""
    return i ^ ((i >> 3) & (7 << 2))


def agrees(got, expected, exact) -> bool:
    import numpy as np

    if exact:
        return all(np.array_equal(g, e) for g, e in zip(got, expected))
    return all(np.allclose(g, e, rtol=2 * np.finfo(e.dtype).eps, atol=0) for g, e in zip(got, expected))
