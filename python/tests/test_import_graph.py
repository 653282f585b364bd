"""The modules of ``python/axe4j`` import one another without a circle.

Every module is parsed (``ast``, nothing is imported); an edge is any ``import``/``from ... import`` of an axe4j
module, at module level or inside a function, relative imports resolved. ``from pkg import name`` is an edge to
``pkg.name`` when that is a module, else to ``pkg``. An import of a package is an edge to its ``__init__``, except an
import of a package by a module inside it (``from . import install`` in ``axe4j.compile``, ``import axe4j`` in
``axe4j.trn.kernels.gemm``): by then Python has the package half-built in ``sys.modules``, and the name read from
it (``install``) is defined before any submodule runs; that edge cannot make a circle of the kind this test is for.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "axe4j"


def module_name(path: Path, root: Path = PACKAGE) -> str:
    parts = [root.name, *path.relative_to(root).with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules(root: Path = PACKAGE) -> dict[str, tuple[Path, ast.Module]]:
    return {module_name(p, root): (p, ast.parse(p.read_text(), str(p))) for p in sorted(root.rglob("*.py"))}


def _resolve(name: str, path: Path, level: int, module: str | None) -> str:
    """The absolute module a ``from`` import of ``level`` dots names, seen from module ``name`` at ``path``."""
    if level == 0:
        return module or ""
    base = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    base = base[:len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def imports(name: str, path: Path, tree: ast.Module, known: set[str]) -> set[str]:
    """The axe4j modules that ``name`` imports anywhere in its text (functions included)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            source = _resolve(name, path, node.level, node.module)
            targets = [f"{source}.{a.name}" if f"{source}.{a.name}" in known else source for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:   # import axe4j.cuda.emit.x -> the longest known prefix
                target = target.rpartition(".")[0]
            if target and target != name and not name.startswith(target + "."):
                found.add(target)
    return found


def graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """{module: the axe4j modules it imports}."""
    parsed = modules(root)
    known = set(parsed)
    return {name: imports(name, path, tree, known) for name, (path, tree) in parsed.items()}


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One circle of ``edges`` as [a, b, ..., a], or None (depth-first search, white/grey/black)."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def test_find_cycle_on_small_graphs():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"x": {"y"}, "y": {"y2"}, "y2": {"y"}}) == ["y", "y2", "y"]


def test_resolves_relative_and_function_level_imports(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from .sub import b\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "b.py").write_text("from ..a import f\n")
    (pkg / "old.py").write_text("X = 1\n")
    (pkg / "c.py").write_text("import pkg.old\n")
    edges = graph(pkg)
    assert edges["pkg.a"] == {"pkg.sub.b"} and edges["pkg.sub.b"] == {"pkg.a"}
    assert edges["pkg.c"] == {"pkg.old"}
    assert find_cycle(edges) == ["pkg.a", "pkg.sub.b", "pkg.a"]


def test_no_import_circle():
    edges = graph()
    assert "axe4j.dispatch" in edges and "axe4j.cuda.emit" in edges
    cycle = find_cycle(edges)
    assert cycle is None, "import circle: " + " -> ".join(cycle)


def emitter_modules(root: Path = PACKAGE) -> set[str]:
    """The modules named by the ``EMITTER_MODULES`` of each package (``axe4j._registry`` imports them by name)."""
    found = set()
    for name, (path, tree) in modules(root).items():
        for node in tree.body:
            if (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "EMITTER_MODULES"
                                                     for t in node.targets)):
                found.update(f"{name}.{m}" for m in ast.literal_eval(node.value))
    return found


def test_only_a_target_package_imports_its_emitters():
    edges = graph()
    emitters = emitter_modules()
    assert {"axe4j.cpu.emit", "axe4j.cuda.tma_emit", "axe4j.trn.emit"} <= emitters
    bad = sorted(f"{name} imports {target}" for name, targets in edges.items() for target in targets & emitters
                 if name.rpartition(".")[0] != target.rpartition(".")[0])
    assert not bad, "emitters are found through axe4j._registry, not imported: " + "; ".join(bad)
