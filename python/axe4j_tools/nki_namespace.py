"""Rewrites the NKI source TVM 0.27's trn pipeline emits (the legacy ``neuronxcc.nki`` namespace, NKI 0.1.0, whose
last Neuron SDK is 2.27) into the current ``nki`` namespace, as documented for NKI 0.3.0 (Neuron SDK 2.29).

Every mapping follows the Neuron documentation (``docs/trainium.md``, "The current nki namespace", names each
source); a construct outside ``MAPPED`` is refused with ``NotImplementedError`` rather than guessed:

- imports ``neuronxcc.nki`` -> ``import nki``, ``import nki.language as nl``, ``import nki.isa as nisa``; the
  ``@baremetal`` / ``@nki.compiler.*`` decorators -> ``@nki.jit``; the ``nt.mutable_tensor`` annotation dropped;
- ``nl.arange`` index grids (removed) -> slices on SBUF/PSUM tiles and ``tensor.ap(pattern=[[stride, count], ...],
  offset=...)`` on the flattened kernel parameters (the ``X.reshape([n])`` views are dropped);
- ``nl.load`` / ``nl.store`` (removed) -> ``nisa.dma_copy(dst=..., src=...)``;
- ``t[...] = nisa.f(...)`` -> ``nisa.f(dst=t[...], ...)``; ``t[...] += nisa.nc_matmul(s, m)`` ->
  ``nisa.nc_matmul(dst=t[...], stationary=s, moving=m, accumulate=True)``; ``t[...] = 0.0`` ->
  ``nisa.memset(dst=t[...], value=0.0)``;
- ``nl.ndarray(shape=<logical>, buffer=ncc.sbuf.mod_alloc(base_addr=b))`` -> ``nl.ndarray(shape=(P, F),
  buffer=nl.sbuf, address=(0, b))`` with TVM's logical shape folded onto the partitions as its allocator sized it
  (``nki_executor``'s TVM reading); PSUM ``[rows, nl.par_dim(cols), cols]`` -> ``(rows, cols)``, ``buffer=nl.psum``
  (block dimensions were removed);
- ``nl.sequential_range(n, ...)`` -> ``range(n)``; ``np.float16`` etc. -> ``nl.float16``.
"""

from __future__ import annotations

import ast

import numpy as np

from . import nki_executor

TARGET = "NKI 0.3.0 (AWS Neuron SDK 2.29): the nki.* namespace"

MAPPED = ("nl.ndarray (SBUF mod_alloc, PSUM)", "nl.arange grids", "nl.sequential_range", "nl.load", "nl.store",
          "nisa.nc_matmul (+=)", "nisa.tensor_copy", "nisa.tensor_tensor", "nisa.tensor_scalar",
          "nisa.tensor_reduce", "nisa.activation", "nisa.reciprocal", "memset by assignment")

HEADER = ["import numpy as np", "import nki", "import nki.language as nl", "import nki.isa as nisa"]

# positional parameters of the legacy calls, named as the current API names them (all take dst first)
_POSITIONAL = {
    "tensor_copy": ("src",), "tensor_tensor": ("data1", "data2", "op"), "tensor_scalar": ("data",),
    "tensor_reduce": (), "activation": (), "reciprocal": ("data",),
}
_RENAMED_KEYWORDS = {"tensor_copy": {"data": "src"}}
# legacy operator names without a verified current spelling are refused; these are documented in the current API
_OPERATORS = {"add": "nl.add", "multiply": "nl.multiply", "subtract": "nl.subtract", "exp": "nl.exp",
              "maximum": "nl.max", "minimum": "nl.min"}


def _refuse(node, why):
    raise NotImplementedError(f"nki_namespace: {why}: {ast.unparse(node)}")


class _Rewriter:
    def __init__(self):
        self.grids = {}      # arange name -> length
        self.buffers = {}    # flat parameter view name -> parameter name
        self.on_chip = {}    # tensor name -> ("sbuf" | "psum", dtype)

    # -- index expressions ---------------------------------------------------------------------------------------

    def _grid(self, node):
        """(name, axis) of an ``g[:, None]`` (axis 0) / ``g[None, :]`` (axis 1) term, else None."""
        if (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in self.grids
                and isinstance(node.slice, ast.Tuple)):
            parts = node.slice.elts
            if (len(parts) == 2 and isinstance(parts[0], ast.Slice) and isinstance(parts[1], ast.Constant)
                    and parts[1].value is None):
                return node.value.id, 0
            if (len(parts) == 2 and isinstance(parts[0], ast.Constant) and parts[0].value is None
                    and isinstance(parts[1], ast.Slice)):
                return node.value.id, 1
            _refuse(node, "an index grid used in an unexpected shape")
        return None

    def _affine(self, node):
        """(constant part as an expression or None, {axis: (grid, coefficient)}) of an index expression."""
        grid = self._grid(node)
        if grid:
            return None, {grid[1]: (grid[0], 1)}
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            lc, lt = self._affine(node.left)
            rc, rt = self._affine(node.right)
            if set(lt) & set(rt):
                _refuse(node, "one axis indexed by two grids")
            const = lc if rc is None else rc if lc is None else ast.BinOp(lc, ast.Add(), rc)
            return const, {**lt, **rt}
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            for term, factor in ((node.left, node.right), (node.right, node.left)):
                grid = self._grid(term)
                if grid and isinstance(factor, ast.Constant) and isinstance(factor.value, int):
                    return None, {grid[1]: (grid[0], factor.value)}
        if any(self._grid(n) for n in ast.walk(node) if isinstance(n, ast.Subscript)):
            _refuse(node, "an index that is not affine in its grids")
        return node, {}

    def _tile(self, node):
        """``t[p, f]`` (SBUF) or ``t[bank, p, f]`` (PSUM) with grids -> ``t[p0:p1, f0:f1]``."""
        name = node.value.id
        space, dtype = self.on_chip[name]
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if space == "psum":
            if len(parts) != 3:
                _refuse(node, "a PSUM tile not indexed [bank, P, F]")
            bank, parts = parts[0], parts[1:]
        elif len(parts) != 2:
            _refuse(node, "an SBUF tile not indexed [P, F]")
        slices = []
        for axis, part in enumerate(parts):
            const, terms = self._affine(part)
            if space == "psum" and axis == 1 and not (isinstance(bank, ast.Constant) and bank.value == 0):
                per_bank = nki_executor.PSUM_BANK_BYTES // np.dtype(dtype).itemsize
                shift = ast.BinOp(bank, ast.Mult(), ast.Constant(per_bank))
                const = shift if const is None else ast.BinOp(const, ast.Add(), shift)
            start = ast.unparse(const) if const is not None else "0"
            if not terms:
                slices.append(f"{start}:{int(start) + 1}" if start.isdigit() else f"{start}:{start} + 1")
                continue
            if set(terms) != {axis}:
                _refuse(node, "a tile whose partition grid is not its first index")
            grid, step = terms[axis]
            count = self.grids[grid]
            if start == "0":
                slices.append(f"0:{count * step}" + (f":{step}" if step != 1 else ""))
            else:
                slices.append(f"{start}:{start} + {count * step}" + (f":{step}" if step != 1 else ""))
        return f"{name}[{', '.join(slices)}]"

    def _hbm(self, node):
        """``X_buffer[flat index]`` -> ``X.ap(pattern=[[stride, count], [stride, count]], offset=...)``."""
        const, terms = self._affine(node.slice)
        pattern = []
        for axis in (0, 1):
            grid, stride = terms.get(axis, (None, 1))
            pattern.append([stride, self.grids[grid] if grid else 1])
        offset = ast.unparse(const) if const is not None else "0"
        return f"{self.buffers[node.value.id]}.ap(pattern={pattern}, offset={offset})"

    def operand(self, node):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            if node.value.id in self.on_chip:
                return self._tile(node)
            if node.value.id in self.buffers:
                return self._hbm(node)
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute)
                and ast.unparse(node.value) == "nki.language"):
            if node.attr not in _OPERATORS:
                _refuse(node, "an operator without a documented current name")
            return _OPERATORS[node.attr]
        try:
            ast.literal_eval(node)   # a number, a sign on one, a tuple of them
        except ValueError:
            _refuse(node, "an operand")
        return ast.unparse(node)

    # -- statements ----------------------------------------------------------------------------------------------

    def _declaration(self, target, call):
        keywords = {k.arg: k.value for k in call.keywords}
        shape_node, dtype_node, buffer = keywords["shape"], keywords["dtype"], keywords["buffer"]
        dims = []
        for d in shape_node.elts:
            if isinstance(d, ast.Call) and ast.unparse(d.func) == "nl.par_dim":
                dims.append(nki_executor._ParDim(ast.literal_eval(d.args[0])))
            else:
                dims.append(ast.literal_eval(d))
        dtype = ast.unparse(dtype_node).replace("np.", "")
        np.dtype(dtype)
        written = "[" + ", ".join(str(int(d)) for d in dims) + "]"
        if isinstance(buffer, ast.Call) and ast.unparse(buffer.func) == "ncc.sbuf.mod_alloc":
            base = {k.arg: ast.literal_eval(k.value) for k in buffer.keywords}
            if set(base) != {"base_addr"}:
                _refuse(call, "an SBUF allocation other than mod_alloc(base_addr=...)")
            _, partitions, free = nki_executor._extent(target, "sbuf", dims, written, "tvm")
            self.on_chip[target] = ("sbuf", dtype)
            return (f"{target} = nl.ndarray(shape=({partitions}, {free}), dtype=nl.{dtype}, buffer=nl.sbuf, "
                    f"address=(0, {base['base_addr']}))")
        if ast.unparse(buffer) == "nl.psum":
            _, partitions, free = nki_executor._extent(target, "psum", dims, written, "tvm")
            self.on_chip[target] = ("psum", dtype)
            return f"{target} = nl.ndarray(shape=({partitions}, {free}), dtype=nl.{dtype}, buffer=nl.psum)"
        _refuse(call, "a buffer other than ncc.sbuf.mod_alloc or nl.psum")

    def _isa(self, dst, call):
        name = ast.unparse(call.func).removeprefix("nisa.")
        if name not in _POSITIONAL:
            _refuse(call, "an instruction outside MAPPED")
        args = [f"dst={dst}"]
        positional = _POSITIONAL[name]
        if len(call.args) > len(positional):
            _refuse(call, "more positional arguments than mapped")
        args += [f"{p}={self.operand(a)}" for p, a in zip(positional, call.args)]
        for k in call.keywords:
            key = _RENAMED_KEYWORDS.get(name, {}).get(k.arg, k.arg)
            value = self.operand(k.value)
            if name == "tensor_reduce" and key == "axis":
                if ast.literal_eval(k.value) not in ((-1,), (1,), -1, 1):
                    _refuse(call, "a reduction over other than the last free axis")
                value = "(1,)"   # the current API names the most minor free axis of a [P, F] tile 1
            args.append(f"{key}={value}")
        if name == "tensor_reduce":
            args.append("keepdims=True")   # dst keeps one element per partition
        return f"nisa.{name}({', '.join(args)})"

    def statement(self, node, indent):
        pad = "  " * indent
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
            if isinstance(target, ast.Name) and isinstance(value, ast.Call):
                func = ast.unparse(value.func)
                if func == "nl.arange":
                    self.grids[target.id] = ast.literal_eval(value.args[0])
                    return []
                if func.endswith(".reshape") and isinstance(value.func.value, ast.Name):
                    self.buffers[target.id] = value.func.value.id
                    return []
                if func == "nl.ndarray":
                    return [pad + self._declaration(target.id, value)]
            if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) \
                    and target.value.id in self.on_chip:
                dst = self._tile(target)
                if isinstance(value, ast.Call) and ast.unparse(value.func) == "nl.load":
                    return [pad + f"nisa.dma_copy(dst={dst}, src={self.operand(value.args[0])})"]
                if isinstance(value, ast.Call) and ast.unparse(value.func).startswith("nisa."):
                    return [pad + self._isa(dst, value)]
                if isinstance(value, ast.Constant):
                    return [pad + f"nisa.memset(dst={dst}, value={value.value!r})"]
        if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add) and isinstance(node.value, ast.Call) \
                and ast.unparse(node.value.func) == "nisa.nc_matmul" and isinstance(node.target, ast.Subscript):
            s, m = node.value.args
            return [pad + f"nisa.nc_matmul(dst={self._tile(node.target)}, stationary={self.operand(s)}, "
                          f"moving={self.operand(m)}, accumulate=True)"]
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) \
                and ast.unparse(node.value.func) == "nl.store":
            dst, src = node.value.args
            return [pad + f"nisa.dma_copy(dst={self.operand(dst)}, src={self.operand(src)})"]
        if isinstance(node, ast.For) and isinstance(node.iter, ast.Call) \
                and ast.unparse(node.iter.func) in ("nl.sequential_range", "nl.affine_range") and not node.orelse:
            lines = [pad + f"for {ast.unparse(node.target)} in range({ast.unparse(node.iter.args[0])}):"]
            for child in node.body:
                lines += self.statement(child, indent + 1)
            return lines
        if isinstance(node, ast.Return):
            return [pad + ast.unparse(node)]
        _refuse(node, "a statement outside MAPPED")


def to_current(source: str) -> str:
    """``source`` (TVM 0.27's NKI, ``neuronxcc.nki``) rewritten for the current ``nki`` namespace (``TARGET``);
    raises ``NotImplementedError`` naming the first construct it does not map."""
    tree = ast.parse(source)
    kernels = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    if len(kernels) != 1:
        raise NotImplementedError(f"nki_namespace: expected one kernel function, found {len(kernels)}")
    kernel = kernels[0]
    rewriter = _Rewriter()
    params = ", ".join(a.arg for a in kernel.args.args)
    lines = [*HEADER, "", "", "@nki.jit", f"def {kernel.name}({params}):"]
    for node in kernel.body:
        lines += rewriter.statement(node, 1)
    return "\n".join(lines) + "\n"
