"""The axe4j layout algebra, answered by Java, on TVM's own layout objects.

Every function takes TIRx layouts (``tvm.tirx.layout.TileLayout`` / ``ComposeLayout``) or axe4j layout
text (``"S[(4,8):(8,1)] + R[2:4@warpid] + 5"``, ``"Swizzle<3,3,3> o S[(8,64):(64,1)]"``) and returns TIRx
layouts, so it fits anywhere a TVM pipeline holds a layout::

    import tvm
    from tvm.tirx.layout import TileLayout, S
    import axe4j

    L = TileLayout(S[(4, 4, 4):(1, 100, 10)])
    axe4j.layout.slice(L, [64], [(30, 34)])      # TileLayout(S[4:10] + 102)

The first call starts the JVM (``axe4j.install()``). Each function calls the TVM global
``axe4j.layout.<name>`` registered by Java (``org.axe4j.passes.LayoutGlobals``); errors are TVM
``ValueError``s naming the function, the layout and the rule that failed.

Every call runs under caps (``limits()``; ``org.axe4j.layout.Budget``): at most ``max_points`` points
enumerated per call (``apply`` of an element with more points is refused before anything is enumerated),
``max_answer_bytes`` of answer text, ``max_request_bytes`` of layout text and ``max_millis`` milliseconds.
A call over a cap, or one that runs the JVM out of memory, raises a ``ValueError`` that says ``too large``
and names the figure and the cap. ``limits(max_points=...)`` changes them for the process; the environment
variables ``AXE4J_MAX_POINTS``, ``AXE4J_MAX_ANSWER_BYTES``, ``AXE4J_MAX_REQUEST_BYTES`` and
``AXE4J_MAX_MILLIS`` set them when the JVM starts. For big sets, ``count`` says how many points an element
has without enumerating them and ``iter_points`` yields them page by page in constant memory.

Argument orders follow TIRx's methods: ``tile(inner, outer, ...)`` is ``inner.tile(outer, ...)``,
``direct_sum(right, left, ...)`` is ``right.direct_sum(left, ...)``. ``span`` is TIRx's (one past the largest
coordinate, offset counted); axe4j's own, the extent of the image (max - min + 1), is ``image_span``. One
deliberate difference from TIRx: ``apply`` returns every point of the set-valued map (all replicas), not only the
base point. ``apply`` takes TIRx's arguments (``apply(L, i, j, shape=[4, 8])``), indices and region starts may
be TIR expressions (``apply(L, v)``, ``slice(L, shape, [(stage, stage + 1), ...])``), and layout text reads
TIRx's shorthands (``S[2,3,4]``, ``64 + S[8:1]``).
"""

from __future__ import annotations

from typing import Any, Sequence

from ._errors import SetupError

__all__ = [
    "apply",
    "apply_to_shape",
    "canonicalize",
    "count",
    "direct_sum",
    "equivalent",
    "group",
    "group_many",
    "image_span",
    "is_direct_sum_left",
    "is_direct_sum_right",
    "is_tile_inner",
    "is_tile_outer",
    "iter_points",
    "limits",
    "pack",
    "parse",
    "permute_by_groups",
    "size",
    "slice",
    "span",
    "storage",
    "tile",
    "tile_of",
    "tile_to",
    "to_text",
    "unpack",
    "verify_well_formed",
]


_FUNCTIONS: dict = {}


def _call(name: str, *args: Any) -> Any:
    function = _FUNCTIONS.get(name)
    if function is None:
        import tvm_ffi

        from . import install

        install()
        function = _FUNCTIONS[name] = tvm_ffi.get_global_func("axe4j.layout." + name)
    return function(*args)


def _ints(values: Sequence[Any], what: str = "shape") -> list:
    """Integers (shapes, seps, extents); a TIR expression or a non-integer is named, never a bare TypeError."""
    return [_index(v, "layout", f"{what}[{k}]") for k, v in enumerate(values)]


def _region(region: Sequence[Any]) -> list:
    from . import _lane

    tvm = _lane.tvm()
    out = []
    for k, r in enumerate(region):
        if isinstance(r, tvm.ir.Range):
            out.append(r)
        else:
            out.append([_index(r[0], "slice", f"region[{k}] begin", symbolic=True),
                        _index(r[1], "slice", f"region[{k}] end", symbolic=True)])
    return out


def parse(text: str):
    """The TIRx layout written by axe4j text."""
    return _call("parse", text)


def to_text(layout) -> str:
    """axe4j text of a layout (``S[...] + R[...] + offset``, symbolic offsets as ``(2*n)@axis``)."""
    return _call("to_text", layout)


def canonicalize(layout):
    """axe4j's canonical form: the same map, fewest iters; symbolic offsets and swizzles kept."""
    return _call("canonicalize", layout)


def group(layout, shape: Sequence[int]):
    """``(grouped, seps)``: the shard split so that iters ``seps[k]:seps[k+1]`` multiply to ``shape[k]``."""
    grouped, seps = _call("group", layout, _ints(shape))
    return grouped, [int(s) for s in seps]


def group_many(layout, shapes: Sequence[Sequence[int]]):
    """``(split, seps)``: the shard split (never fused) at the common refinement of ``shapes``, one seps list each."""
    split, seps = _call("group_many", layout, [_ints(shape, f"shapes[{i}]") for i, shape in enumerate(shapes)])
    return split, [[int(s) for s in one] for one in seps]


def tile(inner, outer, outer_shape: Sequence[int], inner_shape: Sequence[int]):
    """``outer (x) inner``: the tiled layout over the interleaved shape."""
    return _call("tile", inner, outer, _ints(outer_shape, "outer_shape"), _ints(inner_shape, "inner_shape"))


def tile_of(part, tiled, tiled_shape: Sequence[int], part_shape: Sequence[int], role: str):
    """The other factor of ``tiled`` when ``part`` is its ``role`` (``"inner"`` or ``"outer"``) factor, else None."""
    return _call("tile_of", part, tiled, _ints(tiled_shape, "tiled_shape"), _ints(part_shape, "part_shape"), role)


def is_tile_inner(inner, tiled, tiled_shape: Sequence[int], inner_shape: Sequence[int]):
    """TIRx's ``inner.is_tile_inner(tiled, ...)``: the outer layout, or None."""
    return tile_of(inner, tiled, tiled_shape, inner_shape, "inner")


def is_tile_outer(outer, tiled, tiled_shape: Sequence[int], outer_shape: Sequence[int]):
    """TIRx's ``outer.is_tile_outer(tiled, ...)``: the inner layout, or None."""
    return tile_of(outer, tiled, tiled_shape, outer_shape, "outer")


def direct_sum(right, left, left_shape: Sequence[int], right_shape: Sequence[int]):
    """``left + right`` over the interleaved shape (TIRx's ``right.direct_sum(left, ...)``)."""
    return _call("direct_sum", right, left, _ints(left_shape, "left_shape"), _ints(right_shape, "right_shape"))


def is_direct_sum_right(right, sum_layout, interleaved_shape: Sequence[int], right_shape: Sequence[int]):
    """TIRx's ``right.is_direct_sum_right(sum_layout, interleaved_shape, right_shape)``: the left addend A with
    ``sum_layout == A + right`` as maps, or None. ``interleaved_shape`` is ``(left[0], right[0], left[1], ...)``."""
    return _call("is_direct_sum_right", right, sum_layout, _ints(interleaved_shape, "interleaved_shape"),
                 _ints(right_shape, "right_shape"))


def is_direct_sum_left(left, sum_layout, interleaved_shape: Sequence[int], left_shape: Sequence[int]):
    """TIRx's ``left.is_direct_sum_left(sum_layout, interleaved_shape, left_shape)``: the right addend B with
    ``sum_layout == left + B`` as maps, or None."""
    return _call("is_direct_sum_left", left, sum_layout, _ints(interleaved_shape, "interleaved_shape"),
                 _ints(left_shape, "left_shape"))


def permute_by_groups(layout, seps: Sequence[int], perm: Sequence[int]):
    """TIRx's ``layout.permute_by_groups(seps, perm)``: shard iters ``seps[g]:seps[g+1]`` form group g; the groups
    in the order ``perm``. ``seps`` must run from 0 to the number of shard iters without decreasing."""
    return _call("permute_by_groups", layout, _ints(seps, "seps"), _ints(perm, "perm"))


def apply_to_shape(layout, coord: Sequence[int], input_shape: Sequence[int]) -> list[int]:
    """TIRx's ``layout.apply_to_shape(coord, input_shape)``: the value of each shard iter at ``coord`` of
    ``input_shape`` (over the shard split by ``input_shape`` where it splits without fusing, else the layout's
    own shard). Integer coordinates inside ``input_shape`` only."""
    return [int(v) for v in _call("apply_to_shape", layout, [_index(c, "apply_to_shape") for c in coord],
                                  _ints(input_shape, "input_shape"))]


def verify_well_formed(layout) -> bool:
    """TIRx's ``layout.verify_well_formed()``: whether the thread axes index one chain of nested scopes (False
    where TIRx raises)."""
    return bool(_call("verify_well_formed", layout))


def slice(layout, shape: Sequence[int], region: Sequence[Any]):  # noqa: A001 - TIRx's name
    """The layout of ``region`` (``[(begin, end), ...]`` or ``ir.Range``s) of a ``shape`` tensor, or None.

    A begin may be a TIR expression affine in variables (``[(stage, stage + 1), (0, 128), (0, 128)]``) when the
    width is an integer: the answer then has a symbolic offset (``stage * 16384``), equal to the slice at every
    value. Where the layout does not read the start as a translation (``S[(4,4):(1,4)]`` over ``[16]`` from
    ``2 * v``), the offset is the layout's digit formula at the start (``v // 2 + 8 * (v % 2)``, body ``S[2:4]``),
    given when one body is right at every start the region admits: proven when the box is aligned to a digit of the
    layout, else checked start by start up to 1024 starts. A ``ValueError`` names the region where the body changes
    with the start (``[(v, v + 2)]`` on the same layout), where there are more starts than that to check, or where
    no value keeps the box inside the shape; None where the slice at some start has no layout.
    """
    return _call("slice", layout, _ints(shape), _region(region))


def storage(layout):
    """``layout`` without its iters and offsets on thread axes: where the elements live (TIRx's ``storage()``)."""
    return _call("storage", layout)


def unpack(layout, num: int):
    """Each element as ``num`` contiguous elements (TIRx's ``unpack``): memory strides, replicas and the offset on m
    times ``num``, then an inner ``(num):(1)`` on m; thread axes unchanged (TIRx also scales thread strides).
    A swizzled layout (``ComposeLayout``) unpacks by a power of two ``2^k``: the swizzle's ``per_element`` grows by
    ``k`` and its tile unpacks."""
    return _call("unpack", layout, int(num))


def pack(layout, num: int):
    """``num`` contiguous elements as one (TIRx's ``pack``), the inverse of ``unpack``: the innermost iter stride 1
    on m with an extent ``num`` divides, every other memory stride and the offset on m multiples of ``num``.
    A swizzled layout packs by a power of two ``2^k <= 2^per_element``: ``per_element`` shrinks by ``k`` and its
    tile packs."""
    return _call("pack", layout, int(num))


def tile_to(layout, to_shape: Sequence[int], current_shape: Sequence[int]):
    """``layout`` (over ``current_shape``) repeated row-major over ``to_shape`` (TIRx's ``tile_to``)."""
    return _call("tile_to", layout, _ints(to_shape, "to_shape"), _ints(current_shape, "current_shape"))


def apply(layout, *coord, shape: Sequence[int] | None = None) -> list[dict]:
    """Every point of L(x) (all replicas), each ``{axis name: coordinate}``, with TIRx's conventions:
    ``apply(L, 5)`` (a flat index), ``apply(L, 2, 3, shape=[4, 8])`` (a coordinate of ``shape``). The older
    ``apply(L, [2, 3], [4, 8])`` (coordinate, shape) still works.

    An index may be a TIR expression (``tvm.tirx.Var``, ``4 * v + 1``): the coordinates are then TIR expressions
    (``floordiv``/``floormod`` of the flat index) equal to the integer answer at every value in range. On a swizzled
    layout (``ComposeLayout``) the swizzle applies after every offset, symbolic or not: the m coordinate is the swizzle
    of the whole address, written with ``^``, ``&`` and ``>>`` where a symbolic part is not a multiple of the
    swizzle's period.
    """
    if len(coord) == 2 and shape is None and all(isinstance(c, (list, tuple)) for c in coord):
        coord, shape = tuple(coord[0]), coord[1]            # apply(L, coordinate, shape)
    elif len(coord) == 1 and isinstance(coord[0], (list, tuple)):
        coord = tuple(coord[0])                             # apply(L, [i, j], shape=...)
    if not coord:
        raise ValueError("axe4j.layout.apply: no index given (a flat index, or a coordinate with shape=)")
    index = [_index(c, "apply", "index" if len(coord) == 1 else f"coord[{k}]", symbolic=True)
             for k, c in enumerate(coord)]
    if shape is None:
        if len(index) != 1:
            raise ValueError(f"axe4j.layout.apply: a coordinate of {len(index)} indices needs shape= (the "
                             "tensor's shape it is a coordinate of)")
        points = _call("apply", layout, index[0])
    else:
        points = _call("apply", layout, index, _ints(shape))
    return [{str(k): (int(v) if isinstance(v, int) else v) for k, v in p.items()} for p in points]


def _index(value: Any, function: str, what: str = "index", symbolic: bool = False):
    """An integer index, or (where ``symbolic``) a TIR expression passed on; anything else is named."""
    import numbers

    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        try:
            from . import _lane

            tvm = _lane.tvm()
            # 0.27 has IntImm in tvm.tirx, the new TIRx in tvm_tirx.ir.
            int_imm = tvm.tirx.IntImm if hasattr(tvm.tirx, "IntImm") else tvm.ir.IntImm
            if isinstance(value, int_imm):
                return int(value.value)
            if tvm.ir.is_prim_expr(value):
                if symbolic:
                    return value
                where = "axe4j.layout" if function == "layout" else f"axe4j.layout.{function}"
                raise ValueError(f"{where}: the {what} {value} is symbolic; {where} takes integers here (bind the "
                                 "variable first)")
        except (ImportError, SetupError):
            pass
        where = "axe4j.layout" if function == "layout" else f"axe4j.layout.{function}"
        raise ValueError(f"{where}: {what} {value!r} ({type(value).__name__}) is not an integer")
    return int(value)


def count(layout, x, shape: Sequence[int] | None = None) -> int:
    """How many points L(x) has (its distinct replicas), exact, without enumerating them; the same at every x, so
    ``x`` may be a TIR expression."""
    if shape is None:
        return int(_call("count", layout, _index(x, "count", "x", symbolic=True)))
    return int(_call("count", layout, [_index(c, "count", f"coord[{k}]", symbolic=True) for k, c in enumerate(x)],
                     _ints(shape)))


def iter_points(layout, x, shape: Sequence[int] | None = None, page: int = 4096):
    """Every point of L(x), in the order of ``apply``, fetched ``page`` points per call (at most ``max_points``).

    Memory stays constant whatever the size of the set; each page is one call, under the time cap.
    """
    coord = _index(x, "iter_points", "x") if shape is None else [_index(c, "iter_points", f"coord[{k}]")
                                                                   for k, c in enumerate(x)]
    dims = None if shape is None else _ints(shape)
    start = 0
    while True:
        points = _call("points", layout, coord, dims, start, int(page))
        for p in points:
            yield {str(k): (int(v) if isinstance(v, int) else v) for k, v in p.items()}
        if len(points) < page:
            return
        start += len(points)


def limits(**caps: int) -> dict:
    """The caps every call runs under, after setting those given (``max_points=``, ``max_answer_bytes=``,
    ``max_request_bytes=``, ``max_millis=``); they hold for the whole process."""
    result = _call("limits", {str(k): int(v) for k, v in caps.items()}) if caps else _call("limits")
    return {str(k): int(v) for k, v in result.items()}


def equivalent(a, b) -> bool:
    """True iff ``a`` and ``b`` induce the same set-valued map (exact)."""
    return bool(_call("equivalent", a, b))


def size(layout, axis: str | None = None) -> int:
    """Number of logical elements, or the size on ``axis``."""
    return int(_call("size", layout, axis))


def span(layout, axis: str | None = None):
    """TIRx's ``layout.span(axis)``: one past the largest coordinate on ``axis`` (the offset counted), the size of
    ``[0, max]``; without ``axis``, the memory axes added into one address, as TIRx does. A TIR expression where the
    offset is symbolic. TIRx counts negative strides with their sign and ignores a ``ComposeLayout``'s swizzle;
    this is the largest coordinate of the image in both cases (docs/tirx.md). A swizzled layout whose symbolic offset
    on m has a term that is not a multiple of the swizzle's period has no such expression: a ``ValueError`` names
    the term."""
    result = _call("span", layout, axis)
    return int(result) if isinstance(result, int) else result


def image_span(layout, axis: str | None = None):
    """axe4j's span: the extent of the image on ``axis`` (max - min + 1, offset not counted), or all of them as a
    dict (what ``tile`` scales by)."""
    result = _call("image_span", layout, axis)
    return int(result) if axis is not None else {str(k): int(v) for k, v in result.items()}


# ---- the rest of TIRx's public Layout methods (TileLayout / ComposeLayout), TIRx's argument conventions ----

__all__ += ["broadcast", "get_scope", "is_swizzle", "is_trainium", "is_trivial", "permute_dims", "to_psum",
            "trainium"]


def _int_list(values: Any, function: str, what: str) -> list:
    """A list of integers (``perm``, ``shape``); anything that is not a sequence of integers is named."""
    if isinstance(values, (str, bytes)) or not isinstance(values, (list, tuple)) and not (
            hasattr(values, "__len__") and hasattr(values, "__getitem__")):
        raise ValueError(f"axe4j.layout.{function}: {what} {values!r} ({type(values).__name__}) is not a sequence of "
                         "integers")
    return [_index(v, function, f"{what}[{k}]") for k, v in enumerate(values)]


def _axis_name(axis: Any, function: str) -> str:
    """An axis given as its name or as a ``tirx.Axis``; anything else is named."""
    if isinstance(axis, str):
        return axis
    name = getattr(axis, "name", None)
    if type(axis).__name__ == "Axis" and isinstance(name, str):
        return name
    raise ValueError(f"axe4j.layout.{function}: axis {axis!r} ({type(axis).__name__}) is not an axis name or a "
                     "tirx.Axis")


def broadcast(layout, num: int, position: int = -1, axis: Any = "m"):
    """TIRx's ``layout.broadcast(num, position, axis)``: a stride-0 iter ``(num, 0@axis)`` inserted into the shard,
    so the same element is seen ``num`` times along the new dimension. ``position`` is Python's list-insert index
    (``-1``, the default, appends; ``0`` puts it outermost) and must lie in ``[-(n+1), n]`` for ``n`` shard iters;
    ``num >= 1``. A ``ComposeLayout`` broadcasts its tile (axis m only)."""
    return _call("broadcast", layout, _index(num, "broadcast", "num"), _index(position, "broadcast", "position"),
                 _axis_name(axis, "broadcast"))


def permute_dims(layout, perm: Sequence[int]):
    """TIRx's ``layout.permute_dims(perm)``: the shard iters reordered, iter ``k`` of the answer being iter
    ``perm[k]``; ``perm`` must be a permutation of ``range(len(layout.shard))``. Replicas, offset and a
    ``ComposeLayout``'s swizzle are kept."""
    return _call("permute_dims", layout, _int_list(perm, "permute_dims", "perm"))


def is_trivial(layout) -> bool:
    """TIRx's ``layout.is_trivial()``: a ``TileLayout`` whose canonical form (TIRx's) is one stride-1 iter on a
    memory axis, or none, with no replica and no offset; False for a ``ComposeLayout``."""
    return bool(_call("is_trivial", layout))


def is_swizzle(layout) -> bool:
    """TIRx's ``layout.is_swizzle()``: a bare swizzle, a ``ComposeLayout`` whose tile is trivial."""
    return bool(_call("is_swizzle", layout))


def is_trainium(layout) -> bool:
    """TIRx's ``layout.is_trainium()``: a ``TileLayout`` with no shard iter on a memory axis other than P, F and
    Bank; False for a ``ComposeLayout``."""
    return bool(_call("is_trainium", layout))


def get_scope(layout):
    """TIRx's ``layout.get_scope()``: ``(ExecScope(innermost unit), ExecScope(outermost scope))`` of the layout's
    thread axes, or None without a thread axis in the shard. Thread axes that do not chain one order of scopes raise
    a ``ValueError`` (TIRx's check fails), and so do the grid axes ``bx``/``by``/``bz`` (no scope names the kernel).
    A ``ComposeLayout`` answers for its tile. On the new TIRx (tvm_tirx) the pair is of ``ThreadScope``s named after
    the thread axes' backend (``cuda.warp``), as tvm_tirx's own ``get_scope`` answers."""
    pair = _call("get_scope", layout)
    if pair is None:
        return None
    from . import _lane

    if _lane.is_tirx():
        from tvm_tirx.tirx.thread_scope import ThreadScope

        tile = getattr(layout, "tile_layout", layout)
        backend = next(it.axis.backend for it in tile.shard if it.axis.is_thread())
        return (ThreadScope(f"{backend}.{pair[0]}"), ThreadScope(f"{backend}.{pair[1]}"))
    from tvm.tirx.exec_scope import ExecScope

    return (ExecScope(str(pair[0])), ExecScope(str(pair[1])))


def trainium(annotation: str, shape: Sequence[int], is_psum: bool = False):
    """TIRx's ``TileLayout.trainium(annotation, shape, is_psum)``: one 'P' or 'F' per dim of ``shape``; P dims
    row-major on P, F dims row-major on F; a single P dim over 128 (a multiple of 128) splits into 128 partitions
    and an outer part that is the outermost F digit. ``is_psum`` then cuts F into banks (``to_psum``)."""
    if not isinstance(annotation, str):
        raise ValueError(f"axe4j.layout.trainium: annotation {annotation!r} ({type(annotation).__name__}) is not a "
                         "string of 'P' and 'F'")
    if not isinstance(is_psum, (bool, int)) or isinstance(is_psum, int) and is_psum not in (0, 1):
        raise ValueError(f"axe4j.layout.trainium: is_psum {is_psum!r} is not a bool")
    return _call("trainium", annotation, _int_list(shape, "trainium", "shape"), bool(is_psum))


def to_psum(layout):
    """TIRx's ``layout.to_psum()``: F cut into PSUM banks of 512 elements, iter by iter (an F stride that is a
    multiple of 512 moves to Bank; one that divides 512 stays while the iter fits a bank, else splits into whole
    banks and F). Replicas and offsets on other axes are kept (TIRx drops them); where F has no PSUM form, or has a
    replica or offset, a ``ValueError`` says so."""
    return _call("to_psum", layout)
