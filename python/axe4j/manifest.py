"""The manifest ``export_library`` writes beside a library, ``<lib>.manifest.json``: what a service needs to call it.

::

    {"format": 1, "library": "gemm.so",
     "device": {"kind": "cpu", "target": "llvm -mcpu=..."}          or {"kind": "cuda", "arch": "sm_90a",
                                                                        "fatbins": "gemm.so.fatbins"}
     "functions": [{"name": "matmul",
                    "args": [{"name": "A", "shape": [33, 47], "dtype": "float32", "role": "input"}, ...]}]}

An argument's role is ``output`` when the function writes it (a ``BufferStore`` into it, or the destination of a
tile call such as ``Tx.gemm(C, ...)``), else ``input``; an argument both read and written in place is ``inout``
only when the caller says so (``roles=``), since reading before writing is not decided here. Derived from the
PrimFunc so that the manifest cannot drift from the code it describes; ``roles`` overrides it per argument.
"""

from __future__ import annotations

import json
from pathlib import Path

MANIFEST_SUFFIX = ".manifest.json"
ROLES = ("input", "output", "inout")
FORMAT = 1


def manifest_of(library) -> Path:
    """The manifest beside a library: ``gemm.so`` has ``gemm.so.manifest.json``."""
    library = Path(library)
    return library.with_name(library.name + MANIFEST_SUFFIX)


def prim_funcs(source) -> dict:
    """``{name: PrimFunc}`` of an IRModule, a PrimFunc (named by its ``global_symbol``) or a dict of them."""
    import tvm

    if isinstance(source, tvm.IRModule):
        return {str(gv.name_hint): func for gv, func in source.functions.items()
                if type(func).__name__ == "PrimFunc"}
    if isinstance(source, dict):
        found = {}
        for value in source.values():
            found.update(prim_funcs(value))
        return found
    if type(source).__name__ == "PrimFunc":
        symbol = source.attrs.get("global_symbol") if source.attrs is not None else None
        if symbol is None:
            raise ValueError("a PrimFunc without a global_symbol attribute: name it with "
                             "func.with_attr('global_symbol', NAME) or pass an IRModule")
        return {str(symbol): source}
    raise TypeError(f"functions= takes an IRModule, a PrimFunc or a dict of them, not {type(source).__name__}")


def written_params(func) -> set[str]:
    """Names of ``func``'s tensor parameters that its body writes: stores into them (or into a buffer declared over
    their data) and tile calls whose destination they are."""
    params = {p.name: p for p in func.params}
    aliases = {}   # declared buffer name -> parameter name, for T.decl_buffer(..., data=P.data)
    written = set()

    def root(var):
        for name, param in params.items():
            if var.same_as(param):
                return name
        return aliases.get(var.name)

    def visit(node):
        kind = type(node).__name__
        if kind == "SeqStmt":
            for stmt in node.seq:
                visit(stmt)
            return
        if kind == "DeclBuffer":
            data = str(node.data)
            for name in params:
                if data == f"{name}.data":
                    aliases[node.buffer.name] = name
        if kind == "BufferStore":
            found = root(node.buffer)
            if found:
                written.add(found)
        elif kind == "TilePrimitiveCall":
            from tvm.tirx.tile_primitive import TilePrimitiveCall

            for region in TilePrimitiveCall.downcast(node).dsts:
                found = root(region.source) if hasattr(region, "source") else None
                if found:
                    written.add(found)
        for field in ("block", "init", "body", "then_case", "else_case"):
            child = getattr(node, field, None)
            if child is not None and not isinstance(child, (int, float, str)):
                visit(child)

    visit(func.body)
    return written


def describe_function(name: str, func, roles: dict | None = None) -> dict:
    """One function's entry: its tensor arguments in order with shape, dtype and role."""
    roles = dict(roles or {})
    written = written_params(func)
    args = []
    for param in func.params:
        if type(param.ty).__name__ != "BufferType":
            raise ValueError(f"function {name}: argument {param.name} is a scalar ({param.ty}); the manifest "
                             "describes tensor arguments only")
        shape = []
        for extent in param.shape:
            if type(extent).__name__ != "IntImm":
                raise ValueError(f"function {name}: argument {param.name} has a symbolic shape "
                                 f"{list(param.shape)}; a served function needs static shapes")
            shape.append(int(extent))
        role = roles.pop(param.name, "output" if param.name in written else "input")
        if role not in ROLES:
            raise ValueError(f"function {name}: role {role!r} of argument {param.name} is not one of {ROLES}")
        args.append({"name": param.name, "shape": shape, "dtype": str(param.dtype), "role": role})
    if roles:
        raise ValueError(f"function {name}: roles= names {sorted(roles)}, which are not its arguments "
                         f"{[p.name for p in func.params]}")
    return {"name": name, "args": args}


def build(library: Path, functions, target=None, cuda_arch: str | None = None, roles: dict | None = None) -> dict:
    """The manifest of ``library`` for the PrimFuncs ``functions`` (see ``prim_funcs``); ``roles`` is
    ``{function: {argument: role}}``."""
    funcs = prim_funcs(functions)
    if not funcs:
        raise ValueError(f"manifest of {library.name}: functions= holds no PrimFunc")
    roles = dict(roles or {})
    unknown = sorted(set(roles) - set(funcs))
    if unknown:
        raise ValueError(f"manifest of {library.name}: roles= names functions {unknown}, not among {sorted(funcs)}")
    if cuda_arch is not None:
        device = {"kind": "cuda", "arch": cuda_arch, "fatbins": library.name + ".fatbins"}
    else:
        device = {"kind": "cpu", "target": str(target) if target is not None else "llvm"}
    return {"format": FORMAT, "library": library.name, "device": device,
            "functions": [describe_function(name, funcs[name], roles.get(name)) for name in sorted(funcs)]}


def write(library: Path, manifest: dict) -> Path:
    path = manifest_of(library)
    path.write_text(json.dumps(manifest, indent=1) + "\n")
    return path
