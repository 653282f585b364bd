"""A call of an axe4j tile op on the new TIRx (tvm_tirx), described for the Java rules exactly as the 0.27 lane's
dispatch describes a CUDA call (``axe4j.dispatch.describe``): the same JSON fields (op, target, scope, operands with
their shapes, starts and extents, and the params ``storage``, ``align``, ``arch``, ``threads``, ``start_modulus``,
``start_text``), and the operands' ``tirx.TileLayout`` objects alongside."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from .._scope import threads_of

BINARY = ("add", "sub", "mul", "fdiv", "maximum", "minimum")   # the maps with two sources (dst, a, b)
REDUCTIONS = ("sum", "max", "min")   # (dst, src, axes, accum): src folded over its axes into dst


@dataclass(frozen=True)
class Described:
    """What Java reads (``json``, ``layouts``) and what the emitter needs: each role's tensor and region starts
    (expressions), and the scalar sources by position."""

    op: str
    json: str
    layouts: tuple
    tensors: dict = field(default_factory=dict)   # role -> tensor Var
    starts: dict = field(default_factory=dict)    # role -> [start expression per dim]
    extents: dict = field(default_factory=dict)   # role -> [extent per dim]
    scalars: dict = field(default_factory=dict)   # source position -> scalar expression
    storage: dict = field(default_factory=dict)   # role -> "global" | "shared" | "shared.dyn" | "local"


class NotDescribable(ValueError):
    pass


def _int_or_none(value):
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _modulus(expr):
    """[c, b] with ``expr`` always ``c * n + b`` (modular-set analysis; [1, 0] when nothing is known)."""
    from tvm_tirx.sym import Analyzer

    try:
        m = Analyzer().modular_set(expr)
        return [int(m.coeff), int(m.base)]
    except Exception:  # noqa: BLE001  (an expression the analysis does not take)
        return [1, 0]


def layout_of(tensor):
    """The tensor's layout (its effective layout: row-major when none is written)."""
    layout = tensor.ty.effective_layout()
    if layout is None:
        raise NotDescribable(f"{tensor.name}: no layout")
    return layout


def operands_text(args) -> str:
    """``S shared S[(16,32):(32,1)], A global S[...]``: each distinct tensor among ``args`` (regions) with its storage
    and layout, as refusals name them (tvm_tirx's own text for a layout Java cannot print)."""
    from .. import layout as axe_layout

    described, seen = [], set()
    for arg in args:
        source = getattr(arg, "source", None)
        if source is None or str(source.name) in seen:
            continue
        seen.add(str(source.name))
        try:
            text = str(axe_layout.to_text(layout_of(source)))
        except Exception:  # noqa: BLE001  (a layout Java cannot print)
            text = str(source.ty.layout)
        described.append(f"{source.name} {source.ty.scope} {text}")
    return ", ".join(described)


def _constant(expr):
    """The value of a numeric constant expression (a float), None when it is not one."""
    if isinstance(expr, (int, float)):
        return float(expr)
    for field_name in ("value",):
        inner = getattr(expr, field_name, None)
        if isinstance(inner, (int, float)):
            return float(inner)
        if inner is not None and not isinstance(inner, (int, float)) and hasattr(inner, "value"):
            return _constant(inner)
    return None


def gemm_params(args) -> dict:
    """A gemm's params as on 0.27: ``trans_a``, ``trans_b`` (bools) and ``alpha``, ``beta`` (floats, None when not
    constants)."""
    trans_a, trans_b, alpha, beta = args
    try:
        return {"trans_a": bool(int(trans_a)), "trans_b": bool(int(trans_b)), "alpha": _constant(alpha),
                "beta": _constant(beta)}
    except (TypeError, ValueError):
        raise NotDescribable(f"gemm: trans_a {trans_a} and trans_b {trans_b} must be constants") from None


def gemm_async_params(flags, options: dict) -> dict:
    """A gemm_async's params as on 0.27: ``trans_a``, ``trans_b``, ``accum`` (bools), and the options given
    (``wait``, ``proxy_fence``) as constants."""
    trans_a, trans_b, accum = flags
    try:
        params = {"trans_a": bool(int(trans_a)), "trans_b": bool(int(trans_b)), "accum": bool(int(accum))}
    except (TypeError, ValueError):
        raise NotDescribable(f"gemm_async: trans_a {trans_a}, trans_b {trans_b} and accum {accum} must be "
                             "constants") from None
    for name, value in options.items():
        params[name] = _constant(value)
    return params


def describe(op: str, regions: list, scalars: dict, scope_kind: str, sctx, reduction=None,
             extra=None, config=()) -> Described:
    """``regions``: (role, TensorRegion) pairs, dst first; ``scalars``: source position -> scalar expression;
    ``reduction``: a reduction's (axes, accum), as the 0.27 lane's params ``axes`` (each modulo the source's rank,
    sorted) and ``accum``; ``config``: the names of the options given (a copy_async's ``mbar``, ``cta_mask``, a
    gemm_async's ``wait``, ``proxy_fence``), as the 0.27 lane's config keys."""
    operands, layouts, tensors, starts, extents, storage = [], [], {}, {}, {}, {}
    params: dict = {}
    params.update(extra or {})
    if reduction is not None:
        axes, accum = reduction
        rank = len(regions[1][1].source.ty.shape)
        listed = list(axes) if hasattr(axes, "__len__") else [axes]
        try:
            params["axes"] = sorted({int(a) % rank for a in listed})
            params["accum"] = bool(int(accum))
        except (TypeError, ValueError):
            raise NotDescribable(f"{op}: axes {axes} and accum {accum} must be constants") from None
    for role, region in regions:
        tensor = region.source
        ty = tensor.ty
        begins = [r.begin for r in region.region]
        start = [_int_or_none(b) for b in begins]
        if any(s is None for s in start):
            params.setdefault("start_modulus", {})[role] = [
                _modulus(b) if s is None else None for b, s in zip(begins, start)]
            params.setdefault("start_text", {})[role] = [str(b) if s is None else None for b, s in zip(begins, start)]
        extent = [_int_or_none(r.extent) for r in region.region]
        if any(e is None for e in extent):
            raise NotDescribable(f"{op}: region of {tensor.name} has a run-time extent {list(region.region)}")
        shape = [_int_or_none(n) for n in ty.shape]
        if any(n is None for n in shape):
            raise NotDescribable(f"{op}: {tensor.name} has a symbolic shape {list(ty.shape)}")
        operands.append({"role": role, "name": str(tensor.name), "dtype": str(ty.dtype.dtype), "shape": shape,
                         "start": start, "extent": extent, "elem_offset": 0})
        layouts.append(layout_of(tensor))
        tensors[role] = tensor
        starts[role] = [b if s is None else s for b, s in zip(begins, start)]
        extents[role] = extent
        storage[role] = str(ty.scope)
    if op in ("copy_async", "gemm_async"):
        params["config"] = sorted(config)   # the call's options (0.27: its config keys); the rules decline the others
    params["storage"] = dict(storage)
    params["align"] = {role: int(t.ty.data_alignment) for role, t in tensors.items()}
    params["arch"] = str(sctx.target.attrs.get("arch", ""))
    threads, full = threads_of(sctx)
    params["threads"] = threads if full else 0
    text = json.dumps({"op": op, "target": "cuda", "scope": scope_kind, "operands": operands, "params": params})
    return Described(op, text, tuple(layouts), tensors, starts, extents, dict(scalars), storage)
