"""make nccl-bundle: the NCCL executor with plans made here, for a GPU machine without a JDK or TVM.

Writes ``out/nccl-bundle/``: ``libaxe4j_nccl.so`` (``native/nccl/build.sh``), the binding ``nccl_runtime.py`` and
the plan decoder ``mpi_exec.py`` (numpy only), ``run.py`` (``tools/nccl-bundle/run.py``) and ``plans/*.json``: every
named redistribution for worlds of 1, 2 and 4 ranks (meshes 1, 2, 4 and 2x2) at each element width, plus one
1024x1024 reduce-scatter per width that the runner times. Run there, from the directory above ``out``::

    python out/nccl-bundle/run.py --out out/nccl-results            # the 1-rank world, one GPU
    mpirun -np 4 python out/nccl-bundle/run.py --out out/nccl-results  # 4 ranks, one GPU each

usage: nccl_bundle.py [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 8 << 20  # the bundle stays a few MiB
WIDTHS = (1, 2, 4, 8)
MESHES = ([1], [2], [4], [2, 2])


def plans() -> dict:
    """name -> plan, for every named request on each mesh and width, and the timed 1024x1024 plans."""
    import tvm  # noqa: F401  (TVM before the JVM)

    sys.path.insert(0, str(ROOT / "python"))
    from axe4j import mesh
    from axe4j.mesh.cases import named_requests

    out = {}
    for shape in MESHES:
        label = "x".join(map(str, shape))
        for width in WIDTHS:
            for name, req in named_requests(shape, [16, 8] if len(shape) == 1 else [8, 8], width).items():
                out[f"{label}/{width}B/{name}"] = mesh.plan(req)
    for width in WIDTHS:
        for n, shape in ((1, [1]), (2, [2]), (4, [4])):
            req = {"mesh": {"shape": shape}, "global_shape": [1024, 1024], "element_bytes": width,
                   "src": {"placements": "[Partial()]"}, "dst": {"placements": "[Shard(0)]"}}
            out[f"timed/{n}/{width}B/partial->shard 1024x1024"] = mesh.plan(req)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "out" / "nccl-bundle"))
    out = Path(parser.parse_args().out)
    done = subprocess.run(["bash", "native/nccl/build.sh"], cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"native/nccl/build.sh failed:\n{done.stderr[-4000:]}")
    if out.exists():
        shutil.rmtree(out)
    (out / "plans").mkdir(parents=True)
    shutil.copy2(ROOT / "native" / "build" / "libaxe4j_nccl.so", out)
    shutil.copy2(ROOT / "python" / "axe4j" / "mesh" / "nccl_runtime.py", out)
    shutil.copy2(ROOT / "python" / "axe4j" / "mesh" / "mpi_exec.py", out)
    shutil.copy2(ROOT / "tools" / "nccl-bundle" / "run.py", out)
    index = []
    for i, (name, plan) in enumerate(plans().items()):
        file = f"plans/{i:03d}.json"
        (out / file).write_text(json.dumps(plan, separators=(",", ":")))
        index.append({"name": name, "file": file, "world": len(plan["ranks"]),
                      "element_bytes": plan["element_bytes"], "timed": name.startswith("timed/")})
    (out / "plans" / "index.json").write_text(json.dumps(index, indent=1))
    size = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    if size > LIMIT:
        sys.exit(f"nccl bundle is {size / 2**20:.1f} MiB, over its {LIMIT >> 20} MiB limit")
    print(f"{out}: {len(index)} plans, {size / 2**20:.2f} MiB")


if __name__ == "__main__":
    main()
